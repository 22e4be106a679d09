"""A text table made to fit a terminal narrower than it (``TextDoc`` with a width). A file, a
pipe, markdown and HTML never come here: they keep every column and every cell whole.

In this order, each step only while the table is still too wide:

1. the two spaces tabulate pads each header with are left out, and a header wider than its
   column's cells is broken onto two lines at a space (a header is never cut: one wider than its
   column once cut goes on two lines, and the column is no narrower than its longer line);
2. the widest text cells (kernel names, module paths, source lines) lose their middle to a
   ``…``, the widest column first, down to ``ROOM`` characters (a cut never splits a number or
   a shape's sizes: ``128x256 @ …``, not ``128x256 @ 256x10…``, which reads as another size);
3. the columns the table names as optional are left out, in its order, and a line under the
   table names them (where a figure's words in parentheses left out make it fit, they go first);
4. the text cells lose their middle down to ``MIN_CELL`` characters, then ``LAST_CELL``.

A text cell cut closes with its note's gist first: ``memory (in cache: above the DRAM
ceiling)`` reads ``memory (in cache)``, a label its closing words in parentheses
(``all graphs, ms (their harness calls)`` reads ``all graphs, ms``; a line under the table
names them), and its source lines lose their folders
(``pytorch_utils.py:119 via modeling_gpt2.py:241``), then a line called from others its start,
keeping its calling lines (``… via modeling_gpt2.py:241``, ``_gist``); a status keeps its word
and its first words (``timeout: profile…``, ``_text_cut``).

A column's cells that differ stay different when cut (``distinct_cut``): those a middle cut
makes alike show where they differ, or keep more, until no two read alike. A column of numbers
(right-aligned) is never cut, but for the words in parentheses after a figure
(``73.7% (over 4% of kernel time)`` reads ``73.7%``, a line under the table names them); one
whose cells lead with a figure (an interval, a verdict after it) loses its sample counts first
(``2.689 ±1.7% (n=194)`` reads ``2.689 ±1.7%``, a line under the table says so), then its
intervals, then writes its verdict short (``0.90x (sig)``, a line under the table says what each
mark means), then loses whole words from its end (``_start``).
"""

from __future__ import annotations

import os
import re
import textwrap
from collections.abc import Callable, Sequence

import tabulate as _tabulate

from ..core.sources import VIA
from ..core.vocab import Status, Verdict

# a column a table too wide may leave out, by its header, or columns that go together
Droppable = str | tuple[str, ...]
ROOM = 32  # names are cut to this before an optional column is left out
MIN_CELL = 20  # a cell is shortened below this many characters only where the table is still too wide
LAST_CELL = 14  # ... and never below this
CUT = "…"
# a figure: a number with its unit, or alone before an interval or a spread (``2.813 ±1.9%``);
# not a module path that starts with a digit (``0.ff · fftnet.py:12``, ``0 (Linear)``)
_FIGURE = re.compile(r"\s*[~^<>≈±+\-−]?\d[\d,]*(?:\.\d+)?(?:/\d+)?"
                     r"(?:\s?(?:%|x|pp|ms|µs|us|ns|s|[KMG]i?B|GB/s|TFLOP/s)(?=\s|$)|(?=$|\s[±\[]))")

# A figure cell's closing verdict, and the mark it keeps where the cell must be short (a
# compare's ``0.90x (sig)``): never lost to a cut while the figure stays.
SHORT_VERDICTS = {Verdict.SIGNIFICANT: "sig", Verdict.WITHIN_NOISE: "noise", Verdict.TOO_FEW: "few"}
_VERDICT_END = re.compile(r" \((" + "|".join(map(re.escape, SHORT_VERDICTS)) + r")\)$")
_NOTE = re.compile(r" \(([^():]+): [^()]+\)$")  # ``(in cache: above the DRAM ceiling)``
_ASIDE = re.compile(r" \([^():=\[\]]+\)$")  # a label's closing words in parentheses: ``(time-weighted)``
_INTERVAL = re.compile(r" \[[^\]]*\]")
_DOTS = re.compile(r"(?<=\w)\.\.\.(?=\w)")  # a name's middle cut out before: ``backward_d...elu``
_SAMPLES = re.compile(r" \(n=\d[\d,]*\)")  # a figure's sample count: ``2.689 ±1.7% (n=194)``
# the folders of a source line (``transformers/models/gpt2/modeling_gpt2.py:241``)
_DIRS = re.compile(r"(?<![\w./-])(?:[\w.-]+/)+(?=[\w.-]+\.py:\d+\b)")
# a status with what happened after it (``timeout: profile worker exceeded …``): cut, it keeps
# its start
_STATUS = re.compile("^(?:" + "|".join((Status.FAILED, Status.TIMEOUT, Status.SKIPPED, Status.INTERRUPTED))
                     + "): ")

