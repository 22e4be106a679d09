"""What a breakdown run records beside its graphs: peak memory, the Inductor cache it
compiled in, the process-wide torch settings, the step and graphs timed in turns (saved under
``extras`` of ``breakdown.json``, ``core/results.py``), and the totals of all its graphs.
Plain data; pure, no torch."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from .cache_verdicts import named_for


@dataclass
class PeakMemory:
    """Peak memory of the real model's steady state, as the backend counts it."""

    bytes: int
    kind: str  # "cuda max allocated" | "process peak RSS"


SHARED_CACHE = "inductor-bench's private cache (reused across runs)"


@dataclass
class CompileCache:
    """The Inductor cache a run compiled in, and what Inductor's FX graph cache found there."""

    dir: str
    shared: bool  # the private cache reused across runs (else a fresh one, --fresh-cache)
    fx_hits: int | None = None
    fx_misses: int | None = None
    # graphs the FX graph cache would not keep (a higher-order op, a custom pass ...), and why,
    # in torch's words; None: not counted (a result from before they were)
    fx_bypassed: int | None = None
    bypass_reasons: list[str] = field(default_factory=list)
    # C++ kernel libraries the run's compile built (not another run's sharing the cache), and its
    # compiles' seconds compiling kernels (the compile phases' figure); None: not counted (a
    # result from before they were). An FX graph cache hit keeps a module's Python, not its
    # kernels: their libraries are found by a key of their own, which holds the compiler's
    # command line (torch's install path among it)
    kernels_built: int | None = None
    kernel_s: float | None = None
    # AOTAutograd's cache in front of it (its counters: one entry per compiled frame, its
    # forward and backward together): a miss or a bypass traces and partitions the joint graph
    # again even where every FX graph hits; None: not counted (a result from before they were)
    aot_hits: int | None = None
    aot_misses: int | None = None
    aot_bypassed: int | None = None
    aot_bypass_reasons: list[str] = field(default_factory=list)
    aot_saved: int | None = None  # entries written (a training graph's once its backward compiled)
    # Each graph's FX graph cache verdict in the order compiled: [compile name, "hit" | "miss" |
    # "bypass"] (torch 2.6 on), and the kernel libraries of ``kernels_built`` that the graphs that
    # hit built (each graph's built before its verdict is written); None: not counted
    fx_verdicts: list[list[str]] = field(default_factory=list)
    kernels_built_on_hits: int | None = None

    @classmethod
    def of_record(cls, cache_dir: str, shared: bool, record: dict[str, Any] | None) -> CompileCache:
        """From the compile worker's record of its cache (``runner/dynamo_counts.cache_record``:
        the FX graph cache's ``hits``, ``misses`` and ``bypassed``, every other figure under its
        name here); a figure it has not (None) stays not counted."""
        rec = dict(record or {})
        fx = {f"fx_{k}": rec.pop(k) for k in ("hits", "misses", "bypassed") if k in rec}
        names = {f.name for f in fields(cls)} - {"dir", "shared"}
        rest = {k: v for k, v in rec.items() if k in names and v is not None}
        return cls(cache_dir, shared, **fx, **rest)

    def describe(self, graph_ids: list[str] | None = None) -> str:
        """The cache's outcome; ``graph_ids``: the run's graphs, which a partial hit names."""
        where = SHARED_CACHE if self.shared else "fresh cache (cold compile)"
        if self.fx_hits is None:
            return where
        bypassed = self.fx_bypassed or 0
        if self.fx_hits and not (self.fx_misses or bypassed):
            hit = "an FX graph cache hit" if self.kernels_built else "a cache hit"
        elif self.fx_hits:
            hit = "partly a cache hit"
        elif self.fx_misses or not bypassed:
            hit = "a cache miss"
        else:
            hit = "bypassed, compiled anew on every run"
        why = f"; bypassed because: {'; '.join(self.bypass_reasons)}" if self.bypass_reasons else ""
        return f"{where}: {hit} ({self._counts(graph_ids or [])}){self._kernels()}{why}{self._aot_autograd()}"

    def _counts(self, graph_ids: list[str]) -> str:
        """``2 FX graph cache hits, 1 miss``, and where some hit and some did not, the graphs each
        fell on (``1 FX graph cache hit: graph 0-inference; 1 miss: graph 1-inference``; by their
        compile where its graphs cannot be told apart: ``compile 1``)."""
        counts = [(self.fx_hits or 0, "FX graph cache hit", "FX graph cache hits", "hit"),
                  (self.fx_misses or 0, "miss", "misses", "miss"),
                  (self.fx_bypassed or 0, "bypassed", "bypassed", "bypass")]
        shown = [c for c in counts if c[0] or c[3] != "bypass"]
        partly = self.fx_hits and (self.fx_misses or self.fx_bypassed) and self.fx_verdicts
        return ("; " if partly else ", ").join(
            counted(n, one, many) + (named_for(self.fx_verdicts, state, graph_ids) if partly else "")
            for n, one, many, state in shown)

    def _kernels(self) -> str:
        """The C++ kernels compiled: on a hit, those built again; where some graphs hit and some
        did not, all of them and how many the graphs that hit built again."""
        if self.fx_hits and not (self.fx_misses or self.fx_bypassed):
            return self._kernels_again()
        if self.fx_hits and self.kernels_built == 0:
            return "; C++ kernels built: none (the cache held those of the graphs that did not hit too)"
        if not (self.fx_hits and self.kernels_built):
            return ""  # a miss builds its kernels: nothing to add; or not counted
        secs = f", {self.kernel_s:.1f} s compiling kernels" if self.kernel_s else ""
        out = f"; C++ kernels built: {counted(self.kernels_built, 'library', 'libraries')}{secs}"
        hits, its = ("graph that hit", "its") if self.fx_hits == 1 else ("graphs that hit", "their")
        again = self.kernels_built_on_hits
        if again is None:  # not counted apart
            return f"{out}, for the graphs that did not hit and perhaps again for the {hits}"
        if not again:
            return f"{out}, none of them for the {hits} (the cache held {its} kernels)"
        return (f"{out}, {again} of them again for the {hits} (the cache holds none of {its} kernels built "
                "with this torch install's compiler command line)")

    def _aot_autograd(self) -> str:
        """AOTAutograd's cache outcome, where counted; what a miss or a bypass cost said where
        the FX graph cache hit (the hit reads as if nothing was traced again)."""
        if self.aot_hits is None:
            return ""
        out = (f"; AOTAutograd cache: {counted(self.aot_hits, 'hit', 'hits')}, "
               f"{counted(self.aot_misses or 0, 'miss', 'misses')}")
        if self.aot_bypassed:
            out += f", {self.aot_bypassed} bypassed"
        if self.fx_hits and self._aot_traced_behind_hits():
            out += " (AOTAutograd traced its graphs again)"
        unsaved = (self.aot_misses or 0) - (self.aot_saved or 0) - (self.aot_bypassed or 0)
        if self.aot_saved is not None and unsaved > 0:
            out += (f", {unsaved} not saved (torch saves a training graph's entry once its backward "
                    "has compiled: a forward run with grad enabled and no backward leaves none)")
        if self.aot_bypass_reasons:
            out += f"; bypassed because: {'; '.join(self.aot_bypass_reasons)}"
        return out

    def _aot_traced_behind_hits(self) -> bool:
        """Whether AOTAutograd's cache missed or bypassed a compile whose FX graphs all hit: a
        compile whose graph missed the FX graph cache misses AOTAutograd's too, as a rule (one
        entry per compile); not known apart (no verdicts kept), any miss or bypass."""
        traced = (self.aot_misses or 0) + (self.aot_bypassed or 0)
        if not (self.fx_misses or self.fx_bypassed) or not self.fx_verdicts:
            return traced > 0
        missed = {name for name, verdict in self.fx_verdicts if verdict != "hit"}
        return traced > len(missed)

    def _kernels_again(self) -> str:
        """On an FX graph cache hit, the kernels it built all the same: its C++ libraries' keys
        found none in the cache (filled by another torch install, or compiler); "" where none."""
        if not self.kernels_built:
            return ""
        libs = "1 library" if self.kernels_built == 1 else f"{self.kernels_built} libraries"
        secs = f", {self.kernel_s:.1f} s compiling kernels" if self.kernel_s else ""
        return (f", but its C++ kernels were built again ({libs}{secs}): the cache holds none built "
                "with this torch install's compiler command line")

    def to_dict(self) -> dict[str, Any]:
        """As ``asdict``, without the fields not counted (a result saved before they were reads
        back as it was saved)."""
        d = asdict(self)
        for name in ("fx_bypassed", "kernels_built", "kernel_s", "aot_hits", "aot_misses", "aot_bypassed",
                     "aot_saved", "kernels_built_on_hits"):
            if d[name] is None:
                del d[name]
        for name in ("bypass_reasons", "aot_bypass_reasons", "fx_verdicts"):
            if not d[name]:
                del d[name]
        return d


