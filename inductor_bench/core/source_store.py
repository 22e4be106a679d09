"""Lowering records kept beside Inductor's cache, and carried over to a compile that hit it.

Inductor's FX graph cache and AOTAutograd cache hand back a compiled module without lowering
it again, so nothing of the lowering (``runner/sources.py``) can be recorded on a hit. The
compile that generated a module therefore keeps its record in the run's Inductor cache
directory, ``<cache>/inductor-bench-sources/<sha256 of the module's text>.json``; a later
compile that gets the same module text back from Inductor's cache reads it there.

The record's source lines are those of the compile that generated it. The FX graph cache key
leaves out the FX graph's comments (its stack traces), so the module may come from another
model file with the same graph, or from the same file since edited so that its lines moved.
Each stored record therefore keeps the generating compile's dynamo graph: node name -> op,
source frame and ``nn.Module`` path. On a hit, every frame (and module path) of the record is
carried to the current compile through the dynamo nodes that had it: the nodes of the same
names in the current dynamo graph, which must be the same ops, must all agree on one frame
(one module path). Where names of the generating graph are missing from the current one but
the two are the same ops in the same order (the model's variables renamed, or another file with
the same graph), the nodes are paired by position instead. What cannot be carried over so is
dropped with the reason, never guessed.
Pure data and files; no torch.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ResultError
from .sources import VIA, module_path

STORE_DIR = "inductor-bench-sources"
STORE_VERSION = 1
# Keys of a node record (runner/sources.py: ``snapshot``) set here on a carried-over record.
LOST = "lost"  # why the node's source line could not be carried over
MODULE_LOST = "module_lost"  # why its module path could not be
# A node's lines outside torch that called its own line (``frame``), innermost first, a few
# deep (runner/dynamo_graphs.py ``user_frames``): carried over with the frame, as one chain.
CALLERS = "callers"
# A key runner/sources.py sets on a node of a backward graph that is the forward's work done
# again (AOTAutograd's partitioner recomputes it there rather than saving its result:
# activation checkpointing, or ops cheaper to recompute than to keep).
RECOMPUTED = "recomputed"
# A key of a backward graph's record whose nodes say which are the forward's (AOTAutograd tags
# them ``partitioner_tag = "is_forward"`` from torch 2.10): only there can the marks be set.
RECOMPUTE_MARKED = "recompute_marked"
# The graph's name as AOTAutograd gave it to its compiler (``0_forward``): what says the role of
# a module whose text does not (a C++ wrapper's, ``core/cppwrapper.py``).
AOT_ID = "aot_id"
# A key of a carried-over record whose extern calls were kept without their inputs' strides
# (by a version of this tool that recorded none): they are read back from the module's text
# where it gives them (``core/stride_rebuild.py``), else unknown.
STRIDES_UNRECORDED = "strides_unrecorded"
# A record's module path -> [file, line, function, code] of the line that built the module, for
# the modules whose nodes have no line of the model (runner/module_sites.py); never stored.
BUILT = "built"


def text_key(text: str) -> str:
    """The name a module's record is kept under: the sha256 of the module's text."""
    return hashlib.sha256(text.encode("utf-8", errors="replace")).hexdigest()


def store_path(cache_dir: str | Path, key: str) -> Path:
    return Path(cache_dir) / STORE_DIR / f"{key}.json"


def save(cache_dir: str | Path, key: str, record: dict[str, Any]) -> bool:
    """Keep ``record`` (with its ``dynamo`` nodes) for the module of ``key``: written to a
    temporary file and renamed into place, so a reader never sees half of one. False when
    the directory cannot be written."""
    path = store_path(cache_dir, key)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{key[:16]}-", suffix=".tmp")
    except OSError:
        return False
    try:
        with os.fdopen(fd, "w") as f:
            json.dump({"version": STORE_VERSION, **record}, f)
        os.replace(tmp, path)
        return True
    except (OSError, TypeError, ValueError):
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return False


def load(cache_dir: str | Path, key: str) -> dict[str, Any] | None:
    """The kept record of the module of ``key``; None when there is none this version reads."""
    try:
        rec = json.loads(store_path(cache_dir, key).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(rec, dict) or rec.get("version") != STORE_VERSION or "ops" not in rec:
        return None
    return rec


# -- carrying a record over to the current compile ---------------------------------------------


def _frame_key(chain: Any) -> tuple[Any, ...] | None:
    """A node's frame with its callers (``_chained``), as one hashable value."""
    return tuple(tuple(f) for f in chain) if chain else None


