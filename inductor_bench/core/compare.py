"""Compile modes side by side: the records (pure; no torch).

A ``CompareResult`` holds one ``ModeResult`` per mode: compile time (the first call, timed
on its own), steady-state step samples of the real model call (so CUDA graphs count),
peak memory, and the mode's full ``BreakdownResult``. It is saved as ``compare.json``;
``runner/compare.py`` runs the modes. Its verdicts: ``compare_summary.py`` (the speedups),
``compare_gate.py`` (several model files).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields
from typing import Any

from .compare_saved import one_file_named
from .compare_summary import column_marks as column_marks

# the verdicts (``compare_summary.py``), here for the modules that import them from this one
from .compare_summary import fastest as fastest
from .compare_summary import few_steady as few_steady
from .compare_summary import judge as judge
from .compare_summary import outside_load as outside_load
from .compare_summary import quiet_moments as quiet_moments
from .compare_summary import summary
from .compare_summary import timed as timed
from .compare_summary import too_disturbed as too_disturbed
from .compare_summary import unranked as unranked
from .compare_threads import threads_lost
from .devices import HOST_BACKEND, canonical_name
from .errors import ResultError
from .load import Load
from .results import BreakdownResult, StepTurns
from .stats import Change, Summary, summarize
from .steady import RULES
from .step import TURNS_SPEED_LIMIT, StepSplit, split_in_turns, split_step
from .vocab import CompileMode, Status

COMPARE_SCHEMA = "inductor-bench/compare"
COMPARE_SCHEMA_VERSION = 1
TURNS_FIELDS = {f.name for f in fields(StepTurns)}

EAGER = CompileMode.EAGER
DEFAULT = CompileMode.DEFAULT
# Why a column of an interrupted compare has nothing: it had not started, or was cut short.
NOT_RUN_INTERRUPTED = "not run: the compare was interrupted before this column finished"
# ... or was stopped as its compiled graphs were profiled: what was, saved in its own folder
INTERRUPTED_PROFILING = "interrupted while being profiled, after compiling"


def interrupted_profiling(compile_s: float | None, graphs: int) -> str:
    """Why a column stopped as its graphs were profiled has no step time or verdict:
    ``interrupted while being profiled, after compiling (40.2 s); 1 graph profiled, saved in its
    folder``."""
    took = f" ({compile_s:.1f} s)" if compile_s else ""
    done = f"{graphs} graph{'' if graphs == 1 else 's'} profiled" if graphs else "no graph profiled"
    return f"{INTERRUPTED_PROFILING}{took}; {done}, saved in its folder"


@dataclass
class ModeResult:
    """One compile mode of one model."""

    mode: str
    status: str = Status.OK  # ok | skipped | failed | timeout | interrupted
    reason: str | None = None  # why skipped / failed
    compile_s: float | None = None  # first call, timed on its own; 0 for eager
    step_samples_ms: list[float] = field(default_factory=list)  # real model call, steady state
    peak_memory_bytes: int | None = None
    peak_memory_kind: str = ""  # "cuda max allocated" | "process peak RSS"
    breakdown: BreakdownResult | None = None  # None for eager and for modes that did not run
    run_dir: str = ""
    step_load: Load | None = None  # load from other processes while the steps were timed
    model: str = ""  # the model's name when the comparison has several model files
    model_path: str = ""
    # step times from the interleaved timing of every side in one process: blocks[round]
    paired_ms: list[list[float]] = field(default_factory=list)
    # the same process's step and the column's graphs' own calls in turns (the host): the
    # time outside the graphs comes from the process that timed the step
    step_turns: StepTurns | None = None

    @property
    def ok(self) -> bool:
        return self.status == Status.OK

    @property
    def label(self) -> str:
        """How tables and verdicts name it: the mode, after the model when there are several."""
        return f"{self.model}:{self.mode}" if self.model else self.mode

    @property
    def samples(self) -> list[float]:
        """Its steady-state step times: the interleaved ones when it has them."""
        if self.paired_ms:
            return [x for blk in self.paired_ms for x in blk]
        return self.step_samples_ms

    def step(self) -> Summary:
        return summarize(self.samples)

    def split(self) -> StepSplit | None:
        """The step against its graphs: from the timing worker's turns where it made them, else
        from the column's breakdown (its compile worker's)."""
        if self.breakdown is None:
            return None
        b = self.breakdown
        in_timer = split_in_turns(self.step_turns, b.weights()) if all(g.ok for g in b.graphs) else None
        return in_timer or split_step(b)

    def outside_ms(self) -> float | None:
        """The time outside the graphs in a step of this column: the share of the split's own step
        outside them (``split``) times the column's step figure, so that it never exceeds the step
        the comparison shows (the turns and the compile worker timed steps of their own, at the
        machine's speed then). None without a split, and where it is not measurable
        (``outside_measurable``)."""
        s = self.split()
        if s is None or not self.outside_measurable():
            return None
        return s.outside_ms / s.step_ms * self.step().ms

    def outside_measurable(self) -> bool:
        """Whether the split's share outside the graphs is one of the column's step: not where the
        graphs' own calls took longer than the split's step, nor where the split's step took over
        ``TURNS_SPEED_LIMIT`` times the column's step and over that many times what its graphs'
        calls' own slowdown (against their profiled wall) accounts for: a stall met the step's
        blocks and missed the graphs' (seen beside other compiles: the turns' step 9.358 ms
        against the column's 1.234 ms, their graphs 1.060 ms against 1.168 ms profiled, which
        read 88.7% of the step outside the graphs). A step slower in the turns as its graphs
        are (a busier stretch) keeps its share."""
        s = self.split()
        if s is None or s.step_ms <= 0 or s.outside_ms < 0:
            return False
        profiled, step = self.breakdown.totals().wall_ms if self.breakdown else 0.0, self.step().ms
        if profiled <= 0 or s.graphs_ms <= 0 or step <= 0 or s.step_ms <= TURNS_SPEED_LIMIT * step:
            return True
        return (s.step_ms / step) / (s.graphs_ms / profiled) <= TURNS_SPEED_LIMIT

    def kernel_count(self) -> int | None:
        return self.breakdown.totals().kernel_count if self.breakdown else None

    def to_dict(self) -> dict[str, Any]:
        skip = ("breakdown", "step_load", "step_turns")
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in skip}
        d["breakdown"] = self.breakdown.to_dict() if self.breakdown else None
        if self.step_turns is not None:
            d["step_turns"] = self.step_turns.to_dict()
        if self.step_load is not None:
            d["step_load"] = self.step_load.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ModeResult:
        if not isinstance(d, dict) or "mode" not in d:
            raise ResultError("compare result: a mode entry has no 'mode' field")
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in names and k not in ("breakdown", "step_load", "step_turns")}
        bd, load, turns = d.get("breakdown"), d.get("step_load"), d.get("step_turns")
        return cls(
            breakdown=BreakdownResult.from_dict(bd) if bd else None,
            step_load=Load.from_dict(load),
            step_turns=StepTurns(**{k: v for k, v in turns.items() if k in TURNS_FIELDS}) if turns else None,
            **kw,
        )


_UNRECORDED = ("step_budget_s", "rules", "freezing", "finished")  # left out of compare.json when None


@dataclass
class CompareResult:
    model: str
    model_path: str = ""
    device: str = HOST_BACKEND.name
    device_name: str = ""
    train: bool = False
    dtype: str = "float32"
    autocast: bool = False
    batch_size: int | None = None
    freezing: bool | None = False  # --freezing (None: a result saved before it was recorded)
    repeat: int = 1  # timed calls per mode when fixed (--repeat); 0: timed for step_budget_s
    step_budget_s: float | None = None
    versions: dict[str, str] = field(default_factory=dict)
    created: str = ""
    # when the compare wrote this result, at its end (None: a result written before it was recorded)
    finished: str | None = None
    run_dir: str = ""
    modes: list[ModeResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    # the interleaved timing: rounds, calls per block per side, the load meanwhile
    interleaved: dict[str, Any] | None = None
    models: list[str] = field(default_factory=list)  # the model names, when several files
    # columns that compiled the same code for every graph (core/compare.same_code_groups)
    same_code: list[list[str]] = field(default_factory=list)
    rules: int | None = RULES  # the statistics rules that judged it (None: not recorded)
    schema: str = COMPARE_SCHEMA
    schema_version: int = COMPARE_SCHEMA_VERSION

    def mode(self, name: str) -> ModeResult | None:
        """The side labelled ``name`` (``ModeResult.label``)."""
        for m in self.modes:
            if m.label == name:
                return m
        return None

    def interleaved_load(self) -> Load | None:
        return Load.from_dict((self.interleaved or {}).get("load"))

    def rounds_with_every_column(self) -> int:
        """The interleaved rounds in which every timed column ran a block: the rounds a speedup
        is judged on (a column that reached its call limit sits out the later rounds)."""
        blocks = [m.paired_ms for m in self.modes if m.paired_ms]
        return sum(1 for r in zip(*blocks, strict=False) if all(r)) if blocks else 0

    def common_blocks(self, m: ModeResult) -> list[list[float]]:
        """``m``'s interleaved blocks with those of the rounds some timed column sat out emptied:
        the rounds its step time and its speedups are judged on (``rounds_with_every_column``)."""
        blocks = [x.paired_ms for x in self.modes if x.paired_ms]
        if not m.paired_ms:
            return []
        rounds = list(zip(*blocks, strict=False))
        return [list(blk) if i < len(rounds) and all(rounds[i]) else [] for i, blk in enumerate(m.paired_ms)]

    def step_samples(self, m: ModeResult) -> list[float]:
        """The step times a column's figure comes from: those of the rounds every timed column
        ran when it was timed interleaved, else all its samples."""
        if m.paired_ms:
            return [x for blk in self.common_blocks(m) for x in blk]
        return m.step_samples_ms

    def step(self, m: ModeResult) -> Summary:
        """A column's step time as the table shows it (``step_samples``)."""
        return summarize(self.step_samples(m))

    def speedup(self, mode: str, over: str) -> float | None:
        """step(over) / step(mode), the policy's figures; None when either is missing."""
        a, b = self.mode(mode), self.mode(over)
        if not (timed(a) and timed(b)):
            return None
        head = self.step(a).ms
        return self.step(b).ms / head if head > 0 else None

    def to_dict(self) -> dict[str, Any]:
        # no step budget: timed --repeat calls; no rules, freezing or end: saved before they were recorded
        d = {f.name: v for f in fields(self) if f.name != "modes" and (
            (v := getattr(self, f.name)) is not None or f.name not in _UNRECORDED)}
        d["modes"] = [m.to_dict() for m in self.modes]
        d["summary"] = summary(self)  # derived for scripts, never read back (from_dict)
        # speedups lost to disturbed rounds on more threads than the free cores: the setting to try
        lost = threads_lost(self, d["summary"]["speedups"])
        d["summary"]["threads_over_free_cores"] = lost.to_dict() if lost is not None else None
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CompareResult:
        if not isinstance(d, dict) or d.get("schema") != COMPARE_SCHEMA:
            raise ResultError("not an inductor-bench compare result (schema field missing)")
        if d.get("schema_version") != COMPARE_SCHEMA_VERSION:
            raise ResultError(
                f"compare schema version {d.get('schema_version')} is not supported "
                f"(this inductor-bench reads version {COMPARE_SCHEMA_VERSION})"
            )
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in names and k != "modes"}
        kw["device_name"] = canonical_name(str(kw.get("device_name") or ""))
        kw["rules"], kw["freezing"] = d.get("rules"), d.get("freezing")  # none recorded: unknown, no default
        return one_file_named(cls(modes=[ModeResult.from_dict(m) for m in d.get("modes", [])], **kw))