def counted(n: int, one: str, many: str) -> str:
    """``1 miss``, ``2 misses``."""
    return f"{n} {one if n == 1 else many}"


@dataclass
class TorchSettings:
    """Process-wide precision/backend settings the model ran with (read after its first
    step), and those it changed from the values torch started with."""

    values: dict[str, Any]
    changed: list[str] = field(default_factory=list)
    # Those the model's factory had changed when it returned, as it left them (None: not
    # read, a script's run or an older result). torch may change one again while the model
    # runs: before 2.9 Dynamo's compile turns matmul precision "medium" into "high".
    model_set: dict[str, Any] | None = None

    # Shown in every report, changed or not: they decide which matmul kernels run.
    HEADLINE = ("float32_matmul_precision",)

    def shown(self) -> dict[str, Any]:
        keys = dict.fromkeys([*self.HEADLINE, *self.changed, *(self.model_set or ())])  # in order, once
        return {k: self.values[k] for k in keys if k in self.values}

    def origin(self, key: str) -> str:
        """How a shown setting came to have its value ("" for torch's own default)."""
        if self.model_set and key in self.model_set and self.model_set[key] != self.values[key]:
            return f"the model set {self.model_set[key]}, changed while it ran"
        if key not in self.changed:
            return ""
        if self.model_set is not None and key not in self.model_set:
            return "changed while the model ran"
        return "set by the model"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if self.model_set is None:
            del d["model_set"]
        return d


