"""Is a result read from disk the shape its records declare?

A result file can be valid JSON and still not be a result: a key missing, a number written
as a string, a list where an object belongs (a hand edit, a torn copy, another tool's file
with the same name). Building the records would accept some of these silently, and a report
would then fail far away, in arithmetic or formatting. ``check`` walks the JSON against the
type annotations of the record's dataclasses (an object for each dataclass, its fields as
keys, the optional ones possibly absent) and names the first thing that is wrong, e.g.
``graphs[0].kernel_ms: 'abc' is not a number``. Pure Python; no torch.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from functools import cache
from typing import Any

from .errors import ResultError

_NAMES: dict[Any, str] = {
    float: "a number",
    int: "an integer",
    bool: "true or false",
    str: "a string",
    type(None): "null",
    list: "a list",
    tuple: "a list",  # a tuple of records (``SourceLine.via``) is saved as a list
    dict: "an object",
}


# A saved breakdown keeps the fields that are added beside its graphs under this key
# (``results.EXTRAS``); they are checked as fields of the record.
EXTRAS_KEY = "extras"


def check(cls: type, data: Any, always: tuple[str, ...] = ()) -> None:
    """ResultError naming the first place where ``data`` (parsed JSON) is not the saved form
    of the dataclass ``cls``; ``always``: top-level keys every saved result has, defaults or
    not (its graphs, its modes). Keys the record does not know are ignored, as loading does;
    annotations this module does not know (``Any``, ``object``) are not checked."""
    missing = [k for k in always if isinstance(data, dict) and k not in data]
    problem = f"{missing[0]!r} is missing" if missing else _problem(data, cls, "")
    if problem:
        raise ResultError(problem)


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _problem(value: Any, hint: Any, where: str) -> str | None:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return _union_problem(value, typing.get_args(hint), where)
    if origin is list or (origin is tuple and typing.get_args(hint)[1:] == (Ellipsis,)):
        if not isinstance(value, list):
            return _bad(value, hint, where)
        return _first(_problem(v, typing.get_args(hint)[0], f"{where}[{i}]") for i, v in enumerate(value))
    if origin is dict:
        if not isinstance(value, dict):
            return _bad(value, hint, where)
        item = typing.get_args(hint)[1]
        return _first(_problem(v, item, f"{where}[{k!r}]") for k, v in value.items())
    if dataclasses.is_dataclass(hint):
        return _record_problem(value, hint, where)
    return None if _matches(value, hint) else _bad(value, hint, where)


def _record_problem(value: Any, cls: type, where: str) -> str | None:
    if not isinstance(value, dict):
        return _bad(value, cls, where)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    at = {n: _join(where, n) for n in fields}
    if EXTRAS_KEY in value and EXTRAS_KEY not in fields:
        extras = value[EXTRAS_KEY]
        if not isinstance(extras, dict):
            return _bad(extras, dict, _join(where, EXTRAS_KEY))
        at |= {n: _join(where, f"{EXTRAS_KEY}.{n}") for n in extras if n in fields and n not in value}
        value = {**extras, **value}
    for name, f in fields.items():
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        if required and name not in value:
            return f"{where or 'the result'}: {name!r} is missing"
    hints = _hints(cls)
    return _first(_problem(value[n], hints[n], at[n]) for n in fields if n in value)


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def _union_problem(value: Any, members: tuple[Any, ...], where: str) -> str | None:
    problems = [_problem(value, m, where) for m in members]
    if any(p is None for p in problems):
        return None
    # a member of the value's own kind says more ("origin.lines[0]: ...") than the list of
    # every member would; of several, the one with every required field present
    own = [p for m, p in zip(members, problems, strict=True) if _kind(m) and isinstance(value, _kind(m))]
    fitting = [p for p in own if p and not p.endswith(" is missing")]
    if fitting or own:
        return (fitting or own)[0]
    return _bad(value, members, where)


def _kind(hint: Any) -> type | None:
    """The JSON type a value of ``hint`` is read from (None when not checked)."""
    if dataclasses.is_dataclass(hint):
        return dict
    origin = typing.get_origin(hint) or hint
    return origin if isinstance(origin, type) else None


def _matches(value: Any, hint: Any) -> bool:
    if hint is float:  # JSON writes 2.0 as 2
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint in (bool, str, type(None)):
        return isinstance(value, hint)
    return True  # Any, object, ...: not checked


def _first(problems: typing.Iterable[str | None]) -> str | None:
    return next((p for p in problems if p), None)


def _bad(value: Any, hint: Any, where: str) -> str:
    return f"{where or 'the result'}: {_show(value)} is not {_describe(hint)}"


def _describe(hint: Any) -> str:
    """How the JSON names a type: "a number", "an object or null" (a tuple: any of those)."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        hint = typing.get_args(hint)
    if isinstance(hint, tuple):
        return " or ".join(dict.fromkeys(_describe(m) for m in hint))
    if dataclasses.is_dataclass(hint):
        return "an object"
    return _NAMES.get(typing.get_origin(hint) or hint, getattr(hint, "__name__", str(hint)))


def _show(value: Any, width: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."
