"""Where a compile's time went, by phase, from torch's own compile timers (pure; no torch).

Torch times each step of a compile with ``dynamo_timed`` and writes each timer's start and end
into the structured trace as a ``chromium_event`` record (a ``B`` and an ``E`` event, or one
``X`` with its duration; torch 2.5 to 2.15), with the compile's ``frame_id`` and
``frame_compile_id`` in the record's metadata: ``entire_frame_compile`` around a frame's whole
compile, ``backend_compile`` around AOTAutograd and Inductor, ``GraphLowering.run``,
``Scheduler.codegen``, ``compile_file`` (a C++ kernel's compiler), ``async_compile.wait`` ...
``spans`` pairs them into spans.

Each moment of a compile goes to the innermost timer running then (the latest to start of
those open), to the phase its name belongs to (``PHASES``), or, for a name not listed (torch
adds timers from version to version), to the phase of the timer it started in; a timer in no
listed one is ``other``. The phases therefore add up to the time in which any timer ran, each
second counted once. Only the compiling process's timers are seen: a kernel compiled in
Inductor's worker processes is not, but the time the compile waited for it is
(``async_compile.wait``). One timer is the tool's own, ``ISA_PROBE``: Inductor's probe of the
CPU's vector instruction sets, which torch times only in part (``runner/dynamo_counts.py``), a
phase of its own (``VEC_ISA``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

DYNAMO = "Dynamo (tracing Python, guards)"
AOT = "AOTAutograd (the joint graph, its partition)"
LOWERING = "Inductor graph passes and lowering"
CODEGEN = "Inductor fusion and code generation"
KERNELS = "compiling kernels (C++ compiler, Triton)"
# the probe compiles and runs small C++ programs once in every process that compiles for the
# CPU, a cache hit's too: apart from the kernels, so that a hit's time does not read as kernels
# compiled again
VEC_ISA = "probing the CPU's vector instructions (C++ programs, once per process)"
AUTOTUNE = "autotuning (timing kernel choices)"
LOADING = "loading modules, cache keys and lookups"
OTHER = "other"
# the tool's own timer around Inductor's probe of the CPU's vector instruction sets: C++ programs
# compiled and loaded (runner/dynamo_counts.py)
ISA_PROBE = "cpu_vec_isa.valid_vec_isa_list"
# phase -> the timers' names (exact), name prefixes ("name*") and suffixes ("*name") that are its own
# (torch 2.13's ``dynamo_timed`` names)
PHASES: dict[str, tuple[str, ...]] = {
    DYNAMO: ("dynamo", "_compile.compile_inner", "entire_frame_compile", "compile_attempt_*",
             "bytecode_tracing", "build_guards", "gc", "insert_deferred_runtime_asserts",
             "OutputGraph.call_user_compiler", "fullgraph_capture", "precompile_*", "compiler_collective"),
    AOT: ("backend_compile", "create_aot_dispatcher_function", "aot_*", "_recursive_joint_graph_passes",
          "entire_backward_compile", "compile_fx.<locals>.fw_compiler_base",
          "compile_fx.<locals>.bw_compiler", "min_cut_rematerialization_partition"),
    LOWERING: ("inductor_compile", "compile_fx_inner", "fx_codegen_and_compile", "_recursive_pre_grad_passes",
               "_recursive_post_grad_passes", "pass.*", "additional_fake_tensor_prop", "GraphLowering.run"),
    CODEGEN: ("GraphLowering.compile_to_fn", "GraphLowering.compile_to_module", "code_gen",
              "GraphLowering.codegen*", "Scheduler.*", "PythonWrapperCodegen.*", "CppWrapperCpu.*",
              "CppWrapperGpu.*", "TritonBundler.*", "generate_kernel_code_from_nodes"),
    VEC_ISA: (ISA_PROBE,),
    KERNELS: ("compile_file", "async_compile.*", "CachingAutotuner.precompile",
              "CachingAutotuner.slow_precompile*", "StaticAutotunerFuture.warm_precompile",
              "reload_kernel_in_parent", "aoti_compile_*", "aoti_precompile_*", "*_template_precompiling"),
    AUTOTUNE: ("CachingAutotuner.benchmark_all_configs", "CachingAutotuner.coordinate_descent_tuning",
               "CachingAutotuner.combo_sequential_autotune", "*_template_autotuning",
               "benchmark_codegened_module", "select_algorithm*", "AlgorithmSelectorCache.*"),
    LOADING: ("PyCodeCache.load_by_key_path", "AOTAutogradCache.*", "FxGraphCache.*", "inductor_codecache_*",
              "CacheBase.*", "TritonBundler.read_and_emit", "TritonBundler.load_cached_static_autotuners",
              "CompiledArtifact.*"),
}
_EXACT = {name: phase for phase, names in PHASES.items() for name in names if "*" not in name}
_PREFIX = [(name[:-1], phase) for phase, names in PHASES.items() for name in names if name.endswith("*")]
_SUFFIX = [(name[1:], phase) for phase, names in PHASES.items() for name in names if name.startswith("*")]

Event = tuple[Any, Any, str, str, float, Any]  # frame id, frame compile id, name, ph, ts (µs), thread
Span = list[Any]  # [name, start s from the compile's first timer, duration s]
# the ids of timers that ran in no compile: Triton's autotuning at a kernel's first run (on a GPU),
# a wait for a kernel compiled in a worker, a module loaded at its first call
NO_COMPILE = (None, None)


def phase_of(name: str) -> str | None:
    """The phase a timer's name belongs to; None for a name not listed."""
    if name in _EXACT:
        return _EXACT[name]
    found = next((phase for prefix, phase in _PREFIX if name.startswith(prefix)), None)
    return found or next((phase for suffix, phase in _SUFFIX if name.endswith(suffix)), None)


