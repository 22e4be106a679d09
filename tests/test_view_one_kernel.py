"""The views by module and by source line name the kernel of a group that holds one (its calls
at several places too), as the kernel and op views name each row's: a row of one fused kernel
read only ``1`` in its kernels column, and the user had to look the kernel up elsewhere."""

from __future__ import annotations

import math
import re

import pytest

from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat
from inductor_bench.core.sources import CallSite, Origin, SourceLine
from inductor_bench.core.views import by_line, by_module, step_units
from inductor_bench.render.breakdown import render_breakdown


def _origin(module: str, line: int) -> Origin:
    return Origin(modules=[module], lines=[SourceLine("/m/net.py", line, "forward", f"line {line}")])


def _result() -> BreakdownResult:
    """Synthetic: a training step. fc1 runs one fused kernel; fc2 an addmm and a fused kernel;
    the addmm of fc3 is called at two places of fc3 (one op, two calls); the backward graph has
    a kernel named as one of the forward's (cpp_fused_relu_0), in fc1 + fc2."""
    relu = KernelStat("cpp_fused_relu_0", "cpp_pointwise", 1, 0.25, origin=_origin("fc1", 5))
    add = KernelStat("cpp_fused_add_1", "cpp_pointwise", 1, 0.5, origin=_origin("fc2", 6))
    mm = KernelStat("aten::addmm", "extern_gemm", 3, 3.5)
    sites = [CallSite("aten::addmm", 0, "extern_kernels.addmm", 1, 2.0, origin=_origin("fc2", 6)),
             CallSite("aten::addmm", 1, "extern_kernels.addmm", 1, 1.0, origin=_origin("fc3", 7)),
             CallSite("aten::addmm", 2, "extern_kernels.addmm", 1, 0.5, origin=_origin("fc3", 7))]
    fwd = GraphResult("0-forward", "forward", iterations=1, wall_ms=5.0, kernel_ms=4.25, busy_ms=4.25,
                      categories={"cpp_pointwise": 0.75, "extern_gemm": 3.5}, kernels=[relu, add, mm],
                      sites=sites, module_types={"fc1": "Linear", "fc2": "Linear", "fc3": "Linear"})
    both = Origin(modules=["fc1", "fc2"], lines=[SourceLine("/m/net.py", 5), SourceLine("/m/net.py", 6)])
    back = KernelStat("cpp_fused_relu_0", "cpp_pointwise", 1, 0.125, origin=both)
    bwd = GraphResult("0-backward", "backward", iterations=1, wall_ms=1.0, kernel_ms=0.125, busy_ms=0.125,
                      categories={"cpp_pointwise": 0.125}, kernels=[back])
    return BreakdownResult("net.py", train=True, graphs=[fwd, bwd])


def _view_rows(text: str, heading: str) -> list[tuple[str, str]]:
    """Each group's row of a text view below ``heading`` (its total row left out): its ms and
    kernel cells, the columns read from the header's dashes."""
    lines = text.splitlines()
    top = next(i for i, ln in enumerate(lines) if ln.startswith(heading)) + 3
    spans = [m.span() for m in re.finditer(r"-+", lines[top + 1])]
    names = [lines[top][a:b].strip() for a, b in spans]
    (ms_at, kernel_at) = (spans[names.index("ms")], spans[names.index("kernel")])
    stop = next(i for i in range(top, len(lines)) if lines[i].startswith("total"))
    return [(ln[slice(*ms_at)].strip(), ln[slice(*kernel_at)].strip()) for ln in lines[top + 2:stop]
            if ln[slice(*ms_at)].strip()]


def test_a_group_of_one_kernel_is_that_kernels_units():
    us = step_units(_result(), kernel_calls=True)
    named = {g.key: g.one_kernel and g.one_kernel.kernel.name for g in by_module(us)}
    # fc3: one op's two calls; fc2: two kernels; fc1 + fc2: the backward's kernel alone
    assert named == {("fc3",): "aten::addmm", ("fc2",): None, ("fc1",): "cpp_fused_relu_0",
                     ("fc1", "fc2"): "cpp_fused_relu_0"}


@pytest.mark.parametrize("by,heading", [("module", "Time by module"), ("line", "Time by source line")])
def test_the_views_name_a_groups_one_kernel(by, heading):
    r = _result()
    rows = _view_rows(render_breakdown(r, by=by), heading)
    # by ms: fc2 (2.0 + 0.5), fc3 (1.0 + 0.5), fc1 (0.25), fc1 + fc2 (0.125); the relu kernel's
    # name is in both graphs, so its graph is said
    assert rows == [("2.500", ""), ("1.500", "aten::addmm"), ("0.250", "cpp_fused_relu_0 (0-forward)"),
                    ("0.125", "cpp_fused_relu_0 (0-backward)")]
    groups = by_module(step_units(r, kernel_calls=True)) if by == "module" else by_line(
        step_units(r, kernel_calls=True))
    assert math.isclose(sum(g.ms for g in groups), 4.25 + 0.125)


def test_markdown_names_the_kernel_as_code_and_says_what_the_column_is():
    out = render_breakdown(_result(), "markdown", by="module")
    row = next(ln for ln in out.splitlines() if "fc3 (Linear)" in ln and ln.startswith("|"))
    assert [c.strip() for c in row.split("|")][7] == "`aten::addmm`"
    assert "kernel = the group's kernel or extern op, where it holds one" in out


def test_no_kernel_named_no_word_on_the_column():
    """Synthetic: every group of several kernels: the column is empty and the note says nothing of it."""
    r = _result()
    r.graphs = r.graphs[:1]
    r.graphs[0].kernels = r.graphs[0].kernels[1:]  # fc2's add and the addmm's calls
    r.graphs[0].sites = [s for s in r.graphs[0].sites if s.index == 0] + [
        CallSite("aten::addmm", 1, "extern_kernels.addmm", 1, 1.0, origin=_origin("fc2", 6))]
    out = render_breakdown(r, by="module")
    assert "kernel = the group's kernel" not in out
    assert _view_rows(out, "Time by module") == [("3.500", "")]
