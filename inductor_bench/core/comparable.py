"""Whether two results can be compared at all, what a reader should know when they differ in
something that does not stop the comparison, and which modes of two compare results ran on
one side only; pure, no torch."""

from __future__ import annotations

from .arg_changes import arg_changes
from .categories import label
from .compare import CompareResult
from .compare_gate import unmeasured_columns
from .compiled_from import code_label, function_name, same_code
from .devices import AUTO
from .judged import rules_differ
from .match import match_kernels
from .results import BreakdownResult
from .settings_differ import settings_differ
from .symbols import sizes_text
from .unmeasured import Unmeasured, calls_changed
from .vocab import Role

Result = BreakdownResult | CompareResult


def comparability(base: Result, head: Result) -> tuple[list[str], list[str]]:
    """(problems, notes): problems make the numbers meaningless, notes are worth a line."""
    problems: list[str] = []
    notes: list[str] = []
    if AUTO in (base.device, head.device):  # a run stopped before its worker said where it ran
        sides = (("base", base), ("head", head))
        notes += [f"{side} stopped before its device was known" for side, r in sides if r.device == AUTO]
    elif base.device != head.device:
        problems.append(f"base ran on {base.device}, head on {head.device}")
    elif base.device_name and head.device_name and base.device_name != head.device_name:
        problems.append(f"base ran on {base.device_name!r}, head on {head.device_name!r}")
    if trains(base) != trains(head):
        problems.append(f"base is {_step_kind(base)}, head is {_step_kind(head)}")
    if base.model != head.model:
        notes.append(f"different models: base {base.model!r}, head {head.model!r}")
    both_breakdowns = isinstance(base, BreakdownResult) and isinstance(head, BreakdownResult)
    if both_breakdowns and base.mode != head.mode:
        notes.append(f"compile modes differ: base {base.mode}, head {head.mode}")
    if None not in (base.freezing, head.freezing) and base.freezing != head.freezing:  # None: not recorded
        notes.append(f"freezing differs: base {_freezing(base)}, head {_freezing(head)} (with --freezing the "
                     "weights are constants: Inductor compiles other code for them)")
    if both_breakdowns:
        notes += sizes_differ(base, head)
        notes += other_code(base, head)
        notes += other_inputs(base, head)
        notes += recategorized(base, head)
        if base.script and head.script and base.script_args != head.script_args:
            changes = arg_changes(base.script_args, head.script_args)
            notes.append("the script ran with other arguments: "
                         + "; ".join(c.words("in base", "in head") for c in changes))
        if stopped_apart(base, head):
            notes.append(f"the script was stopped (--script-seconds): base {_stopped(base)}, head "
                         f"{_stopped(head)}; its graphs' calls count how long it ran, not what it does, so "
                         "the sums over its graphs (step, kernel time, categories) are not judged")
    if isinstance(base, CompareResult) and isinstance(head, CompareResult):
        notes += memory_kinds_differ(base, head)
        notes += caches_differ(base, head)
        notes += column_sizes_differ(base, head)
    notes += settings_differ(base, head)
    notes += [f"{d}; the same source runs each one's own ATen and compiler, so no kernel is "
              "judged the same code" for d in runtimes_differ(base, head)]
    notes += rules_differ(base, head)
    return problems, notes


def runtimes_differ(base: Result, head: Result) -> list[str]:
    """What of the torch and Triton each side ran differs (``torch versions differ: base 2.5.1,
    head 2.14.1``): where it does, one source is not one code (its ATen, its compiler, the
    headers a C++ kernel is built against are each side's own)."""
    out = []
    for lib in ("torch", "triton"):
        b, h = base.versions.get(lib), head.versions.get(lib)
        if b and h and b != h:
            out.append(f"{lib} versions differ: base {b}, head {h}")
    return out


def memory_kinds_differ(base: CompareResult, head: CompareResult) -> list[str]:
    """Peak memory counted two ways (a run whose host peak included compilation, against one
    reset after the first call): its row compares the counting, not the model."""
    kinds = [{m.peak_memory_kind for m in r.modes if m.peak_memory_kind} for r in (base, head)]
    if not all(kinds) or kinds[0] == kinds[1]:
        return []
    return [f"peak memory was counted another way: base {', '.join(sorted(kinds[0]))}, head "
            f"{', '.join(sorted(kinds[1]))}; its row compares the counting as much as the model"]


def caches_differ(base: CompareResult, head: CompareResult) -> list[str]:
    """A line where one side's columns compiled cold, each in a fresh cache, and the other's in
    inductor-bench's cache reused across runs (``compare --warm-cache``): its compile times
    compare the caches. A side whose columns recorded no cache is not known to differ."""
    kinds = [_cache_kind(r) for r in (base, head)]
    if None in kinds or kinds[0] == kinds[1]:
        return []
    return [f"compile caches differ: base {kinds[0]}, head {kinds[1]}; the compile time rows compare "
            "the caches as much as the compiles"]


def column_sizes_differ(base: CompareResult, head: CompareResult) -> list[str]:
    """``sizes_differ`` for each column the two compares both profiled, after its label
    (``default: 0-forward was profiled at other sizes: ...``)."""
    out = []
    for b in base.modes:
        h = head.mode(b.label)
        if b.breakdown is not None and h is not None and h.breakdown is not None:
            out += [f"{b.label}: {line}" for line in sizes_differ(b.breakdown, h.breakdown)]
    return out