def _chained(node: dict[str, Any]) -> dict[str, Any]:
    """``node`` with its ``frame`` the list of it and its ``callers``: a frame is carried over
    with the lines that called it, or not at all."""
    if not node.get("frame"):
        return node
    out = {k: v for k, v in node.items() if k != CALLERS}
    out["frame"] = [node["frame"], *(node.get(CALLERS) or [])]
    return out


def _unchained(node: dict[str, Any]) -> dict[str, Any]:
    if not node.get("frame"):
        return node
    frame, *callers = node["frame"]
    return {**node, "frame": frame, **({CALLERS: callers} if callers else {})}


def _module_key(module: Any) -> str | None:
    return str(module[0]) if module else None


def _where(chain: Any) -> str:
    return VIA.join(f"{Path(str(f[0])).name}:{f[1]}" for f in chain)


def op_stem(op: Any) -> str:
    """A dynamo node's op as the same op reads however the model spelled it: ``torch.sin(x)``
    (``call_function:_VariableFunctionsClass.sin``), ``x.sin()`` (``call_method:sin``) -> ``sin``."""
    return str(op).split(":", 1)[-1].rsplit(".", 1)[-1]


def _translation(
    then: dict[str, dict[str, Any]], now: dict[str, dict[str, Any]], field: str, key: Any
) -> tuple[dict[Any, Any], dict[Any, str]]:
    """For each value of ``field`` (``frame`` or ``module``) among the generating compile's
    dynamo nodes: its value in the current compile, or why there is none."""
    names: dict[Any, list[str]] = {}
    for name, node in then.items():
        k = key(node.get(field))
        if k is not None:
            names.setdefault(k, []).append(name)
    found: dict[Any, Any] = {}
    why: dict[Any, str] = {}
    for k, ns in names.items():
        values: dict[Any, Any] = {}
        for n in ns:
            cur = now.get(n)
            if cur is None:
                why[k] = f"its dynamo node {n} is not in this compile's graph"
                break
            if op_stem(cur.get("op")) != op_stem(then[n].get("op")):
                why[k] = f"its dynamo node {n} is {cur.get('op')} now, {then[n].get('op')} when cached"
                break
            values[key(cur.get(field))] = cur.get(field)
        else:
            if len(values) == 1 and None not in values:
                found[k] = next(iter(values.values()))
            else:
                what = "lines" if field == "frame" else "module paths"
                why[k] = f"its dynamo nodes ({', '.join(ns[:4])}) are at {len(values)} {what} in this compile"
    return found, why


