"""A breakdown's compile lines: what the first call's compile took and found in the Inductor
cache, its phases, and what ``--autotune-top`` found."""

from __future__ import annotations

from ..core import compile_phases, compiles
from ..core.results import BreakdownResult, KernelRetuning, Recompile
from ..core.vocab import Status
from .autotune_step import step_change
from .doc import Doc
from .kernel import render_matches, render_retuning


def compile_lines(doc: Doc, r: BreakdownResult) -> None:
    graphs = [g.id for g in r.graphs]  # a partial cache hit names those that hit and missed
    if r.compile_s is not None:
        cache = f"; {r.compile_cache.describe(graphs)}" if r.compile_cache else ""
        doc.paragraph(f"compile (first call, timed on its own): {r.compile_s:.1f} s{cache}")
    elif r.compile_cache:  # a script: its compiles happen inside its own run, not timed apart
        doc.paragraph(f"compile: {r.compile_cache.describe(graphs)}")
    for line in (compiles.time_line(r), compile_phases.phase_line(r.compiles)):
        if line:
            doc.paragraph(line)
    if isinstance(r.autotune, KernelRetuning):
        render_retuning(doc, r.autotune.rows, r.autotune.total_bound)
    elif isinstance(r.autotune, Recompile):
        _recompile(doc, r.autotune, r.mode)


def _recompile(doc: Doc, a: Recompile, base_mode: str) -> None:
    head = (f"max-autotune recompile (CPU): step {step_change(a, base_mode)}; kernels "
            f"{a.base_kernel_ms:.3f} ms -> {a.tuned_kernel_ms:.3f} ms (the two breakdowns); "
            f"run: {a.tuned_run}")
    if a.tuned_status not in (None, Status.OK):
        head += f" (status {a.tuned_status})"
    doc.paragraph(head)
    render_matches(doc, a.rows, top=a.n)
