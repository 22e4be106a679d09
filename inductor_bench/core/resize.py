"""A dynamic-shape module's inputs at sizes of the user's choosing (``breakdown --size
s77=64``), worked out from the module's text alone (pure; no torch).

The module's harness holds one value per size symbol (``core/symbols.py``: the size hint).
To profile at another, every input that depends on the symbol changes: the integer input the
symbol is read from (``s77 = arg2_1``), and each tensor input whose shape or stride
``call()`` asserts in terms of it (``assert_size_stride(arg3_1, (s77, 128), (128, 1), ...)``),
evaluated at the new sizes and at whatever ``call()`` derives from them. The runner draws new
tensors of those shapes and strides; the other inputs stay the harness's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .buffers import asserted
from .modparse import function_body, string_lines
from .symbols import eval_shape, free_symbols, free_values, is_size_symbol, sizes, symbol_inputs

_UNPACK = re.compile(r"^\s+(?P<names>\w+(?:\s*,\s*\w+)*)\s*,?\s*=\s*args\s*$")
_AS_STRIDED = re.compile(r"^\s+(?P<name>\w+)\s*=\s*torch\.as_strided\(")
_NAME = re.compile(r"[A-Za-z_]\w*")


class ResizeError(ValueError):
    """The module's inputs cannot be built at the sizes asked for; the message says why."""


@dataclass(frozen=True)
class Resized:
    """One input at the new sizes: an integer's value, or a tensor's shape and stride."""

    name: str
    value: int | None = None
    shape: tuple[int, ...] | None = None
    stride: tuple[int, ...] | None = None


def call_inputs(text: str) -> list[str]:
    """The names ``call()`` unpacks its arguments into, in order (``arg0_1, arg1_1, ... = args``):
    the order of the harness's ``get_args()`` list."""
    lines = text.splitlines()
    for i in function_body(lines, "call"):
        if (m := _UNPACK.match(lines[i])) is not None:
            return [n.strip() for n in m["names"].split(",") if n.strip()]
    return []


def applicable(text: str, wanted: dict[str, int]) -> dict[str, int]:
    """The sizes of ``wanted`` this module has as symbols of its own (a run's other graphs may
    have the others)."""
    free = set(free_symbols(text))
    return {k: v for k, v in wanted.items() if k in free}


def resize(text: str, wanted: dict[str, int]) -> tuple[dict[str, int], dict[str, Resized]]:
    """(the module's free symbols at the sizes it will run at, the inputs that change to get
    there). Raises ResizeError where an input cannot be built at those sizes."""
    reads = symbol_inputs(text)
    use = {k: v for k, v in wanted.items() if k in reads}
    env = sizes(text, use)
    if not use:
        return free_values(text, env), {}
    if bad := [f"{k}={v}" for k, v in use.items() if v < 0]:
        raise ResizeError(f"a size cannot be negative: {', '.join(bad)}")
    symbols = {k for k in sizes(text) if is_size_symbol(k)} | set(use)  # those at the harness's sizes
    outside = code_lines(text)
    changed = {reads[sym]: Resized(reads[sym], value=v) for sym, v in use.items()}
    aliased = {m["name"] for ln in outside if (m := _AS_STRIDED.match(ln))}
    for name, (shape_text, stride_text) in input_asserts(outside, call_inputs(text)).items():
        if name in changed or not symbols & set(_NAME.findall(shape_text + stride_text)):
            continue
        shape, stride = eval_shape(shape_text, env), eval_shape(stride_text, env)
        if shape is None or stride is None:
            raise ResizeError(f"input {name}: its shape {shape_text} or stride {stride_text} has a size "
                              "the module gives no value")
        if name in aliased:
            raise ResizeError(f"input {name} shares its storage with other inputs (torch.as_strided): "
                              "not resized")
        changed[name] = Resized(name, shape=shape, stride=stride)
    return free_values(text, env), changed


def code_lines(text: str) -> list[str]:
    """The module's own lines, less the kernels' sources and harnesses inside its strings."""
    lines = text.splitlines()
    inside = string_lines(lines)
    return [ln for i, ln in enumerate(lines) if i not in inside]


def input_asserts(lines: list[str], inputs: list[str]) -> dict[str, tuple[str, str]]:
    """Input name -> (shape, stride) as the first assert of it writes them (``asserted``)."""
    wanted = set(inputs)
    out: dict[str, tuple[str, str]] = {}
    for ln in lines:
        for name, shape, stride, _ in asserted(ln) or []:
            if name in wanted and stride is not None:
                out.setdefault(name, (shape, stride))
    return out


def unknown_sizes(wanted: dict[str, int], modules: dict[str, str]) -> str | None:
    """Why ``breakdown --size`` cannot apply (a symbol no graph of the run has), or None;
    ``modules``: graph id -> its compiled module's text."""
    have = {gid: free_symbols(text) for gid, text in modules.items()}
    unknown = sorted(set(wanted) - {s for syms in have.values() for s in syms})
    if not unknown:
        return None
    listed = "; ".join(f"{gid}: {', '.join(syms)}" for gid, syms in have.items() if syms)
    theirs = f"the graphs' size symbols: {listed}" if listed else "no graph of this run has dynamic shapes"
    return f"--size {', '.join(unknown)}: no compiled graph has such a size symbol ({theirs})"
