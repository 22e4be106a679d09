"""One graph's saved profile -> its result, and a whole run re-analysed from its directory.

The profiling worker's raw answer for a graph is saved beside its files
(``graphs/<id>/profile.json``: the graph as it was asked for, and the worker's response: every
window's iteration times, loads, page faults, whether it replayed a CUDA graph). With the
compiled module, the kernel files, the lowering record and the traces next to it, that is
everything a graph's figures are made of, so this analysis needs no torch and no GPU: the
breakdown runs it as each graph lands, and ``inductor-bench report RUN --reanalyze`` runs it
again over a saved run, so that a run recorded before a fix of the analysis is judged by the
fixed one.

Pure; no torch.
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import fields
from pathlib import Path
from typing import Any

from .attribution import attribute
from .breakdown import analyze_graph, launch_stacks_by_name, settle
from .devices import DEVICE, backend
from .digests import DigestsDamaged, check_inputs, check_recorded, file_digest, read_digests
from .errors import ResultError
from .graph_inputs import input_dtypes
from .graph_work import count_work
from .load import Load
from .modparse import ModuleInfo, parse_module
from .outside import outside_of_trace
from .pipelined import analyze_pipelined
from .resize import applicable
from .results import SCHEMA_VERSION, BreakdownResult, GraphResult
from .rundir import (
    KERNELS_DIR,
    LAUNCH_TRACE_FILE,
    MODULE_FILE,
    PIPELINED_TRACE_FILE,
    PROFILE_FILE,
    SOURCES_FILE,
    STEP_PYTHON_TRACE_FILE,
    STEP_TRACE_FILE,
    TRACE_FILE,
    index_problem,
    load_breakdown,
    loads_saved,
    time_problem,
)
from .shape import check
from .source_store import load_record
from .static_twin import input_shapes
from .steady import RULES
from .symbols import dynamic_sizes
from .trace import Trace, load_for_analysis

# What a graph is before it is measured: the fields its profile request carries.
HEADER_FIELDS = ("id", "role", "aot_id", "frame_id", "frame_compile_id", "module", "device",
                 "cuda_graphs", "cuda_graphs_note", "how_it_ran", "compiled_from", "calls",
                 "call_sizes")


def header(g: GraphResult) -> dict[str, Any]:
    """The graph as the profiling worker was asked for it (saved with its response)."""
    return {k: getattr(g, k) for k in HEADER_FIELDS}


def save_profile(gdir: Path, g: GraphResult, response: dict[str, Any]) -> None:
    """Keep the worker's raw answer for one graph beside its files, before it is analysed."""
    (gdir / PROFILE_FILE).write_text(json.dumps({"graph": header(g), "response": response}))


def window_speeds(response: dict[str, Any]) -> tuple[list[float | None], float]:
    """Each window's machine speed (the reference reading over the window's: 1.0 full speed)
    and the seconds waited for it, from the worker's readings (``runner/speed.py``)."""
    ref = response.get("speed_reference_s")
    probes = response.get("window_probe_s") or []
    speeds = [round(ref / p, 4) if ref and p else None for p in probes]
    return speeds, round(float(response.get("speed_waited_s") or 0.0), 3)


def kept_clock(response: dict[str, Any]) -> list[float]:
    """The worker's clock reading of each iteration of the kept window ([]: not recorded)."""
    window, samples = response.get("window"), response.get("window_samples_ms") or []
    return list(samples[window]) if isinstance(window, int) and 0 <= window < len(samples) else []


def kernel_files(run_dir: Path, gdir: Path) -> dict[str, str]:
    """Kernel name -> its file, relative to the run directory (the copies in ``kernels/``)."""
    kdir = gdir / KERNELS_DIR
    return {p.stem: str(p.relative_to(run_dir)) for p in sorted(kdir.glob("*.py"))} if kdir.is_dir() else {}