def _cache_kind(r: CompareResult) -> str | None:
    shared = {m.breakdown.compile_cache.shared for m in r.modes
              if m.breakdown is not None and m.breakdown.compile_cache is not None}
    if not shared:
        return None
    return {frozenset({False}): "compiled cold (a fresh cache per mode)",
            frozenset({True}): "compiled in the warm cache (--warm-cache)"}.get(
        frozenset(shared), "compiled partly cold, partly in the warm cache")


def stopped_apart(base: BreakdownResult, head: BreakdownResult) -> bool:
    """A script stopped by ``--script-seconds`` on either side, whose graphs were called a
    different number of times on each: the calls measure the time it ran, not its work."""
    stopped = base.script_stopped_s is not None or head.script_stopped_s is not None
    return stopped and bool(calls_changed(base, head))


def _stopped(r: BreakdownResult) -> str:
    return "ran to its end" if r.script_stopped_s is None else f"stopped after {r.script_stopped_s:.1f} s"


def other_inputs(base: BreakdownResult, head: BreakdownResult) -> list[str]:
    """A line where one side's graphs ran on the harness's random floats (a run saved before
    floats were recorded: two counts per graph) and the other's on the model's own values."""
    def floats_recorded(r: BreakdownResult) -> bool | None:
        counts = [g.first_call_inputs for g in r.measured() if g.first_call_inputs]
        return all(len(c) > 2 for c in counts) if counts else None

    b, h = floats_recorded(base), floats_recorded(head)
    if b is None or h is None or b == h:
        return []
    side = {True: "the model's own values", False: "the harness's random floats"}
    return [f"the graphs ran on other inputs: base on {side[b]}, head on {side[h]} (a kernel "
            "whose speed follows its data, a transcendental on large values, can differ for that alone)"]


def recategorized(base: BreakdownResult, head: BreakdownResult) -> list[str]:
    """A line where kernels of the same name fall in other categories on the two sides: one
    side was classified by another analysis (a run saved before a category existed)."""
    pairs, _, _ = match_kernels(base.graphs, head.graphs)
    moved = [(b.kernel, h.kernel) for b, h, how in pairs
             if how == "name" and b.kernel.category != h.kernel.category]
    if not moved:
        return []
    b, h = moved[0]
    return [f"{len(moved)} kernel(s) of the same name are in other categories on the two sides "
            f"(e.g. {h.name}: {label(b.category)} in base, {label(h.category)} in head), so their "
            "category rows hold other kernels; `report RUN --reanalyze` classifies a run saved by "
            "an earlier analysis again"]


def sizes_differ(base: BreakdownResult, head: BreakdownResult) -> list[str]:
    """A line for each graph of dynamic shapes profiled at other sizes on the two sides."""
    heads = {g.id: g.sizes for g in head.graphs}
    out = []
    for g in base.graphs:
        h = heads.get(g.id)
        # by value: torch versions name the same symbol differently (s0, s77)
        if h is not None and list(g.sizes.values()) != list(h.values()):
            out.append(f"{g.id} was profiled at other sizes: base {_sizes(g.sizes)}, head {_sizes(h)} "
                       "(dynamic shapes: the sizes most of its calls ran at, or its module's size hints)")
    return out


def other_code(base: BreakdownResult, head: BreakdownResult) -> list[str]:
    """A line for each graph of the same id compiled from another function on each side."""
    heads = {g.id: g for g in head.graphs}
    out = []
    for g in base.graphs:
        h = heads.get(g.id)
        if h is None or same_code(g, h):
            continue
        base_label, head_label = code_label(g.compiled_from), code_label(h.compiled_from)
        if function_name(g.compiled_from) == function_name(h.compiled_from):
            out.append(f"{g.id} was compiled from a function of the same name in another file: base "
                       f"{base_label}, head {head_label} (a function is known by its name and file, "
                       "not its source: a copy of one model in another file differs so too)")
        else:
            out.append(f"{g.id} was compiled from other code: base {base_label}, "
                       f"head {head_label}: its figures compare two functions")
    return out


def _sizes(sizes: dict[str, int]) -> str:
    return sizes_text(sizes) or "static shapes"


def trains(r: Result) -> bool:
    """Whether the run's step trains. A factory model's does with --train; a script runs what
    it runs, so its does when it called a backward graph (one whose calls were not counted
    may have been called). Dynamo compiles a dynamic-shape graph's backward with its forward,
    called or not: one compiled and never called does not train."""
    if not (isinstance(r, BreakdownResult) and r.script):
        return r.train
    return any(g.calls != 0 for g in r.graphs if g.role == Role.BACKWARD)


def _step_kind(r: Result) -> str:
    return "training (forward + backward)" if trains(r) else "inference"


def unmeasured_modes(base: CompareResult, head: CompareResult) -> list[Unmeasured]:
    """The columns of two compare results that ran on one side and not on the other (a mode
    missing from an interrupted run included: a finished run without it did not ask for it)."""
    names = [m.label for m in base.modes] + [m.label for m in head.modes if not base.mode(m.label)]
    out = []
    for name in names:
        b, h = base.mode(name), head.mode(name)
        missing_from = base if b is None else head if h is None else None
        if missing_from is not None and "interrupted" not in missing_from.errors:
            continue
        if b is None or h is None or not (b.ok and h.ok):
            out += unmeasured_columns(b, h, name)
    return out


def _freezing(r: Result) -> str:
    return "--freezing" if r.freezing else "without it"