# (rows, headers, align) -> the table's text
Draw = Callable[[list[list[str]], list[str], "tuple[str, ...] | None"], str]


def fitted(
    rows: list[list[str]],
    headers: list[str],
    align: tuple[str, ...] | None,
    width: int | None,
    optional: Sequence[Droppable],
    draw: Draw,
) -> tuple[str, tuple[str, ...]]:
    """The table ``draw`` makes of ``rows``, fitted to ``width`` columns (None: as it is) as the
    module says, and the headers of the columns it left out (a note under a table explains only
    those shown)."""
    out = draw(rows, headers, align)
    if width is None or _widest(out) <= width:
        return out, ()
    n = max([len(headers)] + [len(r) for r in rows])
    keep = list(range(n))
    left_out: list[str] = []
    bare = _bare_figures(rows, align)  # figures' words go before a column where that makes it fit
    out = _attempt(rows, headers, align, keep, width, ROOM, draw)
    for entry in optional:  # a name, or names that go together (a view's fwd ms and bwd ms)
        if _widest(out) > width and bare != rows:
            tried = _attempt(bare, headers, align, keep, width, ROOM, draw)
            out = tried if _widest(tried) <= width else out
        if _widest(out) <= width:
            break
        names = [entry] if isinstance(entry, str) else list(entry)
        gone = [n for n in names if n in headers and headers.index(n) in keep]
        if gone and len(keep) > len(gone):
            for name in gone:
                keep.remove(headers.index(name))
            left_out.extend(gone)
            out = _attempt(rows, headers, align, keep, width, ROOM, draw)
    for floor in (MIN_CELL, LAST_CELL):
        if _widest(out) > width:
            out = _attempt(rows, headers, align, keep, width, floor, draw)
    asides = sorted({m.group(0).strip() for r in rows for c in r
                     if (m := _ASIDE.search(c)) and c not in out and c[: m.start()] in out})
    marks = [f"{short} = {long}" for long, short in SHORT_VERDICTS.items()
             if re.search(rf"\d\S* \({short}\)(?=\s|$)", out)]
    counts_gone = sum(len(_SAMPLES.findall(c)) for r in rows for c in r) > len(_SAMPLES.findall(out))
    notes = [
        f"({', '.join(left_out)}: left out to fit {width} columns; a file, a pipe or --format markdown "
        "has every column)" if left_out else "",
        f"({', '.join(marks)}: verdicts written short, their intervals left out to fit {width} columns; "
        "a file, a pipe or --format markdown has them whole)" if marks else "",
        f"(n=…: sample counts left out to fit {width} columns; a file, a pipe or --format markdown has "
        "them)" if counts_gone else "",
        # the words, each in its own parentheses, not in a second pair: ``(over 4% of kernel time),
        # (over 41% of kernel time): left out …``, never ``((over 4% …``
        f"{', '.join(asides)}: left out to fit {width} columns; a file, a pipe or --format markdown "
        "has them" if asides else "",
    ]
    for note in filter(None, notes):  # each on lines of its own under the table
        out += "\n" + textwrap.fill(note, width, break_long_words=False, break_on_hyphens=False)
    return out, tuple(left_out)


