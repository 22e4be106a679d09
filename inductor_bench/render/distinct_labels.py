"""The labels of a column of kernels (``kernel_labels``), each name shortened as
``kernel_names.kernel_label`` shortens it and told apart from the others where their names
differ: shown from where it differs, or as its start and the parts that differ."""

from __future__ import annotations

import bisect
import difflib
import functools
import itertools

from .kernel_names import CUT, KERNEL_CHARS, NAME_PART, around, compact, cut_end, kernel_label, name_start
from .label_slots import family_runs
from .label_slots import merged as _merged
from .label_slots import runs_of as _runs

Spans = list[tuple[int, int]]  # (start, end) of each shown piece of a name


def kernel_labels(names: list[str], width: int = KERNEL_CHARS) -> list[str]:
    """The labels of a column of kernels (``kernel_label``), distinct where their names are: names
    cut to the same label are each shown from the first place they differ on, after the outer
    name (``vectorized_elementwise_kernel<…MulFunctor<float> >, array<…> >``); a plain name as its
    start and the parts that differ (``sm80_xmma_gemm_…nn_n_…split_k_kernel__5x_cublas``), told
    apart with all the cut names of its family (``sm80_xmma_``), each showing the same kinds of
    parts; names still alike are told apart again from all those they were alike to, and
    numbered where even that looks alike."""
    return list(_labels(tuple(names), width))


@functools.lru_cache(maxsize=512)  # a chart asks at each width it tries, each chart of a report again
def _labels(names: tuple[str, ...], width: int) -> tuple[str, ...]:
    label_of = {n: kernel_label(n, width) for n in names}
    others: dict[str, set[str]] = {n: set() for n in names}
    for _ in range(2):  # again with those told apart alike: tn/nn GEMMs alike in two tile sizes
        told: dict[str, None] = {}
        for group in _same_labels(label_of) + _hidden_differences(label_of):
            group = _with_family(group, label_of)
            for n in group:
                others[n].update(group)
            told.update((n, None) for n in group if label_of[n] != n)
        label_of.update({n: _told_apart(n, frozenset(others[n] - {n}), width) for n in told})
    _number(label_of, width)
    return tuple(label_of[n] for n in names)


def _number(label_of: dict[str, str], width: int) -> None:
    """Names whose labels are alike even told apart, numbered in the table's order (``… #1``);
    where their labels cut for the number are alike again (``sm90_…tilesi… #1`` of a 64 and a
    128 tile), numbered together by what is left."""
    alike = {n for group in _same_labels(label_of) for n in group if label_of[n] != n}
    before = {n: label_of[n] for n in label_of if n in alike}
    for group in _same_labels(label_of):
        for i, n in enumerate((n for n in group if label_of[n] != n), 1):
            label_of[n] = cut_end(label_of[n], width - len(f" #{i}")) + f" #{i}"
    if len({label_of[n] for n in alike}) == len(alike):
        return
    by_cut: dict[str, list[str]] = {}
    for n, label in before.items():
        by_cut.setdefault(cut_end(label, width - len(f" #{len(alike)}")), []).append(n)
    for cut, group in by_cut.items():
        label_of.update({n: f"{cut} #{i}" for i, n in enumerate(group, 1)})


def _with_family(group: list[str], label_of: dict[str, str]) -> list[str]:
    """``group`` with the cut plain names of the families of its plain ones (``sm80_xmma_``):
    told apart together, their labels show the same kinds of parts (``label_slots``)."""
    families = {_family(n) for n in group if "<" not in compact(n)}
    cut = (n for n, x in label_of.items() if x != n and "<" not in compact(n) and _family(n) in families)
    return list(dict.fromkeys([*group, *cut]))


def _same_labels(label_of: dict[str, str]) -> list[list[str]]:
    """The names that share a label, per label, in the order they first come."""
    by_label: dict[str, list[str]] = {}
    for n, x in label_of.items():
        by_label.setdefault(x, []).append(n)
    return [g for g in by_label.values() if len(g) > 1]


