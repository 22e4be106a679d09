"""Which differing parts a family of plain kernel names told apart shows (``distinct_labels``):
the same kinds of parts in every label. The parts the names differ in are lined up into slots
(the layout ``tn_``/``nn_``, the tile ``tilesize64x64x8_``, the warp shape, the entry point
``execute_``/``split_k_``): each label shows the parts of the same slots; where they do not all
fit, slots are left out of every label alike, the last first, while the names stay apart; where
no such choice fits (cuDNN's convolutions, alike but in the operation, ``indexed_``, layout, tile,
stage, warp, ``alignc4_``, entry point), each place the names differ at is a slot of its own."""

from __future__ import annotations

import difflib
import functools
import itertools
from collections.abc import Callable, Iterable

Runs = list[tuple[int, int]]  # (first, past the last) part of each run of parts shown
CHOICES = 256  # the most choices of slots to leave out tried: fewer slots left out first


@functools.lru_cache(maxsize=4096)
def _positions(parts: tuple[str, ...], ref: tuple[str, ...]) -> tuple[int, ...]:
    """Where each part lines up in ``ref``'s parts, counted in halves: ``2 * i`` on ref's part ``i``,
    ``2 * i - 1`` just before it (a part ``ref`` lacks)."""
    pos = [0] * len(parts)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, parts, ref, autojunk=False).get_opcodes():
        for k in range(i1, i2):
            pos[k] = 2 * j1 - 1 if tag == "delete" else 2 * min(j1 + k - i1, j2 - 1)
    return tuple(pos)


def _span(pos: tuple[int, ...], run: tuple[int, int]) -> tuple[int, int]:
    return min(pos[run[0] : run[1]]), max(pos[run[0] : run[1]])


def merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` (start, end) in order, one where the next starts at or before its end."""
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(b, out[-1][1]))
        else:
            out.append((a, b))
    return out


def family_runs(
    family: tuple[tuple[tuple[str, ...], Runs], ...], fits: Callable[[int, Runs, int], bool],
) -> tuple[list[Runs], int] | None:
    """For each member of ``family`` (its parts, and the runs of them that differ from the others),
    the runs to show, and which of the heads ``fits`` tries (0, 1) every member fits with
    (``fits(member, runs, head)``); None where no choice of slots keeps the members apart and fits."""
    parts = [p for p, _ in family]
    ref = max(parts, key=lambda p: (len(p), p))
    pos = [_positions(p, ref) for p in parts]
    slots = merged([_span(pos[m], r) for m, (_, runs) in enumerate(family) for r in runs])

    def shown(m: int, kept: list[tuple[int, int]]) -> Runs:
        """The runs of member ``m`` in the ``kept`` slots."""
        spans = [(r, _span(pos[m], r)) for r in family[m][1]]
        return [r for r, (lo, hi) in spans if any(a <= hi and lo <= b for a, b in kept)]

    def key(m: int, kept: list[tuple[int, int]]) -> tuple[str, ...]:
        """What member ``m`` reads in each of the ``kept`` slots."""
        lined_up = list(zip(parts[m], pos[m], strict=True))
        return tuple("".join(p for p, x in lined_up if a <= x <= b) for a, b in kept)

    choices = (c for n in range(len(slots)) for c in itertools.combinations(reversed(range(len(slots))), n))
    for left_out in itertools.islice(choices, CHOICES):
        kept = [s for i, s in enumerate(slots) if i not in left_out]
        if len({key(m, kept) for m in range(len(family))}) < len(family):
            continue
        runs = [shown(m, kept) for m in range(len(family))]
        head = next((h for h in (0, 1) if all(fits(m, runs[m], h) for m in range(len(family)))), None)
        if head is not None:
            return runs, head
    return _part_runs(parts, pos, [r for _, r in family], fits)


def _part_runs(
    parts: list[tuple[str, ...]], pos: list[tuple[int, ...]], runs: list[Runs],
    fits: Callable[[int, Runs, int], bool],
) -> tuple[list[Runs], int] | None:
    """``family_runs`` a part at a time, where no choice of whole slots fits: each place the names
    differ at is a slot of its own (the operation ``dgrad_``, the layout ``nhwc_``, the tile, the
    stage), left out one at a time (``_narrowings``) until every label fits, the name's start
    whole (head 0) before its first part alone (head 1)."""
    places = tuple(sorted({x for m, p in enumerate(pos) for a, b in runs[m] for x in p[a:b]}))
    narrowings = _narrowings(tuple(parts), tuple(pos), places)
    for head in (0, 1):
        for shows in narrowings:
            if all(fits(m, list(shows[m]), head) for m in range(len(parts))):
                return [list(x) for x in shows], head
    return None


@functools.lru_cache(maxsize=1024)  # once per family, whatever the widths asked
def _narrowings(
    parts: tuple[tuple[str, ...], ...], pos: tuple[tuple[int, ...], ...], places: tuple[int, ...],
) -> tuple[tuple[tuple[tuple[int, int], ...], ...], ...]:
    """The runs each member shows as slots are left out one at a time while the members stay
    apart: first those all read alike at, then the rightmost slot of numbers (``stage4_``,
    ``tilesize64x64x64_``), then the rightmost of words (``train``, ``nchw_``). A slot is a place,
    or places side by side that tell the same members apart (``split_`` and ``k_``)."""
    members = range(len(parts))
    at: list[dict[int, str]] = [{} for _ in members]  # what each member reads at each place
    for m in members:
        for p, x in zip(parts[m], pos[m], strict=True):
            at[m][x] = at[m].get(x, "") + p

    def apart(kept: list[tuple[int, ...]]) -> bool:
        return len({tuple(at[m].get(k, "") for s in kept for k in s) for m in members}) == len(parts)

    def shown(kept: list[tuple[int, ...]]) -> tuple[tuple[tuple[int, int], ...], ...]:
        shown = {k for s in kept for k in s}
        return tuple(tuple(runs_of([i for i, x in enumerate(pos[m]) if x in shown])) for m in members)

    kept = _slots(at, places)
    numbers = [s for s in kept if any(c.isdigit() for m in members for k in s for c in at[m].get(k, ""))]
    order = [*reversed(numbers), *(s for s in reversed(kept) if s not in numbers)]
    out = []
    while apart(kept):
        out.append(shown(kept))
        slot = next((s for s in order if s in kept and apart([x for x in kept if x != s])), None)
        if slot is None:
            break
        kept.remove(slot)
    return tuple(out)


def _slots(at: list[dict[int, str]], places: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The places the members do not all read alike at, those side by side that part the members
    the same way (``split_`` and ``k_`` of ``split_k_``) in one slot."""
    def parting(k: int) -> tuple[int, ...]:
        readings = [a.get(k, "") for a in at]
        return tuple(readings.index(r) for r in readings)

    slots: list[tuple[int, ...]] = []
    for k in (k for k in places if len({a.get(k, "") for a in at}) > 1):
        if slots and parting(slots[-1][-1]) == parting(k) and k - slots[-1][-1] <= 2:
            slots[-1] = (*slots[-1], k)
        else:
            slots.append((k,))
    return slots


def runs_of(indexes: Iterable[int]) -> Runs:
    """Indexes as (first, past the last) of each run of consecutive ones, in order."""
    out: Runs = []
    for i in sorted(indexes):
        if out and out[-1][1] == i:
            out[-1] = (out[-1][0], i + 1)
        else:
            out.append((i, i + 1))
    return out