def _attempt(
    rows: list[list[str]],
    headers: list[str],
    align: tuple[str, ...] | None,
    keep: list[int],
    width: int,
    floor: int,
    draw: Draw,
) -> str:
    """The kept columns drawn without header padding, their text cells cut to fit ``width``
    where they can, none below ``floor``."""
    rs = [[r[i] if i < len(r) else "" for i in keep] for r in rows]
    hs = [headers[i] if i < len(headers) else "" for i in keep]
    al = tuple(align[i] for i in keep) if align is not None else None
    out = _unpadded(draw, rs, hs, al)
    if _widest(out) > width:  # a header wider than its cells on two lines
        hs = [_two_lines(h, max((len(r[j]) for r in rs), default=0)) for j, h in enumerate(hs)]
        out = _unpadded(draw, rs, hs, al)
    caps = [max([_widest(h)] + [len(r[j]) for r in rs]) for j, h in enumerate(hs)]
    # a column of numbers is never cut; one whose figures carry words in parentheses loses them
    # (``73.7% (over 4% of kernel time)`` reads ``73.7%``, a line under the table says so)
    cuttable = [al is None or al[j] != "right" or any(_ASIDE.search(r[j]) for r in rs)
                for j in range(len(hs))]
    over = _widest(out) - width
    if over <= 0:
        return out
    full = list(caps)
    while True:
        cut = _caps(caps, cuttable, over, floor)
        if cut == full:
            return out
        cut_rs, cut_hs = [list(r) for r in rs], list(hs)
        wider = False
        for j in range(len(hs)):
            if cut[j] < full[j]:
                # a header is never cut: wider than the cut, it goes on two lines at a space,
                # and the column is no narrower than its longer line
                cut_hs[j] = hs[j] if "\n" in hs[j] else _two_lines(hs[j], cut[j])
                room = max(cut[j], _widest(cut_hs[j]))
                cells = [r[j] for r in rs]
                column = ([_start(c, room) for c in cells] if _figures(cells)
                          else _text_cut(_gist(cells, room), room))
                for r, c in zip(cut_rs, column, strict=False):
                    r[j] = c
                # kept apart, it needs more; cut at a word, less: the others are cut more or less
                if cuttable[j] and (got := max([_widest(cut_hs[j])] + [len(c) for c in column])) != cut[j]:
                    over, caps[j], cuttable[j] = over - caps[j] + got, got, False
                    wider = True
        out = _unpadded(draw, cut_rs, cut_hs, al)
        if not wider:
            return out


def _bare_figures(rows: list[list[str]], align: tuple[str, ...] | None) -> list[list[str]]:
    """``rows``, a right-aligned figure's closing words in parentheses left out (``3.3%``)."""
    right = [a == "right" for a in align or ()]
    return [[_ASIDE.sub("", c) if j < len(right) and right[j] and _FIGURE.match(c) else c
             for j, c in enumerate(r)] for r in rows]


def _caps(caps: list[int], cuttable: list[bool], over: int, floor: int) -> list[int]:
    """Each column's width, ``over`` characters taken from the widest text columns, down to the
    next widest, none below ``floor``."""
    cut = list(caps)
    while over > 0:
        text = [j for j in range(len(cut)) if cuttable[j] and cut[j] > floor]
        if not text:
            break
        i = max(text, key=lambda c: cut[c])
        rest = max([cut[j] for j in text if j != i], default=floor)
        step = min(over, max(cut[i] - max(rest, floor), 1))
        cut[i] -= step
        over -= step
    return cut


def _gist(cells: list[str], width: int) -> list[str]:
    """``cells``, each wider than ``width`` that closes with a note in parentheses after a colon
    without it (``memory (in cache: above the DRAM ceiling)`` -> ``memory (in cache)``; the notes
    under the table say the rest), then a label its closing words in parentheses (``% of peak
    (time-weighted)`` -> ``% of peak``), then its source lines without their folders
    (``transformers/pytorch_utils.py:119 via transformers/models/gpt2/modeling_gpt2.py:241`` ->
    ``pytorch_utils.py:119 via modeling_gpt2.py:241``), then a line called from others its start
    (``… via modeling_gpt2.py:241``: the calling line tells the rows apart), each where no two
    then read alike."""
    out = cells
    for shorten in (lambda c: _NOTE.sub(r" (\1)", c), lambda c: _ASIDE.sub("", c), lambda c: _DIRS.sub("", c),
                    lambda c: _chain_end(c, width)):
        short = {c: shorten(c) if len(c) > width else c for c in set(out)}
        out = [short[c] for c in out] if len(set(short.values())) == len(short) else out
    return out


