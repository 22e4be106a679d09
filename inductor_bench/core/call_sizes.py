"""The sizes a dynamic-shape graph was called at, and the sizes it is profiled at (pure; no torch).

A graph compiled with dynamic shapes runs at whatever sizes the model calls it with. Its
harness holds one value per size symbol: those of the call that compiled it
(``core/symbols.py``), often the odd one out. A training script whose last batch is smaller
than the others recompiles for that batch with dynamic shapes (automatic dynamic shapes), and
the new graph then runs every later full batch: compiled at 8, called 7 times at 32 and once
at 8. Profiled at the harness's 8, its kernels are timed on a quarter of the data most calls
move, and the all-graphs row counts every call at that size.

So the compile worker counts each graph's calls by the values of its size symbols
(``runner/call_inputs.py``, ``GraphResult.call_sizes``), and ``breakdown`` profiles each graph
at the sizes most of its calls ran at (``chosen``; ties: the first met), unless ``--size``
names a symbol of its own, or its inputs cannot be built at those sizes from the module's
text (``core/resize.py``). The worker records the inputs of the first call at each new size
too (``sizes_key`` names the record), so the graph runs on the model's values there as well.
"""

from __future__ import annotations

from typing import Any

from .resize import ResizeError, applicable, call_inputs, resize
from .symbols import dynamic_sizes, is_size_symbol, symbol_inputs

MAX_SIZE_RECORDS = 4  # sizes past the first call's whose inputs are recorded, per graph


def size_positions(text: str) -> dict[str, int]:
    """Each size symbol ``call()`` reads from an input -> that input's position in its
    arguments (``s77 = arg2_1`` and ``arg0_1, arg1_1, arg2_1 = args``: s77 -> 2); empty for a
    module of static shapes."""
    names = call_inputs(text)
    return {sym: names.index(name) for sym, name in symbol_inputs(text).items()
            if is_size_symbol(sym) and name in names}


def sizes_key(sizes: dict[str, int]) -> str:
    """A file-name-safe name of the sizes: ``{"s77": 32, "s1": 128}`` -> ``s77-32_s1-128``."""
    return "_".join(f"{k}-{v}" for k, v in sizes.items())


def counts(call_sizes: list[dict[str, Any]] | None) -> list[tuple[dict[str, int], int]]:
    """``GraphResult.call_sizes`` (``[{"sizes": {...}, "calls": n}, ...]`` in the order first
    met) as (sizes, calls) pairs, malformed entries left out."""
    out = []
    for entry in call_sizes or []:
        sizes, calls = entry.get("sizes"), entry.get("calls")
        if isinstance(sizes, dict) and isinstance(calls, int) and calls > 0:
            out.append(({str(k): int(v) for k, v in sizes.items()}, calls))
    return out


def most_called(call_sizes: list[dict[str, Any]] | None) -> dict[str, int] | None:
    """The sizes most calls ran at (the first met among equals); None where none was counted."""
    pairs = counts(call_sizes)
    if not pairs:
        return None
    top = max(n for _, n in pairs)
    return next(s for s, n in pairs if n == top)


def calls_at(call_sizes: list[dict[str, Any]] | None, sizes: dict[str, int]) -> tuple[int, int]:
    """(the calls counted at ``sizes``, the calls counted in all)."""
    pairs = counts(call_sizes)
    return sum(n for s, n in pairs if s == sizes), sum(n for _, n in pairs)


def chosen(text: str, asked: dict[str, int], call_sizes: list[dict[str, Any]] | None) -> dict[str, int]:
    """The sizes to profile the module at, where they are not its harness's: those of
    ``asked`` (``--size``) it has symbols for, else the sizes most of its calls ran at; empty
    (the harness's sizes) where those are the harness's or its inputs cannot be built at them."""
    mine = applicable(text, asked)
    if mine:
        return mine
    top = most_called(call_sizes)
    if not top or top == dynamic_sizes(text):
        return {}
    try:
        resize(text, top)
    except ResizeError:
        return {}
    return top


def by_calls(sizes: dict[str, int], size_hints: dict[str, int],
             call_sizes: list[dict[str, Any]] | None) -> bool:
    """Whether a graph profiled at ``sizes`` (its harness's ``size_hints``) was profiled there
    because most of its calls ran at them (``chosen``), not because ``--size`` asked."""
    return bool(size_hints) and most_called(call_sizes) == sizes