def event(md: dict[str, Any], payload: Any) -> Event | None:
    """A ``chromium_event`` record (its metadata and decoded payload) -> what ``spans`` reads."""
    if not isinstance(payload, dict) or payload.get("ph") not in ("B", "E", "X"):
        return None
    ts = payload.get("ts")
    if not isinstance(ts, (int, float)) or not isinstance(payload.get("name"), str):
        return None
    ph = payload["ph"]
    if ph == "X":  # a complete event: its end follows at once
        ph = f"X{float(payload.get('dur') or 0.0)}"
    return md.get("frame_id"), md.get("frame_compile_id"), payload["name"], ph, float(ts), payload.get("tid")


def spans(events: Sequence[Event]) -> dict[tuple[Any, Any], list[Span]]:
    """The timers paired into spans, per compile: an end closes the latest open start of the
    same name (torch writes every timer with thread 0, so the timers of threads that compile
    kernels side by side interleave). A span without the compile's ids takes those of the
    latest span still open when it started, and one in no compile ``NO_COMPILE``. An end
    without its start, or a start never ended (a compile that raised), is left out."""
    open_: dict[tuple[Any, str], list[tuple[float, Any]]] = {}
    latest: list[tuple[float, float, Any]] = []  # (start, end, ids) of the spans found, for ids
    found: list[tuple[Any, float, float, str]] = []  # (ids, start µs, end µs, name)
    for frame, compile_id, name, ph, ts, tid in sorted(events, key=lambda e: e[4]):
        ids = (frame, compile_id) if frame is not None else None
        if ph == "B":
            open_.setdefault((tid, name), []).append((ts, ids))
        elif ph == "E" and open_.get((tid, name)):
            start, start_ids = open_[(tid, name)].pop()
            found.append((start_ids, start, ts, name))
        elif ph.startswith("X"):
            found.append((ids, ts, ts + float(ph[1:]), name))
    found.sort(key=lambda f: (f[1], -f[2]))
    out: dict[tuple[Any, Any], list[Span]] = {}
    for ids, start, end, name in found:
        if ids is None:  # the latest span open at its start that has ids; else no compile's
            ids = next((i for s, e, i in reversed(latest) if s <= start < e and i is not None), NO_COMPILE)
        latest.append((start, end, ids if ids != NO_COMPILE else None))
        out.setdefault(ids, []).append([name, start, end - start])
    for rows in out.values():
        first = min(r[1] for r in rows)
        for r in rows:
            r[1], r[2] = round((r[1] - first) / 1e6, 6), round(r[2] / 1e6, 6)
    return out


def phase_seconds(compiles: Iterable[Sequence[Span]]) -> dict[str, float]:
    """Seconds per phase over the compiles' spans (see the module docstring), largest first."""
    out: dict[str, float] = {}
    for rows in compiles:
        for phase, own in _own_times(rows).items():
            out[phase] = out.get(phase, 0.0) + own
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def _own_times(rows: Sequence[Span]) -> dict[str, float]:
    """A sweep over the spans' starts and ends: each moment goes to the phase of the latest
    span to start of those open then; a span of a name not listed takes the phase of the latest
    open span it started in."""
    marks: list[tuple[float, int, int]] = []  # (time, 0 end / 1 start, span)
    for i, (_, start, dur) in enumerate(rows):
        marks += [(start, 1, i), (start + dur, 0, i)]
    marks.sort()
    out: dict[str, float] = {}
    active: list[int] = []  # open spans, by start
    phases: dict[int, str] = {}
    last = 0.0
    for t, is_start, i in marks:
        if active:
            phase = phases[active[-1]]
            out[phase] = out.get(phase, 0.0) + (t - last)
        last = t
        if is_start:
            phases[i] = phase_of(rows[i][0]) or (phases[active[-1]] if active else OTHER)
            active.append(i)
        elif i in active:
            active.remove(i)
    return out


