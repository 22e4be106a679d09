"""What Dynamo and Inductor counted in the compile worker: the FX graph cache's hits and
misses, each graph break (``core/graph_breaks.py`` reads their text), and each compile: its
times, a recompile's reasons, a recompile limit hit (``core/compiles.py``)."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from typing import Any

from ..core import compile_phases, compiles, graph_breaks
from . import trace_log

BREAK_ARTIFACT = "dynamo_graph_break_reason"
# the FX graph cache's verdict on a graph: ``fx_graph_cache_bypass`` from torch 2.6, before it
# ``fx_graph_cache_hash`` whose ``cache_state`` says so; the payload holds torch's reason
BYPASS_ARTIFACTS = ("fx_graph_cache_bypass", "fx_graph_cache_hash")
# AOTAutograd's cache's verdict on a frame's graph (``aotautograd_cache_{hit,miss,bypass}``,
# ``AOTAutogradCache.try_load``, torch 2.5 to 2.13); a bypass's payload holds torch's reason
AOT_BYPASS_ARTIFACT = "aotautograd_cache_bypass"
# a graph's FX graph cache verdict (torch 2.6 on), written once its module is loaded: its kernels
# built (``count_kernel_builds``) before it
FX_VERDICTS = {"fx_graph_cache_hit": "hit", "fx_graph_cache_miss": "miss", "fx_graph_cache_bypass": "bypass"}
RECOMPILE_ARTIFACT = "recompile_reasons"
LIMIT_LOGGER = "torch._dynamo.convert_frame"  # where Dynamo warns of a recompile limit hit


def fx_cache_counts() -> dict[str, int] | None:
    """Inductor's FX graph cache hits and misses in this process (its own counters)."""
    try:
        from torch._dynamo.utils import counters
    except ImportError:
        return None
    c = counters.get("inductor", {})
    return {"hits": int(c.get("fxgraph_cache_hit", 0)), "misses": int(c.get("fxgraph_cache_miss", 0)),
            "bypassed": int(c.get("fxgraph_cache_bypass", 0))}


def aot_cache_counts() -> dict[str, int]:
    """AOTAutograd's cache hits, misses, bypasses and entries saved in this process (its own
    counters). A frame whose entry could not be saved counts a bypass beside its miss."""
    from torch._dynamo.utils import counters

    c = counters.get("aot_autograd", {})
    return {"aot_hits": int(c.get("autograd_cache_hit", 0)),
            "aot_misses": int(c.get("autograd_cache_miss", 0)),
            "aot_bypassed": int(c.get("autograd_cache_bypass", 0)),
            "aot_saved": int(c.get("autograd_cache_saved", 0))}


# the kernel libraries this process built, each as built (``count_kernel_builds``)
KERNEL_BUILDS: list[str] = []


def count_kernel_builds() -> None:
    """Count each C++ kernel library this process builds, into ``KERNEL_BUILDS``. Inductor
    builds one per module's kernels and one per wrapper's bindings, each ``<key>.main.so`` beside
    its source, its key the code and the compiler's command line (torch's include paths: its
    install): ``CppCodeCache.load_async`` builds one where the file is not there, under a lock
    of its key, in this process or a thread of its pool (torch 2.5 to 2.15). Counted as built,
    not read from the cache's directory: another run sharing the cache builds there too. The
    probes of the CPU's vector instructions (``<key>.so``) and precompiled headers are not a
    graph's kernels, and not counted. An FX graph cache hit keeps the module's Python only:
    loading it builds any library its key does not find."""
    with contextlib.suppress(Exception):  # evidence only: never in the compile's way
        from torch._inductor.cpp_builder import CppBuilder

        build = CppBuilder.build
        if getattr(build, "counted_by_inductor_bench", False):
            return

        def counted(self: Any) -> None:
            build(self)
            with contextlib.suppress(Exception):
                path = str(self.get_target_file_path())
                if path.endswith(".main.so"):
                    KERNEL_BUILDS.append(path)  # one append: safe from the pool's threads

        counted.counted_by_inductor_bench = True  # type: ignore[attr-defined]
        CppBuilder.build = counted  # type: ignore[method-assign]


def cache_record(rec: CompileRecorder, compiles: list[dict[str, Any]]) -> dict[str, Any] | None:
    """What the run found in its Inductor cache (``TORCHINDUCTOR_CACHE_DIR``): the FX graph
    cache's counts, each graph's verdict and the bypass reasons, the kernel libraries this process
    built while it ran (those the graphs that hit built apart: kernels built again where the
    libraries' keys differ from those that filled the cache) and the seconds its compiles spent
    compiling kernels (``compile_phases.KERNELS``); and AOTAutograd's cache's counts and bypass
    reasons (its miss traces the joint graph again behind an FX hit)."""
    counts = fx_cache_counts()
    if counts is None:
        return None
    kernel_s = compile_phases.of_compiles(compiles).get(compile_phases.KERNELS, 0.0)
    return {**counts, "bypass_reasons": rec.bypass_reasons, "kernels_built": rec.kernels_built(),
            "kernel_s": round(kernel_s, 3), **aot_cache_counts(),
            "aot_bypass_reasons": rec.aot_bypass_reasons, "fx_verdicts": [[n, v] for n, v, _ in rec.verdicts],
            "kernels_built_on_hits": rec.kernels_built_on_hits()}