def analyze_profile(run_dir: Path, g: GraphResult, response: dict[str, Any]) -> GraphResult:
    """Fill ``g`` (a graph as asked for) from the worker's ``response`` and the files in its
    directory: windows, loads, the trace's kernels through the statistics policy, source
    attribution, the pipelined run. Raises ``BenchError`` when the trace cannot be analysed."""
    gdir = run_dir / Path(g.module or "").parent
    trace_path = gdir / TRACE_FILE
    g.trace = str(trace_path.relative_to(run_dir))
    g.windows_ms = list(response.get("windows_ms") or [])
    g.window_faults = list(response.get("window_faults") or [])
    g.window = response.get("window")
    g.window_process = list(response.get("window_process") or [])
    g.window_speed, g.speed_waited_s = window_speeds(response)
    g.window_load = [Load.from_dict(x) for x in response.get("window_load") or []]
    g.replayed = bool(response.get("replayed"))
    g.first_call_inputs = [int(x) for x in response.get("first_call_inputs") or []]
    if response.get("replay_error"):
        g.cuda_graphs_note = f"profiled kernel by kernel: capture failed: {response['replay_error']}"
    if g.cuda_graphs and not g.replayed and g.how_it_ran:
        g.how_it_ran = f"kernel by kernel, the capture failed (the mode: {g.how_it_ran})"
    hints = launched = None
    if g.replayed and (gdir / LAUNCH_TRACE_FILE).exists():
        launched = load_for_analysis(gdir / LAUNCH_TRACE_FILE)
        hints = launch_stacks_by_name(launched)
    module_path = gdir / MODULE_FILE
    try:  # read once: the bytes checked against the run's digest are the text analysed
        data = module_path.read_bytes()
    except OSError as e:  # a run directory missing its module (or with a directory there)
        why = e.strerror or e
        raise ResultError(f"{module_path}: cannot read the graph's compiled module ({why})") from None
    files = kernel_files(run_dir, gdir)
    _check_unchanged(run_dir, module_path, data, files)
    text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace").read()
    info = parse_module(text)
    trace = load_for_analysis(trace_path)
    analyze_graph(trace, info, g, kernel_files=files, stack_hints=hints,
                  clock=kept_clock(response))
    try:  # attribution is an addition to the measurement: it never loses a graph
        attribute(g, trace, info, text, load_record(gdir / SOURCES_FILE))
    except ResultError as e:  # its record damaged: said as it is, never as a run without one
        g.attribution = f"source attribution failed: {e}"[:300]
    except Exception as e:
        g.attribution = f"source attribution failed: {type(e).__name__}: {e}"[:300]
    settle(g)  # judged again by the parts the result now holds: its call sites too (core/parts.py)
    fixed = applicable(text, response.get("sizes") or {})  # breakdown --size
    g.unbacked = {str(k): int(v) for k, v in (response.get("unbacked") or {}).items()}
    count_kernel_work(g, info, text, run_dir, fixed, g.unbacked, response.get("flex_blocks"),
                      launched or trace, launched is not None)
    g.sizes = dynamic_sizes(text, fixed)
    g.size_hints = dynamic_sizes(text) if fixed else {}
    try:  # an addition to the measurement, as above
        g.input_shapes = input_shapes(text, fixed)
        g.input_dtypes = input_dtypes(text)
    except Exception:
        g.input_shapes, g.input_dtypes = [], []
    pipelined = gdir / PIPELINED_TRACE_FILE
    if backend(g.device).timeline == DEVICE and pipelined.exists():
        g.pipelined = analyze_pipelined(load_for_analysis(pipelined), response.get("pipelined_plain"))
        g.pipelined_trace = str(pipelined.relative_to(run_dir))
    return g


def _check_unchanged(run_dir: Path, module_path: Path, data: bytes, files: dict[str, str]) -> None:
    """The compiled module and its kernel files (``files``, run-relative) as the run recorded
    them (``digests.json``), where it did: one torn or edited since would have the graph's
    kernels read, counted and placed from another text (a kernel file's own byte and FLOP
    counts among them). ``data``: the module's bytes as read for the analysis, never read again."""
    digests = checked_digests(run_dir)
    if not digests:  # a run from before they were recorded: read unchecked (report says so)
        return
    # a run that records digests records every module and kernel file it copies
    check_recorded(module_path, digests.get(module_path.relative_to(run_dir).as_posix()),
                   lambda: hashlib.sha256(data).hexdigest(), "its kernels would be read from another module")
    for rel in files.values():
        path = run_dir / rel
        check_recorded(path, digests.get(rel), lambda p=path: file_digest(p),
                       "its bytes and FLOPs would be read from another kernel")


def checked_digests(run_dir: Path) -> dict[str, str]:
    """The run's digests (``digests.json``); damaged, a refusal: nothing of the run is analysed
    unchecked."""
    try:
        return read_digests(run_dir)
    except DigestsDamaged as e:  # no module of the run can be checked: none is analysed unchecked
        raise ResultError(f"{e}: the graphs' modules cannot be checked against what the run wrote, and none "
                          "is analysed unchecked: refused (`report` without --reanalyze renders the saved "
                          "result)") from None


def count_kernel_work(g: GraphResult, info: ModuleInfo, text: str, run_dir: Path,
                      fixed: dict[str, int] | None = None, unbacked: dict[str, int] | None = None,
                      blocks: dict[str, list[int | None]] | None = None, trace: Trace | None = None,
                      one_call: bool = False) -> None:
    """Bytes and FLOPs of each kernel (``core/roofline.py``); a count is an addition to the
    measurement: a module it cannot read leaves the kernels uncounted, never loses the graph."""
    try:
        count_work(g, info, text, run_dir, fixed, unbacked, blocks, trace, one_call)
    except Exception:
        for k in g.kernels:
            k.bytes = k.flops = None


