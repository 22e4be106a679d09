"""How a graph's inputs differ between two runs, read from each side's
``GraphResult.input_shapes`` (the shape of each tensor input where it was profiled) and, where
both sides recorded them, ``GraphResult.input_dtypes`` (each input's element type): inputs head
has more or fewer of (a layer added: its weight and bias), or as many at other shapes (a batch
of 64 made 128) or of other dtypes (a layer cast to bfloat16). Pure; no torch."""

from __future__ import annotations

from collections import Counter

from .buffers import input_tensors
from .first_few import first_few

SHOWN = 4  # inputs named at most in one list; the rest are counted

Input = tuple[tuple[int, ...], str]  # its shape, and its dtype ("" where not compared)


def shape_words(shape: list[int] | tuple[int, ...]) -> str:
    """``512x512``; a 0-d tensor's shape reads ``scalar``."""
    return "x".join(map(str, shape)) if shape else "scalar"


def input_dtypes(text: str) -> list[str]:
    """Each tensor input's dtype of a compiled module, in its harness's order (as
    ``static_twin.input_shapes``): ``float32`` as the module spells it; [] where one is not said."""
    dtypes = [t.dtype for t in input_tensors(text).values()]
    return [d for d in dtypes if d] if all(dtypes) else []


def dtypes_known(shapes: list[list[int]], dtypes: list[str]) -> bool:
    """Whether ``dtypes`` gives every input of ``shapes`` its dtype (a run saved before they
    were recorded has none)."""
    return bool(dtypes) and len(dtypes) == len(shapes) and all(dtypes)


def inputs_difference(base: list[list[int]], head: list[list[int]],
                      base_dtypes: list[str] | None = None, head_dtypes: list[str] | None = None) -> str:
    """``2 inputs more in head (512x512, 512)``, ``1 input fewer in head (64x64)``, ``9 -> 10
    inputs (head only: 512x512, 512; base only: 64x64)``, or, as many on both sides, ``inputs of
    other shapes (64x256 -> 128x256, 64 -> 128)``, ``inputs of other dtypes (512x512 float32 ->
    bfloat16)``, ``inputs of other shapes and dtypes (...)``; "" where they are the same. Dtypes
    are compared only where both sides know every input's, and named only where they differ."""
    b, h = _inputs(base, base_dtypes, head, head_dtypes), _inputs(head, head_dtypes, base, base_dtypes)
    typed = len({t for _, t in b + h}) > 1  # one dtype throughout: inputs read by their shapes alone
    if len(b) == len(h):
        moved = [(x, y) for x, y in zip(b, h, strict=True) if x != y]
        if not moved:
            return ""
        what = " and ".join(w for w, changed in (("shapes", any(x[0] != y[0] for x, y in moved)),
                                                  ("dtypes", any(x[1] != y[1] for x, y in moved))) if changed)
        return f"inputs of other {what} ({_listed([_moved(x, y) for x, y in moved])})"
    only_head, only_base = _left(h, b, typed), _left(b, h, typed)
    if not only_base:
        return f"{_count(len(only_head))} more in head ({_listed(only_head)})"
    if not only_head:
        return f"{_count(len(only_base))} fewer in head ({_listed(only_base)})"
    return (f"{len(b)} -> {len(h)} inputs (head only: {_listed(only_head)}; "
            f"base only: {_listed(only_base)})")


def _inputs(shapes: list[list[int]], dtypes: list[str] | None,
            other: list[list[int]], other_dtypes: list[str] | None) -> list[Input]:
    """Each input as (shape, dtype), its dtype "" unless both sides know every input's."""
    typed = dtypes_known(shapes, dtypes or []) and dtypes_known(other, other_dtypes or [])
    return [(tuple(s), dtypes[i] if typed and dtypes else "") for i, s in enumerate(shapes)]


def _words(x: Input, typed: bool) -> str:
    return f"{shape_words(x[0])} {x[1]}" if typed and x[1] else shape_words(x[0])


def _moved(x: Input, y: Input) -> str:
    """``64x256 -> 128x256``, ``512x512 float32 -> bfloat16``, ``64 float32 -> 128 bfloat16``."""
    if x[1] == y[1]:
        return f"{shape_words(x[0])} -> {shape_words(y[0])}"
    if x[0] == y[0]:
        return f"{_words(x, True)} -> {y[1]}"
    return f"{_words(x, True)} -> {_words(y, True)}"


def _left(inputs: list[Input], other: list[Input], typed: bool) -> list[str]:
    """The inputs of ``inputs`` that ``other`` lacks, each as often as it lacks it, in order."""
    spare = Counter(other)
    out = []
    for x in inputs:
        if spare[x]:
            spare[x] -= 1
        else:
            out.append(_words(x, typed))
    return out


def _count(n: int) -> str:
    return f"{n} input" + ("" if n == 1 else "s")


def _listed(words: list[str]) -> str:
    return first_few(words, SHOWN)
