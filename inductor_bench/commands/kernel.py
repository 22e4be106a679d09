"""`inductor-bench kernel K.py | RUN_DIR NAME`: benchmark one Triton kernel; --max-autotune
re-tunes it for real and shows both side by side."""

from __future__ import annotations

import difflib
import json
import math
import re
from pathlib import Path
from typing import Annotated

import typer

from ..core.categories import CPP_CATEGORIES, TRITON_CATEGORIES, label
from ..core.errors import UsageError
from ..core.kernel_report import build_report
from ..core.kernel_toplevel import require_inductor_top_level
from ..core.kernelfile import (
    KernelFile,
    check_name,
    read_kernel_file,
    require_benchmarkable,
    require_timeable,
    run_kernel_file,
)
from ..core.peaks import load_peaks_file, resolve
from ..core.results import BreakdownResult, KernelStat
from ..core.rundir import BREAKDOWN_FILE, load_breakdown
from ..core.vocab import CompileMode
from ..render.kernel import render_kernel
from ..runner.kernelbench import (
    DEFAULT_REPS,
    DEFAULT_WARMUP,
    MAX_REPS,
    MAX_WARMUP,
    REPS_WHY,
    WARMUP_WHY,
    run_kernel_bench,
)
from ..runner.worker import DEFAULT_TIMEOUT_S
from . import options as o
from .exit_status import failure_first
from .output import emit

CLOSE_MATCHES = 5  # names suggested for an unknown kernel name


def close_names(wanted: str, names: list[str]) -> list[str]:
    """Names like ``wanted``: those holding it (less an extern call's ``#n``, as the report
    numbers it: ``aten::mm #2``), shortest first, as a demangled GPU kernel's name holds what
    a user types (``fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::...)``);
    then difflib's close matches."""
    part = _op_of(wanted)
    holding = sorted((n for n in names if part and part in n), key=lambda n: (len(n), n))
    close = difflib.get_close_matches(wanted, names, n=CLOSE_MATCHES)
    return list(dict.fromkeys(holding + close))[:CLOSE_MATCHES]


def _op_of(name: str) -> str:
    """An extern call as the report numbers it (``aten::mm #2``): its op (``aten::mm``)."""
    return re.sub(r" #\d+$", "", name)


def find_kernel(result: BreakdownResult, name: str, where: str) -> tuple[str, KernelStat]:
    """(graph id, kernel) for NAME or GRAPH_ID/NAME; UsageError listing the choices."""
    graph_id, _, kname = name.rpartition("/")
    if not kname.strip():  # "0-forward/": a graph and no kernel
        raise UsageError(f"{name!r} names no kernel: write GRAPH_ID/KERNEL_NAME or KERNEL_NAME "
                         f"(its graphs: {', '.join(g.id for g in result.graphs)})")
    names = {k.name for g in result.graphs for k in g.kernels}
    if kname not in names and _op_of(kname) in names:
        _require_call(result, kname, graph_id, where)
        kname = _op_of(kname)
    found = [
        (g.id, k)
        for g in result.graphs
        for k in g.kernels
        if k.name == kname and (not graph_id or g.id == graph_id)
    ]
    if len(found) == 1:
        return found[0]
    if found:
        choices = ", ".join(f"{gid}/{k.name}" for gid, k in found)
        raise UsageError(f"{kname} is in {len(found)} graphs of {where}; name one: {choices}")
    graphs = [g.id for g in result.graphs]
    if graph_id and graph_id not in graphs:
        raise UsageError(f"no graph {graph_id} in {where}; its graphs: {', '.join(graphs)}")
    elsewhere = [f"{g.id}/{k.name}" for g in result.graphs for k in g.kernels if k.name == kname]
    if elsewhere:  # the graph named has no such kernel, another has
        raise UsageError(f"no kernel {kname} in graph {graph_id} in {where}; "
                         f"it is in: {', '.join(elsewhere)}")
    close = close_names(kname, sorted(names))
    hint = f"; close matches: {', '.join(close)}" if close else _triton_files(result)
    in_graph = f" in graph {graph_id}" if graph_id else ""
    raise UsageError(f"no kernel {kname}{in_graph} in {where}{hint}")


def _require_call(result: BreakdownResult, call: str, graph_id: str, where: str) -> None:
    """``aten::addmm #7`` read as its op only where the run has that call (a run recording no
    call sites of the op, from before they were kept, is not checked); else UsageError naming
    the calls it has."""
    op, index = _op_of(call), int(call.rpartition("#")[2])
    calls = [(g.id, s.index) for g in result.graphs if not graph_id or g.id == graph_id
             for s in g.sites if s.kernel == op and s.extern]
    if not calls or any(i == index for _, i in calls):
        return
    its = ", ".join(f"{gid}/{op} #{i}" for gid, i in sorted(calls))
    in_graph = f" in graph {graph_id}" if graph_id else ""
    raise UsageError(f"no call {call}{in_graph} in {where}; its calls of {op}: {its}")


def _triton_files(result: BreakdownResult, shown: int = 5) -> str:
    """The kernels of the run that can be benchmarked (a Triton kernel with its file), or that
    it has none (a CPU run: its C++ kernels re-tuned by recompiling)."""
    files = sorted({k.name for g in result.graphs for k in g.kernels if k.file})
    if not files:
        return f"; it has no Triton kernel file to benchmark (a CPU run's {_cpp_retuned(result)})"
    more = f" and {len(files) - shown} more" if len(files) > shown else ""
    return f"; its Triton kernels: {', '.join(files[:shown])}{more}"