def _chain_end(cell: str, width: int) -> str:
    """A source line called from others (``A via B via C``) in ``width`` characters: the most
    of its calling lines, from the last, that fit after ``… via`` (``… via C``); unchanged
    where it fits or where even its last line does not."""
    parts = cell.split(VIA)
    for i in range(1, len(parts)):
        short = CUT + VIA + VIA.join(parts[i:])
        if len(short) <= width:
            return short if len(cell) > width else cell
    return cell


def _two_lines(header: str, cells: int) -> str:
    """``header``, wider than its column's ``cells``, broken at the space that leaves its longer
    line shortest: ``other steps'`` over ``work``."""
    spaces = [i for i, ch in enumerate(header) if ch == " "]
    if len(header) <= cells or not spaces:
        return header
    at = min(spaces, key=lambda i: max(i, len(header) - i - 1))
    return header[:at] + "\n" + header[at + 1:]


def _unpadded(draw: Draw, rows: list[list[str]], headers: list[str], align: tuple[str, ...] | None) -> str:
    saved = _tabulate.MIN_PADDING
    _tabulate.MIN_PADDING = 0
    try:
        return draw(rows, headers, align)
    finally:
        _tabulate.MIN_PADDING = saved


def _figures(cells: list[str]) -> bool:
    """Whether most of a column's cells lead with a figure (``+85.7% [+70.9%..+100.6%]``,
    ``0.90x [0.86x-0.94x] (significant)``): cut, they keep it, losing their end."""
    filled = [c for c in cells if c.strip() not in ("", "-")]
    return sum(bool(_FIGURE.match(c)) for c in filled) * 2 > len(filled)


def _start(s: str, width: int) -> str:
    """``s`` in ``width`` characters: where that makes it fit, its intervals alone as ``…``,
    keeping the words after them (``0.90x … (significant)``: the verdict says more than its
    interval); else, a cell that ends with a verdict, its figure and the verdict's mark
    (``0.90x (sig)``, ``SHORT_VERDICTS``); else, one that closes with words in parentheses,
    what comes before them (``- (not measured)`` reads ``-``); else its first whole words, then
    ``…`` (never part of a figure: ``0.90x [0.86x-0.94x] …``); a first word too long, cut."""
    if len(s) <= width:
        return s
    s = _SAMPLES.sub("", s)  # ``(n=194)`` goes first, whole
    if len(s) <= width:
        return s
    words = s.split(" ")
    bare = " ".join(CUT if w.startswith("[") and w.endswith("]") else w for w in words)
    if bare != s and len(bare) <= width and not bare.endswith(CUT):
        return bare
    if (end := _VERDICT_END.search(s)) and _FIGURE.match(s):
        short = _INTERVAL.sub("", s[: end.start()]) + f" ({SHORT_VERDICTS[end.group(1)]})"
        if len(short) <= width:
            return short
    if (aside := _ASIDE.search(s)) and aside.start() <= width:  # ``- (not measured)`` reads ``-``
        return s[: aside.start()]
    head = s[: width - 2]
    if s[width - 2] != " ":
        head = head.rsplit(" ", 1)[0] if " " in head else ""
    return head.rstrip() + " " + CUT if head.strip() else s[: width - 1] + CUT


def _text_cut(cells: list[str], width: int) -> list[str]:
    """A text column's ``cells`` cut to ``width`` (``distinct_cut``), but a status keeps its
    start, its end cut at a word where one is (``timeout: profile…``, ``_end``), where no two
    then read alike."""
    # a name shortened before (``…softmax_backward_d...elu_gelu…``) cut again shows one mark
    cells = [_DOTS.sub(CUT, c) if len(c) > width else c for c in cells]
    cut = distinct_cut(cells, width)
    ends = {c: _end(c, width) for c in set(cells) if len(c) > width and _STATUS.match(c)}
    kept = [ends.get(c, k) for c, k in zip(cells, cut, strict=True)]
    return kept if len(set(kept)) == len(set(cells)) else cut