def dynamo_graph_count() -> int | None:
    """The graphs Dynamo captured in this process, whichever backend compiled them."""
    try:
        from torch._dynamo.utils import counters
    except ImportError:
        return None
    return int(counters.get("stats", {}).get("unique_graphs", 0))


# Dynamo's ``graph_breaks`` logging artifact: the user's stack and the exception of each break,
# where the structured trace has no break record (torch 2.5); off unless asked for.
BREAK_LOGGERS = ("torch._dynamo.symbolic_convert.__graph_breaks",
                 "torch._dynamo.convert_frame.__graph_breaks")


class BreakRecorder(logging.Handler):
    """Keeps the text of each ``dynamo_graph_break_reason`` record of the structured trace, and
    of each record of the ``graph_breaks`` logging artifact."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.payloads: list[str] = []
        self.logged: list[tuple[str, str]] = []  # (message, the exception's text)

    def emit(self, record: logging.LogRecord) -> None:
        if record.name in BREAK_LOGGERS:
            with contextlib.suppress(Exception):  # evidence only
                error = record.exc_info[1] if record.exc_info else None
                self.logged.append((record.getMessage(), str(error) if error is not None else ""))
            return
        md = getattr(record, "metadata", None)
        if isinstance(md, dict) and (md.get("artifact") or {}).get("name") == BREAK_ARTIFACT:
            payload = getattr(record, "payload", None)
            if isinstance(payload, str):
                self.payloads.append(payload)

    def found(self) -> list[dict[str, Any]]:
        """The breaks met so far: from the structured trace's records, else from the logging
        artifact's with Dynamo's counts, else from Dynamo's counters alone (no place)."""
        with contextlib.suppress(Exception):  # evidence only: never fails a run
            import torch

            where = os.path.dirname(torch.__file__)  # torch's own code: its breaks say whence
            if self.payloads:
                return graph_breaks.collect(graph_breaks.parse(p, where) for p in self.payloads)
            from torch._dynamo.utils import counters

            counted = dict(counters.get("graph_break", {}))
            if self.logged:
                logged = [graph_breaks.from_log(m, e, where) for m, e in self.logged]
                return graph_breaks.with_counts(logged, counted)
            return graph_breaks.collect(graph_breaks.from_counter(str(k), n) for k, n in counted.items())
        return []


def attach_break_recorder() -> BreakRecorder:
    rec = BreakRecorder()
    trace_log.attach(rec)
    for name in BREAK_LOGGERS:
        log = logging.getLogger(name)
        if not log.isEnabledFor(logging.DEBUG):  # not asked for (TORCH_LOGS): kept off the console
            log.propagate = False
        log.setLevel(logging.DEBUG)
        log.addHandler(rec)
    return rec


