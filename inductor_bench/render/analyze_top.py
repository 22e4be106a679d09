"""The top kernels of ``analyze`` (on a CPU-only trace, the top ops) in the typical step: the
mean over the same steady steps as the category table, so the rows add up to it
(``core/top_kernels.py``); the kernels that ran only in steps left out, named apart."""

from __future__ import annotations

from collections import Counter

from ..core.analyze_result import AnalyzeResult
from ..core.categories import label
from ..core.columns import STEP_NAME
from ..core.top_kernels import TypicalKernel, device_kernel_ms
from ..core.typical_step import steady_kernels, steady_kernels_left_out
from . import charts
from . import format as fmt
from .doc import Doc
from .host_words import host_word

NAME_CHARS = 70
LAUNCHERS_SHOWN = 2  # a top-kernels row's launchers named in text, markdown and HTML
LAUNCHER_CHARS = 50  # each of them shortened to at most this
NO_LAUNCHER = "-"  # a row none of whose launches an op or range encloses (JSON: launched_by null)


def listed(names: list[str], shown: int = 4) -> str:
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


def step_code(doc: Doc, name: str) -> str:
    """A step as the trace names it (``ProfilerStep#12``) as code, as kernel names are: in
    markdown a code span, so that a pull request links no issue of it; the windows the tool
    names itself (``whole trace``, ``iteration 3``) read as words."""
    return doc.code(name) if STEP_NAME.match(name) else name


def left_out_line(doc: Doc, what: str, left_out: list[tuple[str, list[str]]], shown: int = 8) -> str:
    """The ``what`` (ranges, kernels) that ran only in steps left out of the steady mean, each
    with the steps it ran in: names and steps as code, as the tables show them."""
    named = "; ".join(f"{doc.code(name)} ({listed([step_code(doc, s) for s in steps])})"
                      for name, steps in left_out[:shown])
    more = f"; and {len(left_out) - shown} more" if len(left_out) > shown else ""
    return f"{what} that ran only in steps left out of the steady mean, so not in its figures: {named}{more}"


def top_section(doc: Doc, r: AnalyzeResult, top: int, which: str, on_host: bool) -> None:
    """The table of the typical step's top kernels (ops), ``which`` the step it is of."""
    kernels, left_out = steady_kernels(r), steady_kernels_left_out(r)
    if not kernels and not left_out:  # nothing inside a step ("devices: none: ..."): no empty table
        return
    totals = device_kernel_ms(kernels)  # a row's share is of its own device's kernel time
    labels = doc.kernel_labels([k.name for k in kernels[:top]], NAME_CHARS)
    rows = [[str(i), k.device, doc.named(doc.code(labels[i - 1]), k.name), label(k.category),
             fmt.count(round(k.calls, 2)), fmt.ms(k.ms), fmt.pct(fmt.share(k.ms, totals[k.device])),
             _launchers(doc, k)]
            for i, k in enumerate(kernels[:top], 1)]
    shown = f"Top {min(top, len(kernels))} of {len(kernels)}"
    notes = [left_out_line(doc, "kernels", left_out)] if left_out else []
    if on_host:  # the host's ops, each its own time; no launcher, but what a graph call ran as
        for row, k in zip(rows, kernels, strict=False):
            row[2] += f" ({k.launched_by})" if k.launched_by else ""
        doc.heading(f"{shown} ops ({which})")
        share = host_word("% kernel", True)  # of the thread's op time
        doc.table([row[:-1] for row in rows], ["#", "thread", "op", "category", "calls", "ms", share],
                  ("right", "left", "left", "left", "right", "right", "right"))
    else:
        doc.heading(f"{shown} kernels ({which})")
        doc.table(rows, ["#", "device", "kernel", "category", "calls", "ms", "% kernel", "launched by"],
                  ("right", "left", "left", "left", "right", "right", "right", "left"),
                  optional=("#", "calls"))
        if any(not k.launchers for k in kernels[:top]):
            notes.insert(0, _no_launcher_note(r.launches))
        if _split(kernels, top):
            notes.insert(0, "A kernel whose launches classify apart (a GEMM launched by aten::mm and by a "
                         "convolution's backward) is one row per category, so the rows add up to the "
                         "category table; launched by: every op that launched it, the most time first.")
    if notes:
        doc.paragraph(*notes)
    doc.chart(charts.analyze_top(kernels, top, on_host))


def _launchers(doc: Doc, k: TypicalKernel, shown: int = LAUNCHERS_SHOWN) -> str:
    """The first ``shown`` of a row's launchers, each as ``Doc.op_label`` shows it (whole in
    markdown, a file or a pipe, but an autograd node's C++ name, past 100 characters), and how
    many more (the JSON holds them all, whole)."""
    if not k.launchers:
        return NO_LAUNCHER
    more = len(k.launchers) - shown
    names = [doc.op_label(op, LAUNCHER_CHARS) for op in k.launchers[:shown]]
    return ", ".join(names) + (f" (+{more} more)" if more > 0 else "")


def _no_launcher_note(launches: int) -> str:
    """What a row's ``-`` under launched by means: no op or range around any of its launches,
    or (a trace without launch records) no launch to find one around."""
    if not launches:
        return (f"launched by {NO_LAUNCHER}: the trace holds no launch records (cuda_runtime / cuda_driver "
                "events), so no kernel's launching op is known.")
    return (f"launched by {NO_LAUNCHER}: no op was open on the CPU thread at any of its launches, nor a "
            "record_function range other than the step's own (or its launch was not recorded: work queued "
            "before the profiler started); its category comes from its name alone.")


def _split(kernels: list[TypicalKernel], top: int) -> bool:
    """Whether a kernel among the first ``top`` rows has a row of another category."""
    rows = Counter((k.device, k.name) for k in kernels)
    return any(rows[k.device, k.name] > 1 for k in kernels[:top])