def _cpp_retuned(result: BreakdownResult) -> str:
    """Where a C++ kernel is re-tuned; a run compiled in mode max-autotune already holds the
    re-tuned ones (``--autotune-top`` refuses it)."""
    how = "inductor-bench breakdown MODEL.py --autotune-top N"
    if result.mode == CompileMode.MAX_AUTOTUNE:
        return (f"C++ kernels are re-tuned by recompiling, and this run is compiled in mode max-autotune "
                f"already: {how} in mode default sets these beside the default's")
    return f"C++ kernels are re-tuned by recompiling: {how}"


def _from_run_dir(run_dir: Path, name: str | None) -> KernelFile:
    if not o.exists(run_dir / BREAKDOWN_FILE):
        load_breakdown(run_dir)  # refused, naming the runs inside (a compare's modes) or a sweep's report
    if not name:
        raise UsageError(
            f"{run_dir} is a run directory: name the kernel (inductor-bench kernel RUN_DIR KERNEL_NAME)"
        )
    result = load_breakdown(run_dir)
    gid, k = find_kernel(result, name, str(run_dir))
    if not k.file:
        why = (  # an extern op: where its time is, and what could replace it with a kernel
            f"only Triton kernels can be benchmarked; an extern op's calls are timed in "
            f"inductor-bench report {run_dir} --by op, and inductor-bench compare MODEL.py "
            f"--modes default,max-autotune shows what max-autotune makes of it"
        )
        if k.category in TRITON_CATEGORIES:
            why = "the run saved no file for this Triton kernel"
        elif k.category in CPP_CATEGORIES:
            why = _cpp_retuned(result)
        raise UsageError(f"{gid}/{k.name} has no Triton kernel file (category {label(k.category)}): {why}")
    kf = run_kernel_file(run_dir, k.file)  # as the run wrote it, or refused
    check_name(kf, k.name)  # a result naming another kernel's file times no kernel asked for
    return kf


def resolve_kernel_file(path: Path, name: str | None) -> KernelFile:
    """A kernel file named directly, or by name from a run directory; validated."""
    if o.exists(path) and path.is_dir():
        kf = _from_run_dir(path, name)
    elif path.name == BREAKDOWN_FILE and path.is_file():  # parses as Python: would read "not a kernel file"
        raise UsageError(f"{path} is a run's result, not a kernel file: name its directory, "
                         f"inductor-bench kernel {path.parent} KERNEL_NAME")
    else:
        kf = read_kernel_file(path)
        check_name(kf, name)
    require_inductor_top_level(kf.path, kf.text)  # before a worker loads it, running its top level
    require_benchmarkable(kf)
    require_timeable(kf)
    return kf


PeaksFileOpt = typer.Option(
    "--peaks-file", parser=o.a_path, help='JSON: {"<device name or regex>": {"gbps": .., "tflops": ..}}.'
)


def kernel(
    ctx: typer.Context,
    path: Annotated[
        Path,
        typer.Argument(parser=o.a_path, metavar="PATH",
                       help="A kernel .py file, or a run directory written by breakdown."),
    ],
    kernel_name: Annotated[
        str | None,
        typer.Argument(metavar="KERNEL_NAME",
                       help="With a run directory: the kernel (NAME, or GRAPH_ID/NAME).")
    ] = None,
    max_autotune: Annotated[
        bool,
        typer.Option(
            "--max-autotune",
            help="Also re-tune over the max-autotune space (with coordinate "
            "descent) and compare with the baseline.",
        ),
    ] = False,
    all_configs: Annotated[
        bool, typer.Option("--all-configs", help="Time every candidate config on its own.")
    ] = False,
    reps: Annotated[int, typer.Option("--reps", min=1, callback=o.at_most(MAX_REPS, REPS_WHY),
                                      help=f"Timed repetitions, at most {MAX_REPS}.")] = DEFAULT_REPS,
    warmup: Annotated[
        int, typer.Option("--warmup", min=0, callback=o.at_most(MAX_WARMUP, WARMUP_WHY),
                          help=f"Untimed calls before timing, at most {MAX_WARMUP}.")
    ] = DEFAULT_WARMUP,
    peak_gbps: Annotated[
        float | None, typer.Option("--peak-gbps", help="The device's peak memory bandwidth, GB/s.")
    ] = None,
    peaks_file: Annotated[Path | None, PeaksFileOpt] = None,
    timeout: o.Timeout = DEFAULT_TIMEOUT_S,
    json_out: o.JsonOut = None,
    fmt: o.FormatOpt = o.Format.text,
    html_out: o.HtmlOut = None,
) -> None:
    """Benchmark one Inductor Triton kernel: ms, GB/s and % of peak, FLOP/s, registers; with
    --max-autotune, baseline and max-autotune side by side."""
    o.one_stdout(fmt, json_out, html_out)
    o.check_timeout(timeout)
    kf = resolve_kernel_file(path, kernel_name)
    table = load_peaks_file(peaks_file) if peaks_file else None
    if peak_gbps is not None and not (math.isfinite(peak_gbps) and peak_gbps > 0):  # nan: no %
        raise UsageError(f"--peak-gbps must be a finite number above 0, not {peak_gbps:g}")
    response = run_kernel_bench(
        kf,
        max_autotune=max_autotune,
        all_configs=all_configs,
        reps=reps,
        warmup=warmup,
        timeout=timeout,
        peak_override=peak_gbps,
        peak_table=table,
        echo=o.settings(ctx).verbose,
    )
    peak = resolve(
        response["device"]["name"],
        override_gbps=peak_gbps,
        user_table=table,
        measured_gbps=response.get("measured_copy_gbps"),
        user_source=f"--peaks-file {peaks_file}",
    )
    report = build_report(kf, response, peak, max_autotune=max_autotune)
    with failure_first(None):  # a stop as it is written: said so
        emit(json.dumps(report.to_dict(), indent=1), lambda f: render_kernel(report, f), fmt, json_out,
             html_out)
