"""Source attribution end to end on the installed torch (CPU, training): the compile worker
records what each module was made from, and every extern call of densenet and the transformer
block names its module path and source line; the views add up to the kernel time."""

from __future__ import annotations

import pytest

from inductor_bench.core.rundir import SOURCES_FILE, SOURCES_LOG, load_any
from inductor_bench.core.views import by_line, by_module, units
from inductor_bench.render.breakdown import render_breakdown

from .conftest import FIXTURES

pytestmark = pytest.mark.e2e


def _line(text: str) -> int:
    lines = (FIXTURES / "models" / "attr_net.py").read_text().splitlines()
    return next(i for i, ln in enumerate(lines, 1) if text in ln)


def test_a_known_line_maps_to_its_kernels_forward_and_backward(attr_train):
    result, run_dir, err = attr_train
    assert err is None
    conv2 = _line("y = self.conv2(y)")
    fwd = next(g for g in result.graphs if g.role == "forward")
    bwd = next(g for g in result.graphs if g.role == "backward")
    for g, op in ((fwd, "aten::convolution"), (bwd, "aten::convolution_backward")):
        at = [s for s in g.sites if [ln.line for ln in s.origin.lines] == [conv2]]
        assert [s.kernel for s in at] == [op, op]
        assert sorted(m for s in at for m in s.origin.modules) == ["blocks.0.conv2", "blocks.1.conv2"]
    assert (run_dir / SOURCES_LOG).exists()
    assert all((run_dir / "graphs" / g.id / SOURCES_FILE).exists() for g in result.graphs)
    # saved and re-read: the report's view by line comes from breakdown.json alone
    out = render_breakdown(load_any(run_dir), by="line")
    assert f"attr_net.py:{conv2}" in out and "y = self.conv2(y)" in out


@pytest.mark.parametrize("fixture", ["densenet_train", "transformer_train"])
def test_every_extern_call_names_module_and_line(request, fixture):
    result, run_dir, err = request.getfixturevalue(fixture)
    assert err is None
    for g in result.measured():
        split = {s.kernel for s in g.sites}
        externs = [k for k in g.kernels if k.origin is not None and k.name not in split and "cpp_" not in k.name]
        assert not [k.name for k in externs if k.name.startswith(("aten::", "mkldnn::"))], g.attribution
        for s in g.sites:
            # a module path each ("" is the model itself: its own forward calls the op, as
            # the transformer block's attention)
            assert s.origin and s.origin.lines and s.origin.modules, (g.id, s)
        for k in g.kernels:
            assert k.origin is not None, k.name
    us = units(result.measured())
    total = result.totals().kernel_ms
    assert sum(u.ms for u in us) == pytest.approx(total, rel=1e-9)
    for groups in (by_line(us), by_module(us), by_module(us, 2)):
        assert sum(grp.ms for grp in groups) == pytest.approx(total, rel=1e-9)