# ---- how the steps were timed ---------------------------------------------------------------

TIMING_FAILED, OWN_SAMPLES = "interleaved timing: ", "; each column's own samples are used"  # in ``errors``


def step_disturbances(result: CompareResult) -> list[str]:
    """What disturbed the timing of the steps, by ``Load.disturbed``: the interleaved timing's
    load, else each column timed on its own (its compile worker's). Empty: nothing did."""
    load = result.interleaved_load()
    out = [f"steps timed while {load.describe()}: the step times may be inflated"] if (
        load is not None and load.disturbed) else []
    return out + column_disturbances(result)


def column_disturbances(result: CompareResult) -> list[str]:
    """The columns not timed interleaved whose own step timing was disturbed."""
    return [f"{m.label}: steps timed while {m.step_load.describe()}: its step time may be inflated"
            for m in result.modes if not m.paired_ms and m.step_load is not None and m.step_load.disturbed]


def unpaired(result: CompareResult) -> list[ModeResult]:
    """The timed columns whose steps were not timed interleaved: their compile worker's own."""
    return [m for m in result.modes if timed(m) and not m.paired_ms]


def timing_failure(result: CompareResult) -> str | None:
    """Why the interleaved timing failed (its worker's error, as ``errors`` keeps it), if it did."""
    said = [e for e in result.errors if e.startswith(TIMING_FAILED)]
    return said[0][len(TIMING_FAILED):].removesuffix(OWN_SAMPLES) if said else None


# ---- columns that compiled the same code -----------------------------------------------------

def same_code_groups(codes: dict[str, dict[str, str]]) -> list[list[str]]:
    """Column label -> {graph id: ``code_digest``} to the groups of two or more columns whose
    graphs are the same and each compiled to the same code, in the columns' order."""
    groups: dict[tuple[tuple[str, str], ...], list[str]] = {}
    for label, graphs in codes.items():
        if graphs:
            groups.setdefault(tuple(sorted(graphs.items())), []).append(label)
    return [g for g in groups.values() if len(g) > 1]


# ---- compile time paid back -----------------------------------------------------------------

def payback_steps(ref: ModeResult, best: ModeResult, ch: Change) -> int | None:
    """Steps after which ``best``'s extra compile time is paid back by its faster steps."""
    if not ch.faster or ref.compile_s is None or best.compile_s is None:
        return None
    extra_ms = 1e3 * (best.compile_s - ref.compile_s)
    saved_ms = -ch.delta_ms
    if extra_ms <= 0 or saved_ms <= 0:
        return None
    return math.ceil(extra_ms / saved_ms)