@dataclass
class StepTurns:
    """The real step and each graph's own call (its harness), timed in turns in one process
    (the compile worker): rounds of one block per side, the order reversed every other round,
    so that the process's drift falls on all alike. ``blocks[0][r]`` holds round r's step
    times, ``blocks[i][r]`` graph ``graphs[i - 1]``'s, in ms per call. ``error``: why there
    are none (the split then falls back to the profiled graph times). ``load``: the load from
    other processes while the rounds ran (``core/load.Load``'s saved form; None: not read)."""

    graphs: list[str] = field(default_factory=list)
    blocks: list[list[list[float]]] = field(default_factory=list)
    error: str | None = None
    load: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Its saved form; the load only where it was read."""
        d = asdict(self)
        if self.load is None:
            del d["load"]
        return d


@dataclass
class Totals:
    """All graphs of one step (or script) together, each weighed by its calls
    (``core/step_totals.py``): each figure the exact weighted sum of the graphs' own."""

    wall_ms: float
    busy_ms: float
    kernel_ms: float
    categories: dict[str, float]
    kernel_count: int
    graphs: int
    iterations: int = 0  # profiled, over all graphs
    left_out: int = 0  # of them, left out as disturbed
    # Graph id -> the calls its figures were weighed by (per step, or in the script); empty:
    # each graph once (its calls were not counted).
    weights: dict[str, float] = field(default_factory=dict)

    @property
    def busy_pct(self) -> float:
        return 100.0 * self.busy_ms / self.wall_ms if self.wall_ms > 0 else 0.0
