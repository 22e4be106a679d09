"""The sizes a dynamic-shape module was measured at, read from its text alone (pure; no torch).

A graph compiled with dynamic shapes (``torch.compile(dynamic=True)``, or a recompilation
after a size changed) writes a size as a symbol: ``call()`` reads it from an integer input
(``s77 = arg2_1``; torch 2.5: ``s0 = primals_3``), allocates ``empty_strided_cpu((s77, 256),
...)`` and may derive more (``ps0 = 256*s77``). Its harness holds one value for each such input
(``arg2_1 = 8`` in ``get_args()``, or ``benchmark_compiled_module`` before torch 2.11): the
size the graph was compiled for, the one Inductor's own ``python module.py -p`` runs it at, and
the one ``breakdown`` profiles. ``sizes`` resolves every symbol to that value, so the tensors'
shapes (``core/buffers.py``), and with them bytes and FLOPs, are those of the measured run.
"""

from __future__ import annotations

import ast
import operator
import re

from .cppwrapper import cpp_size, entry_lines, is_cpp_wrapper
from .modparse import string_lines
from .sources import STRIDES, STRIDES_MARK, shape_dims

_ASSIGN = re.compile(r"^\s+(?P<name>[A-Za-z_]\w*)\s*=\s*(?P<expr>[^;#]+?)\s*(?:#.*)?$")
# a size symbol as Inductor names them: backed (s0, s77), derived (ks0, ps0), unbacked (u0)
# a C++ wrapper's (``inductor_entry_impl``): ``int64_t s77 = primals_1;``, ``int64_t ps0 = 256L*s77;``
_CPP_ASSIGN = re.compile(r"^\s*(?:const\s+)?int64_t\s+(?P<name>[A-Za-z_]\w*)\s*=\s*(?P<expr>[^;]+);\s*$")
_SIZE_TEXT = re.compile(r"^[\w\s+\-*/%(),]+$")  # what a size expression can be made of
_SYMBOL = re.compile(r"^(?:s|ks|ps|u)\d+$")
_SYMBOL_IN = re.compile(r"\b(?:s|ks|ps|u)\d+\b")
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_FUNCTIONS = {"max": lambda *a: max(a), "min": lambda *a: min(a), "floordiv": operator.floordiv,
              "mod": operator.mod}
_FUNCTIONS.update({"Max": _FUNCTIONS["max"], "Min": _FUNCTIONS["min"], "Mod": operator.mod,
                   "PythonMod": operator.mod})  # the lowering's record writes them so
_MAX_PASSES = 8  # derived symbols chain a few deep at most


def eval_size(expr: str | ast.AST, env: dict[str, int]) -> int | None:
    """An integer size expression (``256*s77``, ``(s0 + 1) // 2``, ``max(1, s0)``) with the
    names of ``env``; None when it is anything else."""
    try:
        node = ast.parse(expr.strip(), mode="eval").body if isinstance(expr, str) else expr
        return _eval(node, env)
    except (SyntaxError, ValueError, TypeError, ZeroDivisionError, OverflowError, RecursionError,
            MemoryError, KeyError):
        return None


def _eval(node: ast.AST, env: dict[str, int]) -> int:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand, env)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        right = _eval(node.right, env)
        if isinstance(node.op, ast.Pow) and not 0 <= right <= 64:
            raise ValueError("exponent out of range")
        return _BINARY[type(node.op)](_eval(node.left, env), right)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS
            and node.args and not node.keywords):
        return _FUNCTIONS[node.func.id](*(_eval(a, env) for a in node.args))
    raise ValueError(f"not a size expression: {ast.dump(node)[:80]}")