def _hidden_differences(label_of: dict[str, str]) -> list[list[str]]:
    """The pairs of plain names, both cut, whose labels start alike and differ but show no run
    of the parts the names differ in whole: ``…ecute_kernel__5x_cublas`` beside
    ``…lit_k_kernel__5x_cublas``, the parts that tell them apart (``execute_`` / ``split_k_``)
    cut through."""
    cut = [n for n, x in label_of.items() if x != n and "<" not in compact(n)]
    by_head: dict[str, list[str]] = {}  # only labels that start alike can hide a difference
    for n in cut:
        by_head.setdefault(label_of[n].split(CUT, 1)[0], []).append(n)
    pairs = (pair for alike in by_head.values() for pair in itertools.combinations(alike, 2))
    hidden = dict.fromkeys(_family(a) for a, b in pairs if label_of[a] != label_of[b] and not (
        _shows_difference(label_of[a], a, b) and _shows_difference(label_of[b], b, a)))
    # with the names of their family (``sm80_xmma_``): told apart from all, each shows its layout
    return [[n for n in cut if _family(n) == family] for family in hidden]


@functools.lru_cache(maxsize=4096)
def _family(name: str) -> str:
    """The names told apart together: those alike in their first two parts (``sm80_xmma_``),
    GEMMs (``gemm_``) apart from the others (the convolutions ``fprop_``, ``dgrad_``, ``wgrad_``),
    each lining up with its own kind in a column that holds both."""
    parts = _parts(compact(name))[0]
    return "".join(parts[:2]) + ("gemm_" if parts[2:3] == ("gemm_",) else "")


def _shows_difference(label: str, name: str, other: str) -> bool:
    """Whether ``label`` (of ``name``) shows whole a run of the parts ``name`` differs from
    ``other`` in."""
    s = compact(name)
    at = _parts(s)[1]
    shown = label.split(CUT)
    runs = _runs(_differing_from(s, compact(other)))
    return any(s[at[i] : at[j]] in part for i, j in runs for part in shown)


def _told_apart(name: str, others: frozenset[str], width: int) -> str:
    """``name`` shown from where it first differs from the closest of ``others``: in its compact
    form, or in its whole text where they differ only in what compacting drops."""
    s = compact(name)
    alike = [compact(o) for o in others]
    if s in alike:
        s, alike = name.removeprefix("void "), [o.removeprefix("void ") for o in others]
    if "<" not in s and (label := _differing_parts(s, alike, width)):
        return label
    return around(s, _longest_common_prefix(s, alike), width)


def _differing_parts(s: str, others: list[str], width: int) -> str | None:
    """A plain name as its start and every part of it that differs from one of ``others``, each
    run of them widened to the right while ``width`` allows, ``…`` between:
    ``sm80_xmma_gemm_…nn_n_tilesize32x32x8_…execute_kernel__5x_cublas``; None where they do not fit."""
    if (alike := _family_spans(tuple(sorted({s, *others})), width).get(s)) is not None:
        return _joined(s, alike)
    at = _parts(s)[1]
    differing = [(at[i], at[j]) for i, j in _runs(set().union(*(_differing_from(s, o) for o in others)))]
    starts = (_with_head(s, differing, h, width) for h in (0, 1))
    spans = next((x for x in starts if len(_joined(s, x)) <= width), None)
    if spans is None:
        return None
    while wider := _grown(s, spans, width):
        spans = wider
    return _joined(s, spans)