class CompileRecorder(logging.Handler):
    """Keeps each ``recompile_reasons`` record of the structured trace and each record of a
    compile's times, with its compile id, and each recompile limit hit Dynamo warns of, with the
    compile that met it."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.records: list[dict[str, Any]] = []
        self.limits: list[tuple[Any, Any, dict[str, Any]]] = []
        self.timed: list[tuple[Any, Any, dict[str, float]]] = []
        self.facts: list[tuple[Any, Any, dict[str, Any]]] = []  # each compile's function, ops, failure
        self.bypass_reasons: list[str] = []  # each once, in the order met
        self.aot_bypass_reasons: list[str] = []  # AOTAutograd's cache's, the same way
        self.timers: list[compile_phases.Event] = []  # torch's compile timers (core/compile_phases.py)
        # each graph's FX graph cache verdict: (compile name, hit | miss | bypass, the kernel
        # libraries built in this process when it was written); those built from now on counted
        self.verdicts: list[tuple[str, str, int]] = []
        self.builds_from = len(KERNEL_BUILDS)

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):  # evidence only: never fails a compile
            if record.name == LIMIT_LOGGER:
                if str(record.msg).startswith(compiles.LIMIT_WARNING):
                    hit = compiles.limit_hit(record.args if isinstance(record.args, tuple) else ())
                    if hit is not None:
                        self.limits.append((*_current_compile(), hit))
                return
            md, payload = getattr(record, "metadata", None), getattr(record, "payload", None)
            if not isinstance(md, dict):
                return
            ids = md.get("frame_id"), md.get("frame_compile_id")
            if "chromium_event" in md and payload:  # one of torch's compile timers
                timer = compile_phases.event(md, json.loads(payload) if isinstance(payload, str) else payload)
                if timer is not None:
                    self.timers.append(timer)
                return
            artifact = (md.get("artifact") or {}).get("name")
            if artifact == RECOMPILE_ARTIFACT and isinstance(payload, str):
                self.records.append(compiles.record(*ids, payload))
            if artifact in BYPASS_ARTIFACTS and isinstance(payload, str):
                self._bypassed(json.loads(payload), self.bypass_reasons)
            if artifact in FX_VERDICTS:
                name = compiles.compile_name(*ids) if ids[0] is not None else ""  # "": not named
                self.verdicts.append((name, FX_VERDICTS[artifact], self.kernels_built()))
            if artifact == AOT_BYPASS_ARTIFACT and isinstance(payload, str):
                self._bypassed(json.loads(payload), self.aot_bypass_reasons)
            for name in compiles.METRICS.keys() & md.keys():
                self.timed.append((*ids, compiles.seconds(name, md[name])))
                facts = compiles.frame_facts(name, md[name])
                if facts.get("failed") and _graph_break(md[name].get("fail_type")):
                    del facts["failed"]  # a break that skipped the frame: the break recorder has it
                self.facts.append((*ids, facts))

    @staticmethod
    def _bypassed(info: dict[str, Any], reasons: list[str]) -> None:
        reason = info.get("cache_bypass_reason") if info.get("cache_state") == "bypass" else None
        if isinstance(reason, str) and (reason := graph_breaks.one_line(reason)) not in reasons:
            reasons.append(reason)

    def kernels_built(self) -> int:
        """The kernel libraries this process built since the recorder was made."""
        return len(KERNEL_BUILDS) - self.builds_from

    def kernels_built_on_hits(self) -> int | None:
        """Of them, those built for the graphs that hit the FX graph cache (each graph's built
        before its verdict); None where no verdict was written."""
        if not self.verdicts:
            return None
        before = [0] + [n for _, _, n in self.verdicts]
        each = zip(self.verdicts, before, strict=False)
        return sum(n - b for (_, verdict, n), b in each if verdict == "hit")

    def found(self) -> list[dict[str, Any]]:
        with contextlib.suppress(Exception):  # evidence only: never fails a run
            return compiles.merge(self.records, self.limits, self.timed, self.facts,
                                  compile_phases.spans(self.timers))
        return []


# Dynamo's exceptions it breaks a graph (or skips a frame) at, rather than fails: it runs the
# function eagerly whatever ``suppress_errors`` says (``torch/_dynamo/convert_frame.py``)
SOFT_FAILURES = ("Unsupported", "UserError", "SkipFrame", "RecompileLimitExceeded", "CacheLimitExceeded",
                 "FailOnRecompileLimitHit", "SkipCodeRecursiveException")


def _graph_break(fail_type: Any) -> bool:
    """Whether a compile's ``fail_type`` names one of ``SOFT_FAILURES`` (or a subclass)."""
    import torch._dynamo.exc as exc

    cls = getattr(exc, str(fail_type), None)
    soft = tuple(c for c in (getattr(exc, n, None) for n in SOFT_FAILURES) if isinstance(c, type))
    return isinstance(cls, type) and issubclass(cls, soft)


def _current_compile() -> tuple[Any, Any]:
    """(frame id, frame compile id) of the compile under way, (None, None) outside one."""
    from torch._guards import CompileContext

    cid = CompileContext.current_compile_id()
    return (cid.frame_id, cid.frame_compile_id) if cid is not None else (None, None)


def attach_compile_recorder() -> CompileRecorder:
    count_kernel_builds()
    rec = CompileRecorder()
    trace_log.attach(rec)
    logging.getLogger(LIMIT_LOGGER).addHandler(rec)  # its level and propagation stay torch's
    time_isa_probe(rec)
    return rec


def time_isa_probe(rec: CompileRecorder) -> None:
    """Inductor probes which vector instruction sets the CPU has once per process, by compiling
    and loading small C++ programs (``cpu_vec_isa.valid_vec_isa_list``, torch 2.5 to 2.15; the
    first C++ GEMM template or kernel asks): torch times the compiler runs, not the loads, each a
    process of its own; seconds that read as lowering under max-autotune. The probe becomes one
    more timer, ``compile_phases.ISA_PROBE``, in torch's clock (``time.time_ns``); its calls
    after the first return the cached answer and are not kept."""
    with contextlib.suppress(Exception):  # evidence only: never in the compile's way
        from torch._inductor import cpu_vec_isa

        probe = cpu_vec_isa.valid_vec_isa_list
        if getattr(probe, "timed_by_inductor_bench", False):
            return

        def timed() -> Any:
            t0 = time.time_ns()
            try:
                return probe()
            finally:
                us = (time.time_ns() - t0) / 1e3
                if us >= ISA_PROBE_MIN_US:
                    rec.timers.append((None, None, compile_phases.ISA_PROBE, f"X{us}", t0 / 1e3, None))

        timed.cache_clear = getattr(probe, "cache_clear", lambda: None)  # type: ignore[attr-defined]
        timed.timed_by_inductor_bench = True  # type: ignore[attr-defined]
        cpu_vec_isa.valid_vec_isa_list = timed


ISA_PROBE_MIN_US = 1000.0  # a probe answered from its cache takes microseconds: not a timer