def eval_shape(text: str, env: dict[str, int]) -> tuple[int, ...] | None:
    """``(s77, 128)`` / ``[64, 2*s0]`` / ``(512, )`` / ``s0`` -> the ints at ``env``'s sizes;
    None when any element is not a size expression of known names."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    elts = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
    dims = [eval_size(e, env) for e in elts]
    return None if any(d is None for d in dims) else tuple(d for d in dims if d is not None)


def _assignments(text: str) -> list[tuple[str, str]]:
    lines = text.splitlines()
    inside = string_lines(lines)  # the kernels' own sources and harnesses: not this module's
    out = [(m["name"], m["expr"]) for i, ln in enumerate(lines)
           if i not in inside and (m := _ASSIGN.match(ln)) is not None and _SIZE_TEXT.match(m["expr"])]
    if is_cpp_wrapper(text):  # its sizes are read in the C++ string, not in Python
        out += [(m["name"], expr) for ln in entry_lines(text) if (m := _CPP_ASSIGN.match(ln)) is not None
                and _SIZE_TEXT.match(expr := cpp_size(m["expr"]))]
    return out


def sizes(text: str, fixed: dict[str, int] | None = None) -> dict[str, int]:
    """Every integer the module's text assigns (the harness's integer inputs, the size symbols
    ``call()`` reads from them and derives) -> its value at the harness's sizes, or with the
    symbols of ``fixed`` at its values (``breakdown --size``) and what derives from them. A
    name assigned two different values (two harnesses disagree) is left out, and so is every
    name derived from it."""
    fixed = fixed or {}
    assigned = [(n, e) for n, e in _assignments(text) if n not in fixed]
    unsure: set[str] = set()
    while True:
        env, clashes = _solve([(n, e) for n, e in assigned if n not in unsure], fixed)
        if not clashes:
            return env
        unsure |= clashes


def _solve(pending: list[tuple[str, str]], fixed: dict[str, int]) -> tuple[dict[str, int], set[str]]:
    """The values of the assignments that evaluate, in as many passes as their chain needs;
    and the names given two different values."""
    env: dict[str, int] = dict(fixed)
    clashes: set[str] = set()
    for _ in range(_MAX_PASSES):
        rest = [(n, e) for n, e in pending if not _assign(env, clashes, n, e)]
        if len(rest) == len(pending):
            break
        pending = rest
    return env, clashes


def _assign(env: dict[str, int], clashes: set[str], name: str, expr: str) -> bool:
    value = eval_size(expr, env)
    if value is None:
        return False
    if env.setdefault(name, value) != value:
        clashes.add(name)
    return True


def is_size_symbol(name: str) -> bool:
    return _SYMBOL.match(name) is not None


def symbol_inputs(text: str) -> dict[str, str]:
    """Each size symbol ``call()`` reads from an input (``s77 = arg2_1``) -> that input, in
    order: the sizes a user varies; the derived ones (``ps0 = 256*s77``) follow from them."""
    out: dict[str, str] = {}
    for name, expr in _assignments(text):
        if _SYMBOL.match(name) and re.fullmatch(r"\w+", expr) and not _SYMBOL.match(expr) \
                and not expr.isdigit():
            out.setdefault(name, expr)
    return out


def free_symbols(text: str) -> list[str]:
    """The size symbols ``call()`` reads from its inputs, in order (``symbol_inputs``)."""
    return list(symbol_inputs(text))


def dynamic_sizes(text: str, fixed: dict[str, int] | None = None) -> dict[str, int]:
    """The sizes a user varies (``free_symbols``) -> the value the harness measures them at,
    or the one ``fixed`` gives."""
    return free_values(text, sizes(text, fixed))


def free_values(text: str, env: dict[str, int]) -> dict[str, int]:
    """The free symbols' values in ``env`` (a ``sizes`` result)."""
    return {s: env[s] for s in free_symbols(text) if s in env}


def shapes_at(shapes: list[str], env: dict[str, int]) -> list[str]:
    """Shapes as a call site records them (``s77x16x32x32``) with each dimension that is a size
    expression of ``env``'s symbols given its value there (``32x16x32x32``); others as written."""
    def dim(d: str) -> str:
        v = eval_size(d, env) if _SYMBOL_IN.search(d) else None
        return d if v is None else str(v)

    def at(shape: str) -> str:  # its strides too, where written (``sources.call_shapes``)
        size, _, strides = shape.partition(STRIDES_MARK)
        dims = "x".join(dim(d) for d in shape_dims(size))
        if not strides:
            return dims
        return dims + STRIDES.format("x".join(dim(d) for d in shape_dims(strides.removesuffix(")"))))

    return [at(shape) for shape in shapes]


def sizes_text(sizes: dict[str, int]) -> str:
    """``s77=64, s27=3``: sizes as the report and ``--size`` write them."""
    return ", ".join(f"{k}={v}" for k, v in sizes.items())