def timed_total(compiles: Iterable[Sequence[Span]]) -> float:
    """The seconds in which any of a compile's timers ran (the union of its spans), added up."""
    return sum(sum(_own_times(rows).values()) for rows in compiles)


# the phases as a table's row names them
SHORT = {DYNAMO: "Dynamo", AOT: "AOTAutograd", LOWERING: "lowering", CODEGEN: "code generation",
         KERNELS: "compiling kernels", VEC_ISA: "CPU vector probe",
         AUTOTUNE: "autotuning", LOADING: "loading, caches", OTHER: "other"}


def of_compiles(compiles: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Seconds per phase over every compile of a run that kept its timers; {} where none did."""
    return phase_seconds([x["timers"] for x in compiles if x.get("timers")])


def recorded_seconds(compile_: dict[str, Any]) -> float:
    """A compile's time as torch's record of it gives it (``compiles.time_line`` adds these up):
    its frame's whole compile and, where Inductor compiled its backward, that compile."""
    secs = compile_.get("seconds") or {}
    return secs.get("frame", 0.0) + secs.get("backward", 0.0)


def phase_line(compiles: Sequence[dict[str, Any]]) -> str | None:
    """``compile time by phase (...): compiling kernels (C++ compiler, Triton) 9.50 s (74%), ...``
    over every compile of a run that kept its timers (``compiles.merge``); None where none did."""
    phases = of_compiles(compiles)
    total = sum(phases.values())  # the phases cover each timed second once: the timers' union
    if total <= 0:
        return None
    timed = [x for x in compiles if x.get("timers")]
    outside = sum(1 for x in timed if x.get("frame_id") is None)
    parts = [f"{phase} {s:.2f} s ({100 * s / total:.0f}%)" for phase, s in phases.items() if s >= 0.005]
    n = "1 compile" if len(timed) - outside == 1 else f"{len(timed) - outside} compiles"
    n += f" and the timers that ran outside them{_outside_words(timed)}" if outside else ""
    against = _against_record(timed, total)
    return (f"compile time by phase (torch's own compile timers, {n}, {total:.2f} s{against}; each timer's "
            f"own time to its phase, docs/breakdown.md): {', '.join(parts)}")


def _outside_words(timed: Sequence[dict[str, Any]]) -> str:
    """What the timers that ran in no compile were, by phase: Triton's autotuning at a kernel's
    first run on a GPU; waits for C++ kernels compiled in Inductor's workers, a module loaded
    at its first call, on the host. A phase under the line's precision (0.00 s) is not named."""
    phases = phase_seconds([x["timers"] for x in timed if x.get("frame_id") is None])
    words = ", ".join(f"{SHORT.get(p, p)} {s:.2f} s" for p, s in phases.items() if s >= 0.005)
    return f" ({words})" if words else ""


def _against_record(timed: Sequence[dict[str, Any]], total: float) -> str:
    """How the timers' total stands to torch's record of the same compiles (the compile times'
    total): the timers run a little longer, Dynamo's outermost (``dynamo``) around the frame's
    recorded compile and AOTAutograd's (``entire_backward_compile``) around a backward's
    recorded Inductor compile; "" where they agree to the hundredth or a compile has no record."""
    compiled = [x for x in timed if x.get("frame_id") is not None]
    if not compiled or not all(x.get("seconds") for x in compiled):
        return ""
    recorded = round(sum(recorded_seconds(x) for x in compiled), 2)
    gap = round(round(total, 2) - recorded, 2)  # of the figures as shown, so that they add up
    if gap > 0:
        return (f": the {recorded:.2f} s of torch's record of them (the compile times) and {gap:.2f} s its "
                "timers ran around that record (Dynamo's outermost around a frame's compile, AOTAutograd's "
                "around a backward's Inductor compile"
                + (", and those outside any compile)" if len(compiled) < len(timed) else ")"))
    if gap < 0:
        return (f", {-gap:.2f} s less than torch's record of them (the compile times, {recorded:.2f} s): "
                "a timer that never ended (a compile that raised) is left out")
    return ""
