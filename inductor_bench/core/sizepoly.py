"""Size expressions of dynamic shapes compared by what they are, not by how they are written
(pure; no torch).

The same size is written otherwise by the compiled module (Inductor's printer: ``1 + s0``,
``(1 + s27) // 2``, ``s59*((1 + s94) // 2)``) and by the record of its lowering (``str`` of the
same sympy expression: ``s0 + 1``, ``((s27 + 1)//2)``, ``s59*(((s94 + 1)//2))``). Each is read
as a polynomial of the size symbols with integer coefficients, a floor division being one more
factor of it, in a form of its own: ``(a*k + r) // k`` is ``a + r // k`` (``r``'s coefficients
in ``0 .. k-1``), reduced by their common divisor, and nothing where ``r`` is a constant. A
remainder (the module's ``s27 + (((-1)*s27) % 8)``, the record's ``s27 + (PythonMod(-s27, 8))``) is a
factor too, ``a % k`` with ``a``'s coefficients in ``0 .. k-1`` (``7*s27 % 8``), their common
divisor with ``k`` taken out as a coefficient; so is a maximum or minimum (``max(3, (-2) +
s27)``, ``Max(3, s27 - 2)``) of its arguments in one order. Two expressions of the same
polynomial are the same size for every value of the symbols.
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any

from .sources import STRIDES_MARK, shape_dims

Monomial = tuple[str, ...]  # its factors, sorted: symbols, floor divisions (``(1+s27)//2``), ...


class Poly:
    """A polynomial of size symbols with integer coefficients (monomial -> coefficient)."""

    def __init__(self, terms: dict[Monomial, int]) -> None:
        self.terms = {m: c for m, c in terms.items() if c}

    def __eq__(self, other: object) -> bool:
        if isinstance(other, int):
            other = Poly({(): other})
        return isinstance(other, Poly) and self.terms == other.terms

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: Poly) -> Poly:
        terms = dict(self.terms)
        for m, c in other.terms.items():
            terms[m] = terms.get(m, 0) + c
        return Poly(terms)

    def __mul__(self, other: Poly | int) -> Poly:
        if isinstance(other, int):
            other = Poly({(): other})
        terms: dict[Monomial, int] = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in other.terms.items():
                m = tuple(sorted(m1 + m2))
                terms[m] = terms.get(m, 0) + c1 * c2
        return Poly(terms)

    __rmul__ = __mul__

    def __floordiv__(self, other: Poly) -> Poly:
        k = other.constant()
        if k is None or k <= 0:
            return Poly({(f"({self.key()})//({other.key()})",): 1})
        whole = Poly({m: c // k for m, c in self.terms.items()})
        rest = Poly({m: c % k for m, c in self.terms.items()})
        if rest.constant() is not None:  # 0 <= rest < k
            return whole
        g = math.gcd(k, *rest.terms.values())
        rest, k = Poly({m: c // g for m, c in rest.terms.items()}), k // g
        return whole + Poly({(f"({rest.key()})//{k}",): 1})

    def __mod__(self, other: Poly) -> Poly:
        k = other.constant()
        if k is None or k <= 0:
            return Poly({(f"({self.key()})%({other.key()})",): 1})
        rest = Poly({m: c % k for m, c in self.terms.items()})
        if (c := rest.constant()) is not None:
            return Poly({(): c % k})
        g = math.gcd(k, *rest.terms.values())  # (g*a) % (g*k) = g*(a % k)
        rest = Poly({m: c // g for m, c in rest.terms.items()})
        return Poly({(f"({rest.key()})%{k // g}",): g})

    def constant(self) -> int | None:
        """Its value where it has no symbol."""
        if set(self.terms) - {()}:
            return None
        return self.terms.get((), 0)

    def key(self) -> str:
        """One text for every way of writing it."""
        return " + ".join(f"{c}*{'*'.join(m)}" if m else str(c) for m, c in sorted(self.terms.items())) or "0"


def poly(text: Any) -> Poly | None:
    """``64*s77``, ``s0 + 1``, ``(s0 + 1) // 2``, ``floordiv(s0, 2)``, ``s0 % 8``, ``Mod(s0, 8)``,
    ``max(3, s0)``, ``256`` -> its polynomial; None for anything else."""
    try:
        return _terms(ast.parse(str(text).strip(), mode="eval").body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


_OPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)


def _terms(node: ast.AST) -> Poly:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return Poly({(): node.value})
    if isinstance(node, ast.Name):
        return Poly({(node.id,): 1})
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _terms(node.operand) * -1
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = _terms(node.left), _terms(node.right)
        if isinstance(node.op, ast.Mult):
            return left * right
        if isinstance(node.op, ast.FloorDiv):
            return left // right
        if isinstance(node.op, ast.Mod):
            return left % right
        return left + (right * -1 if isinstance(node.op, ast.Sub) else right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        name, args = node.func.id.lower(), [_terms(a) for a in node.args]
        if name == "floordiv" and len(args) == 2:
            return args[0] // args[1]
        if name in ("mod", "pythonmod") and len(args) == 2:
            return args[0] % args[1]
        if name in ("max", "min") and args:
            values = [a.constant() for a in args]
            if None not in values:
                return Poly({(): (max if name == "max" else min)(values)})  # type: ignore[type-var]
            keys = sorted({a.key() for a in args})
            return Poly({(f"{name}({', '.join(keys)})",): 1}) if len(keys) > 1 else args[0]
    raise ValueError("not a polynomial of sizes")


def same_size(a: str, b: str) -> bool:
    """Two size expressions of the same polynomial (or, where either is not one, the same text)."""
    pa, pb = poly(a), poly(b)
    if pa is None or pb is None:
        return a.replace(" ", "") == b.replace(" ", "")
    return pa == pb


def same_shape(a: str, b: str) -> bool:
    """Two inputs as a call site records them (``s0x64 (strides 1xs0 + 1)``) alike: each
    dimension and each stride the same size."""
    (sa, _, ta), (sb, _, tb) = a.partition(STRIDES_MARK), b.partition(STRIDES_MARK)
    return all(len(x) == len(y) and all(same_size(p, q) for p, q in zip(x, y, strict=True))
               for x, y in ((shape_dims(sa), shape_dims(sb)), (shape_dims(ta.removesuffix(")")),
                                                              shape_dims(tb.removesuffix(")")))))


def written(text: str) -> str:
    """A size expression as Inductor's Python printer writes it (``64*s0``, ``(1 + s27) // 2``;
    the C++ wrapper's ``floordiv(1 + s27, 2)`` and ``mod(-1*s27, 8)``, ``cppwrapper.cpp_size``, too)."""
    try:
        tree = _Infix().visit(ast.parse(text.strip(), mode="eval"))
        return re.sub(r" \* ", "*", ast.unparse(tree))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text.strip()


class _Infix(ast.NodeTransformer):
    """``floordiv(a, b)`` -> ``a // b``; ``mod(a, b)`` -> ``a % b``."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        ops = {"floordiv": ast.FloorDiv, "mod": ast.Mod}
        if isinstance(node.func, ast.Name) and node.func.id in ops and len(node.args) == 2:
            return ast.BinOp(node.args[0], ops[node.func.id](), node.args[1])
        return node