def _with_head(s: str, spans: Spans, head: int, width: int) -> Spans:
    """``spans`` after the name's start (``head`` 0), or after its first part (``head`` 1)."""
    return _merged([(0, len(name_start(s, width // 3)) if head == 0 else _parts(s)[1][1]), *spans])


@functools.lru_cache(maxsize=1024)
def _family_spans(family: tuple[str, ...], width: int) -> dict[str, Spans]:
    """The spans each plain name of ``family`` shows, the same slots of parts and the same head in
    each (``label_slots``); none where no such choice fits."""
    if any("<" in f for f in family):
        return {}
    runs = [_runs(set().union(*(_differing_from(f, o) for o in family if o != f))) for f in family]

    def spans(m: int, shown: list[tuple[int, int]], head: int) -> Spans:
        at = _parts(family[m])[1]
        return _with_head(family[m], [(at[i], at[j]) for i, j in shown], head, width)

    def fits(m: int, shown: list[tuple[int, int]], head: int) -> bool:
        return len(_joined(family[m], spans(m, shown, head))) <= width

    chosen = family_runs(tuple((_parts(f)[0], r) for f, r in zip(family, runs, strict=True)), fits)
    if chosen is None:
        return {}
    shown, head = chosen
    grown = _grown_alike(family, [spans(m, r, head) for m, r in enumerate(shown)], width)
    return dict(zip(family, grown, strict=True))


def _grown_alike(family: tuple[str, ...], spans: list[Spans], width: int) -> list[Spans]:
    """Each name's spans grown as ``_grown`` grows them, their starts grown a part at a time in
    every name at once, while all still fit ``width``: one start for the family."""
    while True:
        for m, f in enumerate(family):
            while wider := _grown(f, spans[m], width, head=False):
                spans[m] = wider
        longer = [_grown_one(f, x, 0) for f, x in zip(family, spans, strict=True)]
        if longer == spans or any(len(_joined(f, x)) > width for f, x in zip(family, longer, strict=True)):
            return spans
        spans = longer


def _grown_one(s: str, spans: Spans, k: int) -> Spans:
    """``spans`` with its ``k``-th grown by a part to the right, where it has one to grow."""
    if k >= len(spans) or spans[k][1] >= len(s):
        return spans
    at = _parts(s)[1]
    a, b = spans[k]
    return _merged([*spans[:k], (a, at[bisect.bisect_right(at, b)]), *spans[k + 1 :]])


def _grown(s: str, spans: Spans, width: int, head: bool = True) -> Spans | None:
    """``spans`` with each that can grow by a part to the right within ``width`` grown, the
    differing parts before the name's start (without ``head``, the start never); None where none
    can."""
    for ks in (range(1, len(spans)), range(1 if head else 0)):
        grown = spans
        for k in ks:
            wider = _grown_one(s, grown, k)
            grown = wider if len(_joined(s, wider)) <= width else grown
        if grown != spans:
            return grown
    return None


@functools.lru_cache(maxsize=4096)
def _parts(s: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """The parts of a plain name (``NAME_PART``) and where each starts, then its length."""
    parts = tuple(NAME_PART.findall(s))
    return parts, (0, *itertools.accumulate(len(p) for p in parts))


@functools.lru_cache(maxsize=16384)  # once per pair of names, whatever the widths asked
def _differing_from(s: str, other: str) -> frozenset[int]:
    return _parts_differing(_parts(s)[0], _parts(other)[0])


def _parts_differing(parts: tuple[str, ...], other: tuple[str, ...]) -> frozenset[int]:
    """The indexes of the parts of a name that differ from ``other``'s, or stand either side of
    parts ``other`` has and it lacks."""
    marked: set[int] = set()
    match = difflib.SequenceMatcher(None, parts, other, autojunk=False)
    for tag, i1, i2, _, _ in match.get_opcodes():
        if tag != "equal":
            marked.update(range(i1, i2) if i2 > i1 else {max(i1 - 1, 0), min(i1, len(parts) - 1)})
    return frozenset(marked)


def _joined(s: str, spans: list[tuple[int, int]]) -> str:
    """The spans of ``s`` with ``…`` where text is left out between them or after the last."""
    text = CUT.join(s[a:b] for a, b in spans)
    return text + (CUT if spans[-1][1] < len(s) else "")


def _longest_common_prefix(s: str, others: list[str]) -> int:
    """How many characters ``s`` starts with alike with the closest of ``others``: one of its
    neighbours in their sorted order."""
    ordered = sorted(others)
    at = bisect.bisect_left(ordered, s)
    return max(_common_prefix(s, o) for o in ordered[max(at - 1, 0) : at + 1])


def _common_prefix(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` start with alike (a binary search on their slices)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if a[:mid] == b[:mid] else (lo, mid - 1)
    return lo
