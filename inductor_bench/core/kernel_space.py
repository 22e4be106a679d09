"""How much of each buffer a generated kernel reaches, from its source alone (pure; no torch).

Counting every buffer a kernel is passed, whole, overcounts a kernel that reads a slice or a
gather of a larger buffer: an embedding lookup of 2 tokens from a 1000x128 table passes the
whole 512 kB table and reads 1 kB; a KV cache's write touches the rows of one token. Counted
whole, such a kernel ran at 3292% of the machine's bandwidth (a Llama decode step's fused
embedding and RMSNorm, torch 2.14.1, this CPU). Inductor's own estimate for Triton kernels
(``estimate_kernel_num_bytes``, ``codegen/simd.py``) has the rule this module follows: a
buffer larger than the kernel's iteration space counts as many iteration spaces as the kernel
has distinct index expressions into it; a smaller one counts whole.

- **C++ kernels**: the iteration space is the largest product of trip counts over a nest of
  ``for(int64_t xN=...; xN<...; xN+=...)`` loops (each loop its range, lane loops ``xN_inner``
  inside a vector step left out); the accesses are ``ptr[static_cast<int64_t>(index)]`` and
  ``ptr + static_cast<int64_t>(index)``, an index read through another load (``tmp0``) taken
  as one expression whatever its temporary is called.
- **Triton kernels**: the iteration space is ``xnumel`` times ``r0_numel`` (``rnumel``),
  where the kernel states them as numbers; the accesses are ``tl.load``/``tl.store``/
  ``tl.atomic_add`` of ``ptr + (index)``.

A bound that is not a number (a size symbol of a dynamic graph: ``x1<ks0``, ``xnumel`` an
argument) is read at the value the module's call passes the kernel for it, where the caller
gives those (``values``: parameter -> int, the harness's sizes); a bound still unknown leaves
the space unknown, and the buffers then count whole.
"""

from __future__ import annotations

import re

from .callsites import split_args
from .symbols import eval_size

_CPP_LOOP = re.compile(
    r"for\(int64_t (?P<var>\w+)=static_cast<int64_t>\((?P<start>[^;]*)\);\s*(?P=var)<static_cast<int64_t>\("
    r"(?P<end>[^;]*)\);\s*(?P=var)\+=static_cast<int64_t>\((?P<step>[^)]*)\)\)")
_CPP_ACCESS = re.compile(r"\b(?P<ptr>(?:in_out_ptr|in_ptr|out_ptr)\d+)\s*(?:\[|\+)\s*static_cast<int64_t>\(")
_TRITON_ACCESS = re.compile(r"tl\.(?:load|store|atomic_add)\((?P<ptr>(?:in_out_ptr|in_ptr|out_ptr)\d+) \+ ")
_NUMELS = ("xnumel", "ynumel", "r0_numel", "rnumel")
_TRITON_NUMEL = re.compile(rf"^\s+(?P<name>{'|'.join(_NUMELS)})\s*=\s*(?P<value>\d+)\s*$", re.M)
_TEMP = re.compile(r"\btmp\d+\b")
_CPP_LONG = re.compile(r"\b(\d+)L\b")
_CPP_NAMES = (("static_cast<int64_t>", ""), ("c10::div_floor_integer", "floordiv"), ("std::max", "max"),
              ("std::min", "min"))


def reach(source: str, kind: str, values: dict[str, int] | None = None) -> tuple[int | None, dict[str, int]]:
    """(the kernel's iteration space in elements, None where unknown; pointer parameter -> its
    distinct index expressions); ``values``: the kernel's integer parameters at this call."""
    if kind == "cpp":
        return cpp_space(source, values), _distinct(source, _CPP_ACCESS, _balanced)
    return triton_space(source, values), _distinct(source, _TRITON_ACCESS, _triton_index)


