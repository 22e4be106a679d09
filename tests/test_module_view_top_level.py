"""The view by module names a group by its modules first and the compiled function's own code
(``(top level)``) last: kernels that fuse a module's work with code outside every module
(``gelu(self.fc2(x))``, ``self.norm(gelu(...))``) read as the modules they ran in, not as
four rows that all begin ``(top level)``."""

from __future__ import annotations

import math

from inductor_bench.core.results import GraphResult, KernelStat
from inductor_bench.core.rundir import load_any
from inductor_bench.core.sources import Origin
from inductor_bench.core.views import Unit, by_module, step_units
from inductor_bench.render.breakdown import render_breakdown

from .conftest import FIXTURES

# recorded with torch 2.13 CPU on 2026-12-07: models/mlp.py trained (fc1, LayerNorm, fc2, fc3,
# functional gelu at the top level of MLP.forward)
MLP_TRAIN = FIXTURES / "results" / "cpu_mlp_train_20261207"


def _module_view(text: str) -> tuple[list[str], list[str]]:
    """The rows of the view by module (its total row left out), and their module cells."""
    lines = text.splitlines()
    header = next(i for i, ln in enumerate(lines) if ln.startswith("Time by module")) + 3
    column = lines[header].index("module")
    end = next(i for i in range(header, len(lines)) if lines[i].startswith("total"))
    rows = [ln.rstrip() for ln in lines[header + 2:end]]
    return rows, [ln[column:] for ln in rows]


def test_the_recorded_mlp_trains_groups_name_their_modules_before_the_top_level():
    r = load_any(MLP_TRAIN)
    us = step_units(r, kernel_calls=True)
    groups = by_module(us)
    assert [(g.key, sorted(u.kernel.name + u.site_mark for u in g.units)) for g in groups] == [
        (("fc2",), ["aten::addmm #1", "aten::mm #2", "aten::mm #3"]),
        (("fc1",), ["aten::addmm #0", "aten::mm #4", "cpp_fused_sum_2"]),
        (("fc3",), ["aten::addmm #2", "aten::mm #0", "aten::mm #1"]),
        (("fc2", "norm", ""), ["cpp_fused_gelu_gelu_backward_native_layer_norm_native_layer_norm_backward_sum_1"]),
        (("norm", ""), ["cpp_fused_gelu_native_layer_norm_0"]),
        (("fc3", ""), ["cpp_fused_gelu_gelu_backward_sum_0"]),
        (("",), ["cpp_fused_gelu_1"]),
    ]
    # every kernel and extern call in one group: the groups add up to the kernel time
    kernel_ms = math.fsum(g.kernel_ms * r.weights()[g.id] for g in r.measured())
    assert math.isclose(math.fsum(g.ms for g in groups), kernel_ms, rel_tol=1e-12)
    rows, modules = _module_view(render_breakdown(r, by="module"))
    assert modules == [
        "fc2 (Linear)", "fc1 (Linear)", "fc3 (Linear)",
        "fc2 (Linear)", "+ norm (LayerNorm)", "+ (top level)",
        "norm (LayerNorm)", "+ (top level)",
        "fc3 (Linear)", "+ (top level)",
        "(top level)",
    ]
    # only the kernel of the function's own code alone is read as the top level's
    assert [ln.split()[1] for ln in rows if ln.endswith("  (top level)")] == ["0.017"]


def test_a_named_top_level_and_a_cut_path_go_after_the_modules():
    """Synthetic: the top level of one of several compiled functions (``(top level of step)``)
    and modules cut to depth 1 keep the same order: the modules, then the function's code."""
    g = GraphResult(id="0-forward", role="forward", module_types={"blocks.0.fc": "Linear"})
    k = KernelStat(name="cpp_fused_add_gelu_0", category="cpp_pointwise", calls=1, ms=0.5)
    u = Unit(g, k, 0.5, 1, Origin(modules=["", "blocks.10.fc", "blocks.2.fc", "head"]))
    roots = {"0-forward": "(top level of step)"}
    assert [grp.key for grp in by_module([u], roots=roots)] == [
        ("blocks.2.fc", "blocks.10.fc", "head", "(top level of step)")]
    assert [grp.key for grp in by_module([u], 1, roots)] == [("blocks", "head", "(top level of step)")]
