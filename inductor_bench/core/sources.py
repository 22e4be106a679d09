"""Where a kernel comes from in the model: the records of source attribution (pure data).

An ``Origin`` says which FX nodes of the graph Inductor lowered a kernel (or one extern call)
implements, their model source lines and their ``nn.Module`` paths, or why that is not
known. A ``CallSite`` is one extern call of a compiled module's ``call()`` with its own time:
``aten::convolution`` called 120 times per iteration is 120 call sites; so is each call of a
generated kernel that ``call()`` calls at several places (Inductor writes one kernel for
identical code, e.g. the same fused GELU in each of a model's layers). Both are filled at
analysis time from what the compile worker recorded (``runner/sources.py``) and saved in
``breakdown.json`` (schema version 2), so reports need no torch.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from .graph_breaks import library_path

ROOT_MODULE = ""  # the module path of code in the compiled model's own forward
# between a source line and the line that called it: ``pytorch_utils.py:119 via modeling_gpt2.py:241``
VIA = " via "


@dataclass(frozen=True)
class SourceLine:
    """One line of the model's source, as the FX node's stack trace names it."""

    file: str
    line: int
    function: str = ""
    code: str = ""  # the line's text (its first physical line)
    # the lines outside torch that called this one, innermost first, a few deep (the model's
    # ``self.c_attn(h)`` that called a library layer's ``forward``); () where not recorded
    via: tuple[SourceLine, ...] = ()

    @property
    def key(self) -> tuple[str, int]:
        return (self.file, self.line)

    @property
    def chain(self) -> tuple[tuple[str, int], ...]:
        """Its ``key`` and those of the lines that called it, innermost first."""
        return (self.key, *(v.key for v in self.via))

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SourceLine:
        d = dict(d)
        via = tuple(SourceLine.from_dict(v) for v in d.pop("via", None) or ())
        return cls(**d, via=via)

    @property
    def short(self) -> str:
        """``densenet.py:21``; a file of an installed package by its path within the package
        (``torch/optim/adam.py:414``), so that a line the user cannot edit reads as one."""
        return f"{library_path(self.file, '') or PurePath(self.file).name}:{self.line}"


@dataclass
class Origin:
    """What one kernel (or one extern call) was made from."""

    nodes: list[str] = field(default_factory=list)  # FX nodes of the lowered graph, in graph order
    lines: list[SourceLine] = field(default_factory=list)  # distinct, by file and line
    # distinct nn.Module paths ("" = the model itself), the one most of its nodes ran in first (a
    # generated kernel's: the one it writes the most bytes for, where known: core/module_bytes.py)
    modules: list[str] = field(default_factory=list)
    missing: str | None = None  # why there is no source line, or (with lines) no module
    # all its nodes are the forward's work that a backward graph does again (core/source_store.py)
    recomputed: bool = False

    def __post_init__(self) -> None:
        self.lines = distinct_lines(self.lines)  # however it was made: read, merged, or built

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Origin:
        return cls(
            nodes=list(d.get("nodes", [])),
            lines=[SourceLine.from_dict(ln) for ln in d.get("lines", [])],
            modules=list(d.get("modules", [])),
            missing=d.get("missing"),
            recomputed=bool(d.get("recomputed")),
        )


@dataclass
class CallSite:
    """One extern call in a compiled module's ``call()``, or one call of a generated kernel
    called at several places, with the time of its own events."""

    kernel: str  # the per-op row (KernelStat.name) it is part of, e.g. "aten::convolution"
    index: int  # position among the module's extern calls, 0-based, in call() order; -1: a kernel's
    callee: str  # as the module calls it, e.g. "extern_kernels.convolution"
    calls: float  # per iteration
    ms: float  # per iteration
    samples_ms: list[float] = field(default_factory=list)
    shapes: list[str] = field(default_factory=list)  # input shapes, e.g. "2x16x32x32"
    origin: Origin | None = None
    # A generated kernel's call: its position among that kernel's calls in call(), 0-based.
    occurrence: int | None = None

    @property
    def extern(self) -> bool:
        return self.occurrence is None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CallSite:
        d = dict(d)
        o = d.pop("origin", None)
        names = set(cls.__dataclass_fields__)
        return cls(origin=Origin.from_dict(o) if o else None, **{k: v for k, v in d.items() if k in names})


STRIDES_MARK = " (strides "  # what joins an input's shape and its strides: ``256x512 (strides 1x256)``
STRIDES = STRIDES_MARK + "{})"
# an input whose strides are not known: its call's record was kept by a version of this tool
# that recorded none, and the module's text did not give them back (``core/stride_rebuild.py``)
UNKNOWN_STRIDES = STRIDES.format("?")


def call_shapes(op: dict[str, Any]) -> list[str]:
    """An extern call's input shapes as its lowering record holds them (``64x256``), each with
    its strides where they are not the contiguous ones (``256x512 (strides 1x256)``: a
    transposed view; the record's ``strides``, "" for a contiguous input, absent before)."""
    shapes = [str(s) for s in op.get("shapes") or []]
    strides = op.get("strides") or []
    if len(strides) != len(shapes):
        return shapes
    return [f"{s}{STRIDES.format(st)}" if st else s for s, st in zip(shapes, strides, strict=True)]


def shape_text(shape: Iterable[Any]) -> str:
    """A shape as the lowering records it (``runner/sources.py``): ``64x256``; ``scalar``."""
    return "x".join(str(n) for n in shape) or "scalar"


_DIM_SEP = re.compile(r"(?<![Mm]a)x")  # an ``x`` that is no part of a ``max`` / ``Max``


def shape_dims(text: str) -> list[str]:
    """``shape_text``'s dimensions again (``Max(3, s27 - 2)xs77``: ``Max(3, s27 - 2)``, ``s77``)."""
    return _DIM_SEP.split(text)


def contiguous(size: list[Any], stride: list[Any], equal: Callable[[Any, Any], bool] = operator.eq) -> bool:
    """Row-major strides for ``size`` (a dimension of size 1 may have any); ``equal``: how two
    sizes compare (``runner/sources.py``: sympy expressions too, for dynamic shapes)."""
    expected: Any = 1
    for n, st in zip(reversed(size), reversed(stride), strict=True):
        if not equal(n, 1) and not equal(st, expected):
            return False
        expected = expected * n
    return True



def distinct_lines(lines: Iterable[SourceLine]) -> list[SourceLine]:
    """Each file and line once per chain of calling lines (``SourceLine.chain``), in file and
    line order: one line reached through two frames (a list comprehension's and the ``forward``
    around it) is one line of the model. Of its frames, the first by function name, so that the
    choice does not depend on the order met."""
    first: dict[tuple[tuple[str, int], ...], SourceLine] = {}
    for ln in sorted(lines, key=lambda ln: (ln.chain, ln.function, ln.code)):
        first.setdefault(ln.chain, ln)
    return list(first.values())


def trim_json(origin: dict[str, Any]) -> None:
    """An Origin as ``asdict`` writes it, less what is said only where set: ``recomputed``
    where false, a line's ``via`` where it has no calling lines (a record made before them)."""
    if not origin["recomputed"]:
        del origin["recomputed"]
    for ln in (x for line in origin["lines"] for x in (line, *line.get("via", ()))):
        if not ln.get("via"):
            ln.pop("via", None)


def path_order(path: str) -> list[tuple[int, int | str]]:
    """A module path's sort key: its numbered parts by number (``blocks.2`` before ``blocks.10``)."""
    return [(0, int(p)) if p.isdigit() else (1, p) for p in path.split(".")]


def merge(origins: list[Origin | None], missing: str | None = None) -> Origin | None:
    """One origin for several (an op's call sites together, a kernel called at two places): the
    modules most of them name first, then those first in one."""
    present = [o for o in origins if o is not None]
    if not present:
        return None
    nodes: list[str] = []
    for o in present:
        nodes += [n for n in o.nodes if n not in nodes]
    lines = [ln for o in present for ln in o.lines]
    rank: dict[str, tuple[int, int]] = {}  # module -> (origins naming it, its best place in one)
    for o in present:
        for i, m in enumerate(o.modules):
            n, best = rank.get(m, (0, i))
            rank[m] = (n + 1, min(best, i))
    modules = sorted(rank, key=lambda m: (-rank[m][0], rank[m][1], path_order(m)))
    # the reason a line, or where there are lines a module, is missing
    why = None if lines and modules else (missing or next((o.missing for o in present if o.missing), None))
    return Origin(nodes, lines, modules, why, all(o.recomputed for o in present))


# the root: a local (``L['self']``), or the first of a decorator wrapper's ``*args`` (a method
# compiled through ``def wrapper(*args, **kwargs)``: ``L['args'][0]`` is the module)
_LEAD = re.compile(r"^(?:L\['args'\]\.\d+(?=\.|$)|L\['[^']*'\]|L__self__|self)\.?")


_DICT_MODULES = re.compile(r"\.__dict__\['_modules'\]")
_GLOBAL = re.compile(r"(?<![\w.\]])G\['([^']+)'\]")


# A name as Python's repr quotes it: in single quotes, or in double quotes where it holds a
# single quote, with backslash escapes (a module named ``a'b"c`` is ``'a\\'b"c'``).
_PY_STR = r"""('(?:[^'\\]|\\.)+'|"(?:[^"\\]|\\.)+")"""
_GETATTR = re.compile(r"getattr\(([^()]*?),\s*" + _PY_STR + r"\)")


def _unquoted(literal: str) -> str:
    try:
        return str(ast.literal_eval(literal))
    except (ValueError, SyntaxError):
        return literal[1:-1]


def getattr_as_dots(raw: str) -> str:
    """``getattr(L['self'].layers, '0')`` -> ``L['self'].layers.0``, nested ones too; a name
    holding quotes as its repr writes it (``getattr(L['self'], 'fc"q\\'s')`` -> ``fc"q's``)."""
    while (m := _GETATTR.search(raw)) is not None:
        raw = raw[: m.start()] + f"{m.group(1)}.{_unquoted(m.group(2))}" + raw[m.end() :]
    return raw


def module_path(raw: str) -> str:
    """An ``nn_module_stack`` path as the model names it: ``L['self'].features.denseblock3``,
    ``L['self']._modules['features']``, ``getattr(L['self'].layers, '0')``,
    ``L['args'][0].model.norm`` and ``L['self'].__dict__['_modules']['conv_in']`` (a module
    reached through its ``__dict__``, as Dynamo names it through a decorated ``forward``) ->
    ``features.denseblock3``, ``features``, ``layers.0``, ``model.norm``, ``conv_in``. A module
    a script holds in a global (``G['model'].0``) keeps the global's name: ``model.0``."""
    s = getattr_as_dots(_GLOBAL.sub(r"\1", _DICT_MODULES.sub("._modules", raw)))
    s = re.sub(r"\._modules\['([^']+)'\]", r".\1", s)
    s = re.sub(r"\[(\d+)\]", r".\1", s)
    s = re.sub(r"(?<!^L)\['([^']+)'\]", r".\1", s)
    return _LEAD.sub("", s).strip(".")


def at_depth(path: str, depth: int | None) -> str:
    """The first ``depth`` parts of a module path (all of it for None)."""
    if depth is None or not path:
        return path
    return ".".join(path.split(".")[:depth])