def _end(s: str, width: int) -> str:
    """``s`` in ``width`` characters, its end left out: its first whole words, the status word
    and one at least (``timeout: profile…``), else its first characters, then ``…``."""
    at = s.rfind(" ", 0, width)
    return (s[:at] if at > s.index(": ") + 1 else s[: width - 1]) + CUT


def middle(s: str, width: int, head: int | None = None) -> str:
    """``s`` cut to ``width`` characters by taking out its middle: ``cpp_fused_a…_sum_2``;
    ``head``: how many of its first characters to keep (by default half, rounded up, or where
    the cut takes in the one ``…`` that ``s`` holds)."""
    if len(s) <= width:
        return s
    keep = width - 1
    if head is None:
        head = keep - keep // 2
        if s.count(CUT) == 1:  # a name cut before loses its middle there, not at a second place
            gap, drop = s.index(CUT), len(s) - keep
            head = min(max(head, gap - drop + 1), gap)
    return _whole_numbers(s, head, len(s) - (keep - head))


def _sized(s: str, i: int) -> bool:
    """Whether ``s[i]`` is part of a number or of a shape's sizes (``256x1024``): a digit, or the
    x between two."""
    return s[i].isdigit() or (s[i] == "x" and 0 < i < len(s) - 1
                              and s[i - 1].isdigit() and s[i + 1].isdigit())


def _inside(s: str, at: int) -> bool:
    """Whether a cut at ``at`` would split a number or a shape's sizes."""
    return 0 < at < len(s) and _sized(s, at - 1) and _sized(s, at)


def _whole_numbers(s: str, head: int, tail: int) -> str:
    """``s[:head] + … + s[tail:]``, a number (or a shape's sizes, ``256x1024``) on either side of
    the cut not split: one the tail starts inside is kept whole where the head can give up the
    room (``…_12``, not ``…_2``), else goes, as one the head ends inside does
    (``128x256 @ …``, not ``128x256 @ 256x10…``: another size)."""
    start = tail
    while _inside(s, start):
        start -= 1
    if tail - start <= head // 2:
        head, tail = head - (tail - start), start
    return _pieces(s, [(0, head), (tail, len(s))])


def _pieces(s: str, spans: list[tuple[int, int]]) -> str:
    """The spans of ``s`` joined by ``…``, each without the part of a number the cut splits."""
    out = []
    for a, b in spans:
        while a < b and _inside(s, a):
            a += 1
        while b > a and _inside(s, b):
            b -= 1
        out.append(s[a:b])
    return CUT.join(out)


def distinct_cut(cells: list[str], width: int) -> list[str]:
    """``cells`` cut to ``width`` (``middle``), two that differ never cut alike: those a middle
    cut makes look alike each keep their start, the part from where each differs from the one
    most like it and their end (``sm80_…2_tn_n_tilesize…cublas``); where even that does not tell
    them apart, a wider cut."""
    distinct = sorted(set(cells))
    longest = max((len(c) for c in distinct), default=0)
    for w in range(width, longest + 1):
        short = {c: middle(c, w) for c in distinct}
        alike: dict[str, list[str]] = {}
        for c in distinct:
            alike.setdefault(short[c], []).append(c)
        for group in alike.values():
            for c in group if len(group) > 1 else ():  # from where it differs from the closest
                short[c] = _from(c, w, max(len(os.path.commonprefix([c, o])) for o in group if o != c))
        if len(set(short.values())) == len(distinct):
            return [short[c] for c in cells]
    return cells


def _from(s: str, width: int, at: int) -> str:
    """``s`` in ``width`` characters: its start, the part from a little before ``at`` (where it
    differs from the one most like it) and its end (a kernel's number), ``…`` between them:
    ``trito…l_add_convol…ard_1``."""
    head = tail = max((width - 2) // 4, 1)
    start = max(at - 2, head)
    room = width - head - tail - 2
    if start + room >= len(s) - tail:  # the difference is near the end: the start and the end
        return middle(s, width, head)
    if start == head:  # ... or near the start: the start, then the end
        return middle(s, width, width - 1 - tail)
    return _pieces(s, [(0, head), (start, start + room), (len(s) - tail, len(s))])


def _widest(text: str) -> int:
    return max((len(ln) for ln in text.splitlines()), default=0)