def elements_reached(numel: int, space: int | None, indexes: int) -> int:
    """Of a buffer of ``numel`` elements, those a kernel with this iteration space and this
    many distinct index expressions into it reaches: the whole buffer where it is no larger
    than the space (or the space is unknown), else ``indexes`` spaces, at most the buffer."""
    if space is None or space <= 0 or numel <= space:
        return numel
    return min(numel, max(indexes, 1) * space)


def cpp_space(source: str, values: dict[str, int] | None = None) -> int | None:
    """The largest product of loop trip counts over the nests of a C++ kernel's loops (a bound
    of size parameters, ``ks0``, read at ``values``)."""
    loops = []  # (body start, body end, trip count or None, var)
    for m in _CPP_LOOP.finditer(source):
        start, end, step = (cpp_int(m.group(g), values or {}) for g in ("start", "end", "step"))
        trips = None if start is None or end is None or step is None else max(end - start, 0)
        open_at = source.find("{", m.end())
        close_at = _matching(source, open_at) if open_at >= 0 else -1
        loops.append((open_at, close_at, trips, m.group("var"), step))
    if not loops:
        return None
    best = 0
    for lo, hi, *_ in loops:
        if any(lo < o[0] and o[1] <= hi for o in loops):
            continue  # a loop around others: its nest is counted from its innermost loops
        product = _product([o for o in loops if o[0] <= lo and hi <= o[1]])
        if product is None:
            return None
        best = max(best, product)
    return best or None


def _product(chain: list[tuple[int, int, int | None, str, int | None]]) -> int | None:
    n = 1
    vector_step = any((o[4] or 1) > 1 for o in chain)
    for _, _, trips, var, _ in chain:
        if trips is None:
            return None
        if vector_step and var.endswith("_inner"):
            continue  # the lanes of a vector step its outer loop already covers
        n *= trips
    return n


def triton_space(source: str, values: dict[str, int] | None = None) -> int | None:
    """``xnumel`` (times ``ynumel``) times ``r0_numel``/``rnumel``, where stated as numbers or
    passed as arguments whose ``values`` are known."""
    found = {k: v for k, v in (values or {}).items() if k in _NUMELS}
    found.update({m.group("name"): int(m.group("value")) for m in _TRITON_NUMEL.finditer(source)})
    if "xnumel" not in found:
        return None
    r = found.get("r0_numel", found.get("rnumel", 1))
    return found["xnumel"] * found.get("ynumel", 1) * r


def _distinct(source: str, pattern: re.Pattern[str], index_at) -> dict[str, int]:
    seen: dict[str, set[str]] = {}
    for m in pattern.finditer(source):
        index = _TEMP.sub("tmp", index_at(source, m.end()))
        seen.setdefault(m.group("ptr"), set()).add(index.replace(" ", ""))
    return {ptr: len(v) for ptr, v in seen.items()}


def _balanced(source: str, at: int) -> str:
    """The text from ``at`` to the parenthesis that closes the one just before it."""
    return ", ".join(split_args(source[at:at + 2000]))


def _triton_index(source: str, at: int) -> str:
    """``(index)`` after ``ptr + ``, or the bare name there (``ptr + x0``)."""
    if source.startswith("(", at):
        return _balanced(source, at + 1)
    m = re.match(r"[\w.]+", source[at:])
    return m.group(0) if m else ""


def _matching(source: str, open_at: int) -> int:
    depth = 0
    for i in range(open_at, len(source)):
        depth += (source[i] == "{") - (source[i] == "}")
        if depth == 0:
            return i
    return len(source)


def cpp_int(text: str, values: dict[str, int]) -> int | None:
    """A C++ integer expression of a kernel's loop header (``16L*(c10::div_floor_integer(
    static_cast<int64_t>(ks0), static_cast<int64_t>(16L)))``) at ``values``; None when it
    names anything else."""
    for cpp, py in _CPP_NAMES:
        text = text.replace(cpp, py)
    return eval_size(_CPP_LONG.sub(r"\1", text), values)