def carry_over(stored: dict[str, Any], now: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The stored record with its frames and module paths those of the current compile, whose
    dynamo nodes are ``now`` (see the module doc). Nodes whose line (module path) cannot be
    carried over lose it and say why (``lost``, ``module_lost``); ``carried`` counts the nodes
    and those that lost their line."""
    then = {n: _chained(r) for n, r in (stored.get("dynamo") or {}).items()}
    now = {n: _chained(r) for n, r in now.items()}
    aligned = _by_position(then, now)
    now = aligned if aligned is not None else now
    fields = [
        (_Carry("frame", _frame_key, LOST, "line", _where), *_translation(then, now, "frame", _frame_key)),
        (_Carry("module", _module_key, MODULE_LOST, "module path", str),
         *_translation(then, now, "module", _module_key)),
    ]
    nodes: dict[str, Any] = {}
    lost = 0
    for name, node in (stored.get("nodes") or {}).items():
        node = _chained(dict(node))
        for carry, found, why in fields:
            if not carry.apply(node, found, why) and carry.field == "frame":
                lost += 1
        nodes[name] = _unchained(node)
    carried = {"nodes": len(nodes), "lost": lost, **({"by": "position"} if aligned is not None else {})}
    marked = {RECOMPUTE_MARKED: True} if stored.get(RECOMPUTE_MARKED) else {}
    named = {AOT_ID: stored[AOT_ID]} if stored.get(AOT_ID) else {}
    ops = stored.get("ops") or []
    old = {STRIDES_UNRECORDED: True} if strides_unrecorded({"ops": ops}) else {}
    return {"nodes": nodes, "ops": ops, "carried": carried, **marked, **named, **old}


def strides_unrecorded(record: dict[str, Any]) -> bool:
    """Whether ``record`` was kept without its extern calls' input strides: carried over from a
    cache entry that had none (``STRIDES_UNRECORDED``), or the ``sources.json`` of a run saved
    by a version of this tool that recorded none (read again by ``report --reanalyze``)."""
    return bool(record.get(STRIDES_UNRECORDED)) or any(
        op.get("extern") and "strides" not in op for op in record.get("ops") or [])


def carried_note(record: dict[str, Any]) -> list[str]:
    """What a record carried over from Inductor's cache lost."""
    carried = record.get("carried") or {}
    if not carried.get("lost"):
        return []
    first = next(n[LOST] for n in record["nodes"].values() if LOST in n)
    return [f"{carried['lost']} of {carried.get('nodes', '?')} FX nodes of the module (a cache hit) "
            f"lost their source line, e.g. {first}"]


def _by_position(then: dict[str, dict[str, Any]], now: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """``now`` under the generating compile's node names, where some of those names are not in
    it but the two dynamo graphs are the same ops in the same order: another model file with
    the same graph, or this one with its variables renamed (Dynamo names nodes after them).
    None otherwise: the names decide."""
    if all(n in now for n in then) or len(then) != len(now):
        return None
    if [op_stem(r.get("op")) for r in then.values()] != [op_stem(r.get("op")) for r in now.values()]:
        return None
    return dict(zip(then, now.values(), strict=True))


@dataclass(frozen=True)
class _Carry:
    """How one field of a node record is carried over."""

    field: str
    key: Callable[[Any], Any]
    lost: str  # the key saying why it was not
    what: str
    show: Callable[[Any], str]

    def apply(self, node: dict[str, Any], found: dict[Any, Any], why: dict[Any, str]) -> bool:
        """Replace ``node``'s field by the current compile's; False when it had to be dropped."""
        k = self.key(node.get(self.field))
        if k is None:
            return True
        if k in found:
            node[self.field] = found[k]
            return True
        reason = why.get(k, "no dynamo node of the compile that generated it had it")
        shown = self.show(k)
        node[self.lost] = f"the cached module's {self.what} {shown} is not known in this compile: {reason}"
        del node[self.field]
        return False


def named_by_a_pass(name: str, op: str) -> bool:
    """Whether an FX node's name is the one a graph pass gives a node it inserts: FX names a
    ``call_function`` node after its target's overload (``addmm_default`` for
    ``aten.addmm.default``, ``add_tensor``), where the traced graph names it after the op
    (``addmm``, ``addmm_1``). An Inductor pattern replacement (an ``mm`` and the ``add`` after it
    made one ``addmm``) keeps a line but no module."""
    parts = op.split(".")
    if len(parts) < 3:
        return False
    stem = re.escape(f"{parts[-2]}_{parts[-1]}".lower())
    return re.fullmatch(rf"{stem}(?:_\d+)?", name) is not None


def top_level_lines(dynamo: dict[str, dict[str, Any]]) -> dict[tuple[str, int], bool]:
    """Each line of Dynamo's own graph: whether the model's top-level code runs an op there (a
    node in no module: ``nn.functional.gelu(self.fc1(x))`` in ``forward``). A line only a
    subgraph runs (a checkpointed region's, whose nodes Dynamo keeps without modules) is not one."""
    out: dict[tuple[str, int], bool] = {}
    for name, r in dynamo.items():
        if "/" not in name and r.get("frame"):
            where = (r["frame"][0], r["frame"][1])
            out[where] = out.get(where, False) or not r.get("module")
    return out


def load_record(path: str | Path) -> dict[str, Any] | None:
    """One graph's capture-time record (``graphs/<id>/sources.json``), None when absent;
    ResultError when it is there but cannot be read (torn, not JSON)."""
    p = Path(path)
    if not p.exists():
        return None
    try:
        return json.loads(p.read_text())
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
        raise ResultError(f"{p}: not readable as JSON ({e})") from None


def read_log(path: str | Path) -> dict[str, dict[str, Any]]:
    """``sources.jsonl`` of a run: module path -> its record (the first one seen)."""
    out: dict[str, dict[str, Any]] = {}
    p = Path(path)
    if not p.exists():
        return out
    for line in p.read_text().splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue  # a worker killed mid-write leaves at most one torn line
        if isinstance(rec, dict) and rec.get("path"):
            out.setdefault(rec["path"], rec)
    return out


def line_modules(nodes: dict[str, Any], names: list[str]) -> set[str]:
    """The modules the record's nodes ran in on the lines of the nodes ``names``."""
    lines = {(f[0], f[1]) for n in names if isinstance(f := (nodes.get(n) or {}).get("frame"), list)}
    return {module_path(str(rec["module"][0])) for rec in nodes.values() if isinstance(rec, dict)
            and rec.get("module") and isinstance(f := rec.get("frame"), list) and (f[0], f[1]) in lines}
