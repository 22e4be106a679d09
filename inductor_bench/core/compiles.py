"""Dynamo's compiles of the user's functions, read from torch's own records (pure; no torch):
why each was made again, how long each took, and where Dynamo stopped compiling a function.

Each recompile is a ``recompile_reasons`` artifact of the structured trace (torch 2.5 to
2.15), under the compile id of the new compile, with one reason for each earlier compile of
the function: why its guards failed, ``0/0: tensor 'x' requires_grad mismatch. expected
requires_grad=0``. Torch writes one reason as it is and several as a JSON list, one per line,
the newest compile first (2.5 writes a list always).

Each compile ends with a ``compilation_metrics`` record (2.5 to 2.15): the whole frame's
compile (``entire_frame_compile_time_s``: Dynamo, AOTAutograd and Inductor's forward) and
Inductor's part of it (``inductor_compile_time_s``); a backward Inductor compiles when it is
first run adds a ``bwd_compilation_metrics`` record with its own ``inductor_compile_time_s``.

After ``torch._dynamo.config.recompile_limit`` compiles of one function (``cache_size_limit``
before torch 2.7), Dynamo compiles it no more: it logs ``torch._dynamo hit
config.recompile_limit (8)`` with the function and the last reason, and a later call that
fails the guards of every compile runs eagerly, outside any compiled graph
(``torch/_dynamo/convert_frame.py``).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import step_totals
from .compile_phases import recorded_seconds
from .compiled_from import code_label
from .graph_breaks import one_line
from .results import BreakdownResult, GraphResult

REASON_CHARS = 200
LIMIT_WARNING = "torch._dynamo hit config."
_TORCH_ID = re.compile(r"^(?P<frame>\d+)/(?P<compile>\d+): ")
_LINE = re.compile(r":\d+\)$")
_FUNCTION = re.compile(r"^'?(?P<name>[^']+)'? \((?P<file>.+):(?P<line>\d+)\)$")


def reasons(payload: str) -> list[str]:
    """One artifact's payload -> its reasons, the oldest compile's first, each cut to
    ``REASON_CHARS``."""
    text = payload.strip()
    found: Any = text
    if text.startswith("["):
        try:
            found = json.loads(text)
        except ValueError:
            found = text
    items = [str(x) for x in found] if isinstance(found, list) else [str(found)]
    return [one_line(guard_text(x), REASON_CHARS) for x in reversed(items) if x.strip()]


# a failed guard on a value, as torch 2.13 writes it: the guard, the line it came from and
# where, then the frame's stack:
#   0/0: not ___dict_contains('lr', G['c'].__dict__)      # return x * c.lr  # mp/ex3/rc.py:7 in f
#   User stack trace:
#     File "/tmp/ex3/rc.py", line 7, in f
#       return x * c.lr
_GUARD = re.compile(r"^(?P<guard>.*?)\s+#\s+(?P<code>.*)\s+#\s+"
                    r"(?P<where>[^#\n]+?:\d+) in (?P<fn>[\w<>.]+)\s*$", re.S)
_STACK = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<fn>[\w<>.]+)')


def guard_text(reason: str) -> str:
    """A failed guard's reason with its line, short: ``0/0: not ___dict_contains('lr', ...)
    (rc.py:7 in f: return x * c.lr)``; the file named by its stack's last frame (torch cuts the
    path in its comment), the stack itself left out. Any other reason as it is."""
    head, _, stack = reason.partition("User stack trace:")
    m = _GUARD.match(head.strip())
    if m is None:
        return reason
    frames = list(_STACK.finditer(stack))
    where = (f"{Path(frames[-1]['file']).name}:{frames[-1]['line']}" if frames
             else Path(m["where"]).name)
    return f"{m['guard'].strip()} ({where} in {m['fn']}: {' '.join(m['code'].split())})"


def record(frame_id: Any, frame_compile_id: Any, payload: str) -> dict[str, Any]:
    """A recompile: the compile it made and why (``reasons``)."""
    return {"frame_id": frame_id, "frame_compile_id": frame_compile_id, "reasons": reasons(payload)}


def limit_hit(args: Sequence[Any]) -> dict[str, Any] | None:
    """The arguments of Dynamo's ``hit config.%s (%s)`` warning (the limit's name, its value,
    the function, the last reason, a link; 2.5 to 2.15) -> {"name", "value", "function"};
    None when they are not that."""
    if len(args) < 3:
        return None
    fn = _FUNCTION.match(str(args[2]).strip())
    function = f"{fn['name']} ({Path(fn['file']).name}:{fn['line']})" if fn else str(args[2])
    return {"name": str(args[0]), "value": str(args[1]), "function": function}


# each compile's record of its times: the key its figure is kept under, and torch's field
METRICS = {
    "compilation_metrics": {"frame": "entire_frame_compile_time_s", "inductor": "inductor_compile_time_s"},
    "bwd_compilation_metrics": {"backward": "inductor_compile_time_s"},
}


def seconds(name: str, metrics: Any) -> dict[str, float]:
    """One ``METRICS`` record -> the times it gives, in seconds: ``frame`` and ``inductor`` (the
    forward's), ``backward``; {} for another record."""
    fields = METRICS.get(name)
    if not fields or not isinstance(metrics, dict):
        return {}
    return {key: float(metrics[f]) for key, f in fields.items() if isinstance(metrics.get(f), (int, float))}


def frame_facts(name: str, metrics: Any) -> dict[str, Any]:
    """A frame compile's ``compilation_metrics`` record (2.5 to 2.15) -> what is kept beside its
    times: ``code``, the function compiled (as ``GraphResult.compiled_from`` names one), ``ops``,
    its graph's op count, and ``failed``, torch's error on one line where the compile raised and
    Dynamo went on (``torch._dynamo.config.suppress_errors``); {} for another record."""
    if name != "compilation_metrics" or not isinstance(metrics, dict):
        return {}
    out: dict[str, Any] = {}
    if metrics.get("co_name") and metrics.get("co_filename"):
        out["code"] = {"name": str(metrics["co_name"]), "file": str(metrics["co_filename"]),
                       "line": int(metrics.get("co_firstlineno") or 0)}
    if isinstance(metrics.get("graph_op_count"), int):
        out["ops"] = metrics["graph_op_count"]
    if metrics.get("fail_type"):
        out["failed"] = one_line(f"{metrics['fail_type']}: {metrics.get('fail_reason') or ''}".rstrip(": "),
                                 REASON_CHARS)
    return out


Ids = tuple[Any, Any]  # (frame id, frame compile id)


def merge(records: list[dict[str, Any]], limits: list[tuple[Any, Any, dict[str, Any]]],
          timed: Sequence[tuple[Any, Any, dict[str, float]]] = (),
          facts: Sequence[tuple[Any, Any, dict[str, Any]]] = (),
          timers: dict[Ids, list[Any]] | None = None) -> list[dict[str, Any]]:
    """One entry per compile: its ids, and what was heard of it: ``reasons`` (a recompile's
    ``record``), ``limit`` (the hit it met, ``limit_hit``), ``seconds`` (its times), ``code``,
    ``ops`` and ``failed`` (``frame_facts``), ``timers`` (torch's compile timers as spans,
    ``compile_phases.spans``); ordered by frame and compile."""
    out: dict[Ids, dict[str, Any]] = {}

    def entry(frame: Any, compile_id: Any) -> dict[str, Any]:
        return out.setdefault((frame, compile_id), {"frame_id": frame, "frame_compile_id": compile_id})

    for r in records:
        entry(r["frame_id"], r["frame_compile_id"])["reasons"] = r["reasons"]
    for frame, compile_id, hit in limits:
        entry(frame, compile_id)["limit"] = hit
    for frame, compile_id, secs in timed:
        if secs:
            e = entry(frame, compile_id)
            e["seconds"] = {**e.get("seconds", {}), **secs}
    for frame, compile_id, known in facts:
        if known:
            entry(frame, compile_id).update(known)
    for (frame, compile_id), spans in (timers or {}).items():
        entry(frame, compile_id)["timers"] = spans
    return [out[k] for k in sorted(out, key=lambda k: (k[0] is None, k[0] or 0, k[1] or 0))]


def limits_one_side_only(base: list[dict[str, Any]], head: list[dict[str, Any]]
                         ) -> tuple[list[str], list[str]]:
    """(the functions that hit their recompile limit only in head, those only in base), as
    ``f (m.py:3) (recompile_limit 8)``; the same function on both sides by its name and file (a
    change above it moves its line)."""
    def hits(side: list[dict[str, Any]]) -> dict[str, str]:
        return {_LINE.sub(")", x["limit"]["function"]): f"{x['limit']['function']} ({x['limit']['name']} "
                f"{x['limit']['value']})" for x in side if x.get("limit")}
    b, h = hits(base), hits(head)
    return [v for k, v in h.items() if k not in b], [v for k, v in b.items() if k not in h]


def compile_name(frame: Any, compile_id: Any) -> str:
    """The compile's name as graph ids start with it: ``0``, ``0.1``."""
    return f"{frame}.{compile_id}" if compile_id else str(frame)


def failed(said: list[str]) -> str:
    """``on 0.1: tensor 'x' ...; on 0: ...``: each compile whose guard failed, as this report
    names compiles (torch writes ``0/1: ...``), those that failed alike together."""
    alike: dict[str, list[str]] = {}
    for reason in said:
        m = _TORCH_ID.match(reason)
        name = compile_name(int(m["frame"]), int(m["compile"])) if m else ""
        alike.setdefault(reason[m.end():] if m else reason, []).append(name)
    return "; ".join(f"on {_and([n for n in names if n])}: {text}" if any(names) else text
                     for text, names in alike.items())


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _by_compile(r: BreakdownResult) -> dict[Ids, list[GraphResult]]:
    """The run's graphs by the compile that made them (those Dynamo named a frame for)."""
    out: dict[Ids, list[GraphResult]] = {}
    for g in r.graphs:
        if g.frame_id is not None:
            out.setdefault((g.frame_id, g.frame_compile_id or 0), []).append(g)
    return out


def lines(r: BreakdownResult) -> list[str]:
    """One line per function Dynamo compiled more than once, and a warning for each that hit
    the recompile limit."""
    frames: dict[Any, dict[Any, list[GraphResult]]] = {}
    for (frame, compile_id), gs in _by_compile(r).items():
        frames.setdefault(frame, {})[compile_id] = gs
    why = {(x.get("frame_id"), x.get("frame_compile_id") or 0): x for x in r.compiles}
    out = [_frame_line(r, frame, compiles, why) for frame, compiles in frames.items() if len(compiles) > 1]
    return out + limit_lines(r) + unprofiled_lines(r)


def unprofiled(r: BreakdownResult) -> list[dict[str, Any]]:
    """The compiles Dynamo made that left no graph in the run: one that failed (``failed``:
    torch's error, where Dynamo went on and ran the function eagerly), and one whose graph of
    ops another backend compiled (no Inductor time: ``torch.compile(f, backend="aot_eager")``).
    [] where a graph of the run names no compile to match them against."""
    if any(g.frame_id is None for g in r.graphs):
        return []
    made = _by_compile(r)
    return [x for x in r.compiles if (x.get("frame_id"), x.get("frame_compile_id") or 0) not in made
            and (x.get("failed") or (x.get("ops") and "inductor" not in x.get("seconds", {})))]


def unprofiled_lines(r: BreakdownResult) -> list[str]:
    """A warning for each compile that failed and ran eagerly, and one line for the graphs that
    another backend compiled (``unprofiled``)."""
    found = unprofiled(r)
    out = [f"WARNING: the compile of {first_failure([x])}; Dynamo went on (torch._dynamo.config."
           "suppress_errors) and ran its calls eagerly, outside any compiled graph"
           for x in found if x.get("failed")]
    other = [f"{_label(x)}, {x['ops']} op{'' if x['ops'] == 1 else 's'}"
             for x in found if not x.get("failed")]
    if other:
        out.append(f"not profiled: {len(other)} graph{'' if len(other) == 1 else 's'} that a backend other "
                   f"than Inductor compiled (torch.compile(..., backend=...)), whose calls are in no table "
                   f"here: {'; '.join(other)}")
    return out


def first_failure(found: list[dict[str, Any]]) -> str | None:
    """``f (m.py:3) failed: InductorError: ...``: the first compile that failed (``frame_facts``)."""
    x = next((x for x in found if x.get("failed")), None)
    return f"{_label(x)} failed: {x['failed']}" if x else None


def _label(x: dict[str, Any]) -> str:
    return code_label(x.get("code")) or f"frame {compile_name(x.get('frame_id'), x.get('frame_compile_id'))}"


def limit_lines(r: BreakdownResult) -> list[str]:
    """A warning for each function that hit the recompile limit."""
    per_frame = Counter(frame for frame, _ in _by_compile(r))
    return [_limit_line(x, per_frame[x.get("frame_id")]) for x in r.compiles if x.get("limit")]


def _frame_line(r: BreakdownResult, frame: Any, compiles: dict[Any, list[GraphResult]],
                why: dict[tuple[Any, Any], dict[str, Any]]) -> str:
    labels = {cid: next((code_label(g.compiled_from) for g in gs if g.compiled_from), None)
              for cid, gs in sorted(compiles.items())}
    distinct = list(dict.fromkeys(x for x in labels.values() if x))
    # one frame of torch's own (torch.compile's wrapper of each module) compiled for several
    # functions: each compile is named with its own, the frame by none of them
    several = len(distinct) > 1
    label = f"frame {frame}, one frame of torch's that {len(distinct)} functions were compiled through," \
        if several else next(iter(distinct), None)
    each = []
    for cid, gs in sorted(compiles.items()):
        own = f", {labels[cid]}" if several and labels[cid] else ""
        text = f"{compile_name(frame, cid)} ({', '.join(g.id for g in gs)}{own})"
        said = (why.get((frame, cid)) or {}).get("reasons") or []
        if said:
            text += f" after a guard failed {failed(said)}"
        each.append(text)
    row = step_totals.ALL_GRAPHS_ROW
    adds = (f"{row} adds each as often as it was called" if step_totals.counted(r.measured())
            else f"{row} adds them all, once each")
    known = "" if r.compiles else " (another size, dtype or grad mode)"
    said = [x for cid in compiles for x in (why.get((frame, cid)) or {}).get("reasons") or []]
    lr = LR_HINT if any(_LR_GUARD.search(x) for x in said) else ""
    return (f"recompiles: {label or f'frame {frame}'} was compiled {len(compiles)} times, again each time "
            f"one of Dynamo's guards failed{known}: {'; '.join(each)}. A call runs one of them; {adds}{lr}")


# a guard on an optimizer's learning rate as a Python float: a scheduler's new value compiles
# the step again, where a tensor learning rate is read as a tensor (PyTorch's recipe for a
# compiled optimizer with an LR scheduler)
_LR_GUARD = re.compile(r"\['lr'\] == [-+0-9.e]+")
LR_HINT = (". hint: the guard is on the optimizer's learning rate, a Python float, so a new value (an LR "
           "scheduler's step) compiles its step again; a tensor learning rate, lr=torch.tensor(0.001), "
           "does not")


def _limit_line(x: dict[str, Any], compiles: int) -> str:
    hit = x["limit"]
    of = {0: "all its compiles", 1: "its compile"}.get(compiles, f"all {compiles} of its compiles")
    last = f" (the call that met it: a guard failed {failed(x['reasons'])})" if x.get("reasons") else ""
    return (f"WARNING: {hit['function']} hit torch._dynamo.config.{hit['name']} ({hit['value']}): Dynamo "
            f"compiled it no more, and a call that failed the guards of {of} ran eagerly, "
            f"outside any compiled graph{last}; remove what makes it recompile, or raise the limit")


def time_line(r: BreakdownResult) -> str | None:
    """``compile times (...): 0-forward 3.50 s (Inductor 2.33 s), 0-backward 1.01 s; 4.51 s in
    all (1 compile)``: each graph's compile as torch recorded it; None where nothing was."""
    timed = [x for x in r.compiles if x.get("seconds")]
    if not timed:
        return None
    graphs = _by_compile(r)
    each, total = [], 0.0
    for x in timed:
        secs = x["seconds"]
        total += recorded_seconds(x)
        gs = graphs.get((x.get("frame_id"), x.get("frame_compile_id") or 0), [])
        each += _graph_times(gs, secs)
    shown = f"{'; '.join(each)}; " if each else ""
    n = "1 compile" if len(timed) == 1 else f"{len(timed)} compiles"
    return (f"compile times (torch's record of each compile: a forward's is its whole frame's, Dynamo, "
            f"AOTAutograd and Inductor; a backward's is Inductor's): {shown}{total:.2f} s in all ({n})")


def _graph_times(gs: list[GraphResult], secs: dict[str, float]) -> list[str]:
    # compiled autograd's backward is its own frame's graph, compiled as a forward is
    forward = next((g for g in gs if g.role != "backward" or g.compiled_autograd), None)
    backward = next((g for g in gs if g.role == "backward" and not g.compiled_autograd), None)
    out = []
    if forward is not None and "frame" in secs:
        inductor = f" (Inductor {secs['inductor']:.2f} s)" if "inductor" in secs else ""
        out.append(f"{forward.id} {secs['frame']:.2f} s{inductor}")
    if backward is not None and "backward" in secs:
        out.append(f"{backward.id} {secs['backward']:.2f} s")
    return [", ".join(out)] if out else []
