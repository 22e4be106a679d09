"""Which differing parts a family of plain kernel names told apart shows (``distinct_labels``):
the same kinds of parts in every label. The parts the names differ in are lined up into slots
(the layout ``tn_``/``nn_``, the tile ``tilesize64x64x8_``, the warp shape, the entry point
``execute_``/``split_k_``): each label shows the parts of the same slots; where they do not all
fit, slots are left out of every label alike, the last first, while the names stay apart."""

from __future__ import annotations

import difflib
import functools
import itertools
from collections.abc import Callable

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
    return None