def reanalyze(run_dir: str | Path,
              loaded: BreakdownResult | None = None) -> tuple[BreakdownResult, list[str]]:
    """The run's result with every graph that has a saved profile analysed again (the rest as
    saved: failed graphs, graphs of runs saved before profiles were kept); and the ids of the
    graphs re-analysed. ``loaded``: the run's result as its caller read it (None: read here); it
    is the one changed. Raises ``ResultError`` when none could be."""
    run = Path(run_dir)
    result = loaded if loaded is not None else load_breakdown(run)
    digests = checked_digests(run)
    check_inputs(run, digests)  # every file read is checked before any is read
    for g in result.graphs:  # a graph profiled (its answer saved, or recorded as saved)
        profile = profile_path(run, g)
        if g.module and (profile.exists() or profile.relative_to(run).as_posix() in digests):
            check_inputs(run, digests, profile.parent)
    done: list[str] = []
    for i, g in enumerate(result.graphs):
        saved = _read_profile(run, g)
        if saved is None:
            continue
        head, response = saved
        where = profile_path(run, g)
        try:
            again = analyze_profile(run, GraphResult(**head), response)
            shape = _problem(again)
        except (TypeError, ValueError, AttributeError, KeyError, IndexError) as e:  # a value of other kind
            raise ResultError(f"{where}: damaged: {type(e).__name__}: {e}") from e
        if shape:
            raise ResultError(f"{where}: damaged: graph {shape}")
        if index_problem(again) or time_problem(again):
            raise ResultError(f"{where}: damaged: {index_problem(again) or time_problem(again)}")
        result.graphs[i] = again
        done.append(g.id)
    if not done:
        raise ResultError(no_profile_line(run))
    result.iterations = max((g.iterations for g in result.graphs), default=0)
    if (run / STEP_TRACE_FILE).exists():  # the profiled steps, split again
        python = run / STEP_PYTHON_TRACE_FILE
        result.outside = outside_of_trace(run / STEP_TRACE_FILE, python if python.exists() else None)
    if all(g.id in done for g in result.measured()):
        result.schema_version = SCHEMA_VERSION  # every figure now made by this analysis
        result.rules = RULES  # and judged by these rules
    return result, done


def none_profiled(run_dir: Path, result: BreakdownResult) -> bool:
    """Whether no graph of the run kept a saved profile: ``reanalyze`` refuses it
    (``no_profile_line``), which a caller can tell before it writes anything in the run."""
    return not any(g.module and profile_path(run_dir, g).exists() for g in result.graphs)


def profile_path(run_dir: Path, g: GraphResult) -> Path:
    """Where a graph's saved profile is: beside its module in the run directory."""
    return run_dir / Path(g.module or "").parent / PROFILE_FILE


def no_profile_line(run: Path) -> str:
    return (f"{run}: no graph has a saved profile ({PROFILE_FILE}) to analyse again: "
            "the run predates them, or none was measured")


def every_graph_profiled(run_dir: Path, result: BreakdownResult) -> bool:
    """Whether every measured graph of the run kept its saved profile: whether ``reanalyze``
    makes every figure again (and records the rules that judged them)."""
    graphs = result.measured()
    return bool(graphs) and all(g.module and profile_path(run_dir, g).exists()
                                for g in graphs)


def _problem(g: GraphResult) -> str | None:
    """What of the graph, made from a saved response, is not the shape a result holds."""
    try:
        check(GraphResult, json.loads(json.dumps(g.to_dict())))
    except ResultError as e:
        return str(e)
    return None


def _read_profile(run: Path, g: GraphResult) -> tuple[dict[str, Any], dict[str, Any]] | None:
    if not g.module:
        return None
    path = profile_path(run, g)
    if not path.exists():
        return None
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise ResultError(f"{path}: not readable as JSON ({e})") from None
    data = loads_saved(text, path)  # no NaN, no number beyond any figure, as a result is read
    names = {f.name for f in fields(GraphResult)}
    head = data.get("graph") if isinstance(data, dict) else None
    response = data.get("response") if isinstance(data, dict) else None
    if not isinstance(head, dict) or not isinstance(response, dict) or "id" not in head:
        raise ResultError(f"{path}: not a saved profile (no graph and response)")
    if (head["id"], head.get("module")) != (g.id, g.module):  # its files are read where it says
        theirs = f"graph {head['id']!r} of module {head.get('module')!r}"
        ours = f"graph {g.id!r} of {g.module!r}"
        raise ResultError(f"{path}: damaged: a profile of {theirs}, not of the run's {ours}")
    head = {k: v for k, v in head.items() if k in names}
    try:
        check(GraphResult, head)
    except ResultError as e:
        raise ResultError(f"{path}: damaged: graph {e}") from None
    return head, response
