"""The wrapper around Inductor's ``compile_fx`` that records each compile's dynamo graph
(``runner/dynamo_graphs.py``): what carries a cached module's lines over to a later run. The
recorder installs it at the first structured record it receives, and on torch 2.8 that record
comes while ``torch._inductor.compile_fx`` is still being imported (the import warms the compile
pool, which logs a timing record), before the function exists. Installing then used to give up
for good: every compile of the process went unrecorded, and every cache hit lost its lines."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")


def test_a_call_during_compile_fx_s_import_leaves_the_wrapping_to_the_next(monkeypatch):
    """Synthetic: the module without its function, as while it is imported; then the function
    there, and a real compile through it is recorded by compile id."""
    import torch._inductor.compile_fx as cfx

    from inductor_bench.runner.dynamo_graphs import DynamoGraphs

    real = cfx.compile_fx
    if getattr(real, DynamoGraphs.WRAPPED, False):  # an earlier recorder of this process's
        real = real.__wrapped__
    monkeypatch.delattr(cfx, "compile_fx")
    graphs = DynamoGraphs()
    graphs.install()
    assert not graphs.installed
    monkeypatch.setattr(cfx, "compile_fx", real, raising=False)
    graphs.install()
    assert graphs.installed and getattr(cfx.compile_fx, DynamoGraphs.WRAPPED) is True

    torch._dynamo.reset()
    try:
        out = torch.compile(lambda x: torch.sin(x) + 1)(torch.ones(4))
    finally:
        torch._dynamo.reset()
    assert torch.equal(out, torch.sin(torch.ones(4)) + 1)
    (nodes,) = graphs.by_compile.values()
    assert [rec["op"] for rec in nodes.values()] == ["call_function:_VariableFunctionsClass.sin",
                                                     "call_function:add"]


def _stack(*frames: tuple[str, int, str, str]) -> str:
    """A synthetic FX ``stack_trace``: each frame as Python prints it, outermost first."""
    return "".join(f'  File "{f}", line {n}, in {fn}\n    {code}\n' for f, n, fn, code in frames)


def test_a_nodes_line_is_the_models_never_dynamos_own_wrapper():
    """Synthetic stack traces under this torch's own directory: the model's innermost frame
    wins; where every frame is torch's, the innermost outside Dynamo (an ``nn`` layer's line);
    Dynamo's wrapper of a compiled module (torch 2.5 writes ``external_utils.py``'s
    ``return fn(*args, **kwargs)`` as the only frame of an ``nn.Sequential``'s nodes) is no line."""
    pytest.importorskip("torch")
    from inductor_bench.runner.dynamo_graphs import _torch_dir, user_frame

    wrapper = (f"{_torch_dir()}_dynamo/external_utils.py", 40, "inner", "return fn(*args, **kwargs)")
    linear = (f"{_torch_dir()}nn/modules/linear.py", 125, "forward", "return F.linear(input, self.weight, self.bias)")
    model = ("/home/me/model.py", 12, "forward", "return self.fc(x)")
    assert user_frame(_stack(wrapper, model, linear)) == ["/home/me/model.py", 12, "forward", "return self.fc(x)"]
    assert user_frame(_stack(wrapper, linear)) == [linear[0], 125, "forward", linear[3]]
    assert user_frame(_stack(wrapper)) is None
    assert user_frame(None) is None


def test_a_nodes_callers_are_the_frames_outside_torch_around_its_line():
    """After the node's line, the frames outside torch that called it, innermost first, at most
    ``CALLERS_KEPT``; torch's own frames between them are skipped, and a line of torch's own
    layer (every frame torch's) has no callers."""
    pytest.importorskip("torch")
    from inductor_bench.runner.dynamo_graphs import CALLERS_KEPT, _torch_dir, user_frames

    linear = (f"{_torch_dir()}nn/modules/linear.py", 125, "forward", "return F.linear(input, self.weight, self.bias)")
    lib = ("/site/lib/conv1d.py", 119, "forward", "x = torch.addmm(self.bias, x, self.weight)")
    outer = [("/home/me/model.py", n, "forward", f"x = self.step{n}(x)") for n in range(10, 10 + CALLERS_KEPT + 1)]
    got = user_frames(_stack(*outer, linear, lib))
    assert got == [list(lib), *([*f] for f in outer[::-1][:CALLERS_KEPT])]
    assert [f[1] for f in got] == [119, 13, 12, 11]
    assert user_frames(_stack(linear)) == [list(linear)] and user_frames(None) == []
    # a list comprehension's frame and the forward it is written in: one line, then its caller
    comp = [(outer[0][0], 20, "forward", "ys = [f(x) for f in self.fs]"),
            (outer[0][0], 20, "<listcomp>", "ys = [f(x) for f in self.fs]")]
    assert [f[1] for f in user_frames(_stack(outer[0], *comp, lib))] == [119, 20, 10]
