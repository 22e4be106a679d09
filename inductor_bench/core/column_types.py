"""The column types a trace is read into (``columns.py``): interned values, integer ids with
their odd values aside, and one kind of event's columns. Pure, no torch."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

MISSING = -(1 << 63)  # an absent correlation / External id (the value itself goes to ``odd``)


class NotAnId(ValueError):
    """A correlation or External id that is an object or a list (unhashable: nothing can be
    matched by it); ``at``: its index in the values given."""

    def __init__(self, at: int, value: Any) -> None:
        super().__init__(at, value)
        self.at, self.value = at, value


class Table(dict):
    """value -> its index in ``values``; a new value is appended."""

    def __init__(self) -> None:
        super().__init__()
        self.values: list[Any] = []

    def __missing__(self, value: Any) -> int:
        self[value] = i = len(self.values)
        self.values.append(value)
        return i


class Devices(dict):
    """pid as written -> the index of ``str(pid)`` in ``labels`` (0 and "0" are one device)."""

    def __init__(self, labels: Table) -> None:
        super().__init__()
        self.labels = labels

    def __missing__(self, pid: Any) -> int:
        self[pid] = i = self.labels[str(pid)]
        return i


def interned(table: dict[Any, int], values: list[Any]) -> list[int]:
    """The index of each value in ``table`` (a ``Table``: new values are added)."""
    ids = list(map(table.get, values))
    if None in ids:
        ids = [table[v] for v in values]
    return ids


@dataclass
class Column:
    """Integer ids (correlation, External id): ``MISSING`` where absent or not an int64,
    the value itself in ``odd`` for the latter. An integer-valued float (``1482.0``) is the
    integer's id; another float (``1482.5``) stays odd, matching only itself."""

    ids: array = field(default_factory=lambda: array("q"))
    odd: dict[int, Any] = field(default_factory=dict)

    def extend(self, values: list[Any]) -> None:
        """``values`` appended; ``NotAnId`` for one that is an object or a list."""
        ids, start = self.ids, len(self.ids)
        try:
            ids.fromlist(values)  # all or nothing
        except (TypeError, OverflowError):
            pass
        else:
            if not values or min(ids[start:]) != MISSING or not _sentinel_values(values):
                return
            del ids[start:]
        for i, v in enumerate(values):
            if type(v) is float and v.is_integer():  # 1482.0: the id 1482, as kineto writes it
                v = int(v)
            if type(v) is int and v != MISSING and -(1 << 63) < v < (1 << 63):
                ids.append(v)
            else:
                if isinstance(v, dict | list):
                    raise NotAnId(i, v)
                if v is not MISSING:
                    self.odd[len(ids)] = v
                ids.append(MISSING)

    def keys(self, absent: Any = None) -> Sequence[Any]:
        """The values as a dict of them would be looked up in (``absent`` where absent)."""
        if not self.odd and absent is None:
            return self.ids  # MISSING stands for absent: never a key of ``index``
        odd = self.odd
        return [odd.get(j, absent) if v == MISSING else v for j, v in enumerate(self.ids)]

    def index(self) -> dict[Any, int]:
        """value -> the position of its last occurrence (absent values left out)."""
        if not self.odd:
            out = dict(zip(self.ids, range(len(self.ids)), strict=True))
            out.pop(MISSING, None)
            return out
        return {v: j for j, v in enumerate(self.keys(MISSING)) if v is not MISSING}

    def present(self) -> list[int]:
        """The positions of the values present."""
        odd = self.odd
        return [j for j, v in enumerate(self.ids) if v != MISSING or j in odd]


def _sentinel_values(values: list[Any]) -> bool:
    """Whether a value equal to MISSING was really written (not the decoder's default)."""
    return any(v == MISSING and v is not MISSING for v in values)


@dataclass
class Events:
    """One kind of event in file order (a column left empty where the kind has none)."""

    name: array = field(default_factory=lambda: array("i"))  # index in TraceColumns.names
    ts: array = field(default_factory=lambda: array("d"))
    dur: array = field(default_factory=lambda: array("d"))
    where: array = field(default_factory=lambda: array("i"))  # device or thread index
    corr: Column = field(default_factory=Column)
    ext: Column = field(default_factory=Column)

    def __len__(self) -> int:
        return len(self.ts)
