"""How a graph's inputs differ between two runs, read from each side's
``GraphResult.input_shapes`` (the shape of each tensor input where it was profiled; their dtypes
are not recorded): inputs head has more or fewer of (a layer added: its weight and bias), or as
many at other shapes (a batch of 64 made 128). Pure; no torch."""

from __future__ import annotations

from collections import Counter

from .first_few import first_few

SHOWN = 4  # shapes named at most in one list; the rest are counted


def shape_words(shape: list[int]) -> str:
    """``512x512``; a 0-d tensor's shape reads ``scalar``."""
    return "x".join(map(str, shape)) if shape else "scalar"


def inputs_difference(base: list[list[int]], head: list[list[int]]) -> str:
    """``2 inputs more in head (512x512, 512)``, ``1 input fewer in head (64x64)``, ``9 -> 10
    inputs (head only: 512x512, 512; base only: 64x64)``, or, as many on both sides, ``inputs of
    other shapes (64x256 -> 128x256, 64 -> 128)``; "" where they are the same."""
    if len(base) == len(head):
        moved = [f"{shape_words(b)} -> {shape_words(h)}" for b, h in zip(base, head, strict=True) if b != h]
        return f"inputs of other shapes ({_listed(moved)})" if moved else ""
    only_head, only_base = _left(head, base), _left(base, head)
    if not only_base:
        return f"{_inputs(len(only_head))} more in head ({_listed(only_head)})"
    if not only_head:
        return f"{_inputs(len(only_base))} fewer in head ({_listed(only_base)})"
    return (f"{len(base)} -> {len(head)} inputs (head only: {_listed(only_head)}; "
            f"base only: {_listed(only_base)})")


def _left(shapes: list[list[int]], other: list[list[int]]) -> list[str]:
    """The shapes of ``shapes`` that ``other`` lacks, each as often as it lacks it, in order."""
    spare = Counter(tuple(s) for s in other)
    out = []
    for s in shapes:
        if spare[tuple(s)]:
            spare[tuple(s)] -= 1
        else:
            out.append(shape_words(s))
    return out


def _inputs(n: int) -> str:
    return f"{n} input" + ("" if n == 1 else "s")


def _listed(words: list[str]) -> str:
    return first_few(words, SHOWN)
