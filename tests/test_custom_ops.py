"""Custom ops stay visible to the profiler (runner/custom_ops.py): torch 2.14 and later call a
``torch.library.custom_op`` with a Python kernel through a path that skips the dispatcher and
the profiler's record of the op; the workers turn it off."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")


def test_the_fast_path_is_turned_off_for_ops_made_before_and_after(monkeypatch):
    """On a stand-in for torch 2.14's switch (synthetic: the installed torch may not have it):
    an op made before is turned off, one made after never turned on, and a second call changes
    nothing."""
    from torch._library import custom_ops as torch_custom_ops
    from torch._ops import OpOverload

    from inductor_bench.runner.custom_ops import keep_custom_ops_visible

    calls = []

    class Overload:
        def __init__(self, on):
            self.on = on

        def _is_pyobj_dispatcher_enabled(self):
            return self.on

    def switch(self, enabled=True):
        calls.append((self, enabled))
        self.on = enabled

    monkeypatch.setattr(OpOverload, "_enable_pyobj_dispatch", switch, raising=False)
    before, plain = Overload(True), Overload(False)
    defs = {"ns::before": type("Def", (), {"_opoverload": before})(),
            "ns::plain": type("Def", (), {"_opoverload": plain})()}
    monkeypatch.setattr(torch_custom_ops, "OPDEFS", defs)
    assert keep_custom_ops_visible() == 1
    assert calls == [(before, False)] and not before.on
    after = Overload(False)
    OpOverload._enable_pyobj_dispatch(after, True)  # what torch does when it makes an op
    assert not after.on and calls == [(before, False)]
    OpOverload._enable_pyobj_dispatch(after, False)  # turning off still reaches torch
    assert calls[-1] == (after, False)
    assert keep_custom_ops_visible() == 0  # once per process


def test_the_profiler_records_a_custom_op_made_after_it_as_its_own_call():
    """The installed torch, for real: an op made by ``torch.library.custom_op`` after the switch
    has its own profiler event, with its kernel's ATen op inside it (under torch 2.14 and later,
    without the switch, only the ``aten::mul`` shows, at the top level)."""
    from inductor_bench.runner.custom_ops import keep_custom_ops_visible

    keep_custom_ops_visible()

    @torch.library.custom_op("inductor_bench_test_visible::twice", mutates_args=())
    def twice(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    x = torch.ones(4)
    with torch.profiler.profile() as prof:
        torch.ops.inductor_bench_test_visible.twice.default(x)
    top = [(e.name, [c.name for c in e.cpu_children]) for e in prof.events() if e.cpu_parent is None]
    assert top == [("inductor_bench_test_visible::twice", ["aten::mul"])]
