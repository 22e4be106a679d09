"""A diff's section whose sides ran the same compiled code: ``same code`` in place of a verdict.

Where both runs compiled the same code for every graph, none of a section's changes is the
change's (``same_code_section``); else each kernel both runs compiled to one code is marked so
(``one_code_kernels``). A compare's columns are judged on their breakdowns' code alike.
Pure Python; no torch.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from .comparable import runtimes_differ, sizes_differ
from .compare import ModeResult
from .compiled_from import graph_codes, module_texts
from .diff_kernels import Weights
from .diff_records import ADDED, ONE_CODE, REMOVED, CategoryDiff, KernelDiff, SectionDiff
from .one_code import RunKernels, one_code
from .results import BreakdownResult
from .step_totals import same_calls
from .vocab import Verdict


def compiled_alike(base: BreakdownResult, head: BreakdownResult, s: SectionDiff,
                   texts: tuple[dict[str, str], dict[str, str]]) -> bool:
    """Both runs compiled the same code for every graph (``compiled_from.graph_codes`` of each
    side's module texts), the model called each as often and it was profiled at the same
    sizes: the harness step's work is the same on both sides."""
    codes = [graph_codes(r, texts=t) for r, t in zip((base, head), texts, strict=True)]
    return bool(codes[0]) and codes[0] == codes[1] and not (
        s.unmeasured or s.calls_changed or sizes_differ(base, head))


def same_code_section(s: SectionDiff) -> SectionDiff:
    """A section whose sides ran the same work: none of its changes is the change's, so none
    is judged significant; each keeps its figures, marked ``same code``."""
    s.same_code = True
    s.step = replace(s.step, verdict=Verdict.SAME_CODE)
    if s.kernel_time is not None:
        s.kernel_time = replace(s.kernel_time, verdict=Verdict.SAME_CODE)
    s.categories = [CategoryDiff(c.category, replace(c.change, verdict=Verdict.SAME_CODE))
                    for c in s.categories]
    s.kernels = [_same_kernel(k) if k.change is not None else k for k in s.kernels]
    return s


def one_code_kernels(s: SectionDiff, base: RunKernels, head: RunKernels,
                     weights: tuple[Weights, Weights] = ({}, {})) -> SectionDiff:
    """Each paired kernel both runs compiled to one code (``core/one_code.py``) marked ``same
    code``, whatever its two processes' times say, or ``calls changed`` where its graph was
    called another number of times (``weights``: each side's calls per graph), which then moves
    its time per step; a category or the kernel time all of whose kernels are one code, the
    same, but in a section that lacks a graph on one side (its sums stay not comparable); the
    rest of the section as judged."""
    s.kernels = [_one_code_kernel(k, weights) if k.change is not None and k.status not in (ADDED, REMOVED)
                 and one_code(base, (k.base_graph or k.graph, k.base_name or k.name), head, (k.graph, k.name))
                 else k for k in s.kernels]
    if s.unmeasured:  # its sums over graphs lack a graph on one side: not comparable, and said so
        return s
    judged = {k.category for k in s.kernels if k.status not in ONE_CODE}
    by_cat = {k.category: _one_verdict(s, k.category) for k in s.kernels if k.category not in judged}
    s.categories = [CategoryDiff(c.category, replace(c.change, verdict=by_cat[c.category]))
                    if c.category in by_cat else c for c in s.categories]
    if s.kernel_time is not None and s.kernels and not (s.graphs_added or s.graphs_removed) and not judged:
        s.kernel_time = replace(s.kernel_time, verdict=_one_verdict(s))
    return s


def _one_code_kernel(k: KernelDiff, weights: tuple[Weights, Weights]) -> KernelDiff:
    b, h = weights[0].get(k.base_graph or k.graph, 1.0), weights[1].get(k.graph, 1.0)
    if same_calls(b, h):
        return _same_kernel(k)
    return replace(k, status=Verdict.CALLS_CHANGED, change=replace(k.change, verdict=Verdict.CALLS_CHANGED))


def _one_verdict(s: SectionDiff, category: str | None = None) -> str:
    """``calls changed`` where a kernel (of ``category``) of one code was called another number
    of times, else ``same code``."""
    moved = any(k.status == Verdict.CALLS_CHANGED for k in s.kernels if category in (None, k.category))
    return Verdict.CALLS_CHANGED if moved else Verdict.SAME_CODE


def _same_kernel(k: KernelDiff) -> KernelDiff:
    return replace(k, status=Verdict.SAME_CODE, change=replace(k.change, verdict=Verdict.SAME_CODE))


def column_code(s: SectionDiff, base: ModeResult, head: ModeResult,
                 code_dirs: tuple[Path | None, Path | None]) -> SectionDiff:
    """A compare column's section judged on its breakdowns' code as a breakdown diff is
    (``code_judged``), the modules read from each column's directory under ``code_dirs``.
    Its step stays judged: it is the real model call, whose code outside the compiled graphs
    their modules do not show; the section is ``same code`` only where that step is not a
    significant change either."""
    if not (base.breakdown and head.breakdown):
        return s
    step = s.step
    dirs = (_column_dir(base, code_dirs[0]), _column_dir(head, code_dirs[1]))
    s = code_judged(s, base.breakdown, head.breakdown, dirs)
    if s.same_code:
        s.step, s.same_code = step, not step.significant
    return s


def _column_dir(m: ModeResult, code_dir: Path | None) -> Path | None:
    """Where a compare column's modules are: its directory under the compare's (as read)."""
    where = (m.breakdown.run_dir if m.breakdown else "") or m.run_dir
    return code_dir / Path(where).name if code_dir is not None and where else None


def code_judged(s: SectionDiff, base: BreakdownResult, head: BreakdownResult,
                 code_dirs: tuple[Path | None, Path | None]) -> SectionDiff:
    """The same code for every graph: ``same_code_section``; else each kernel of one code on
    both sides marked so (``one_code_kernels``); nothing so where the sides ran another torch
    or Triton (``comparable.runtimes_differ``)."""
    if runtimes_differ(base, head):
        return s
    texts = (module_texts(base, code_dirs[0]), module_texts(head, code_dirs[1]))  # each read once
    if compiled_alike(base, head, s, texts):
        return same_code_section(s)
    return one_code_kernels(s, RunKernels(base, texts[0]), RunKernels(head, texts[1]),
                            (base.weights(), head.weights()))
