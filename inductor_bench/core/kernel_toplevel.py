"""Is a kernel file's top level Inductor's own? (pure; no torch import)

Loading a kernel file runs its top level: the imports, the driver call, the decorators and
their arguments, default values and annotations of its functions. Inductor writes only
these (``codegen/triton.py``: ``gen_common_triton_imports``, ``set_driver_to_gpu()``, the
``@triton_heuristics.<heuristic>(...)`` kernel, its ``@triton.jit`` helpers, the benchmark
harness's functions and an ``if __name__ == "__main__":`` block, which loading does not
run). A file whose top level does anything else was not written by Inductor, whatever its
decorator says, and is refused before any worker loads it: nothing of it runs, neither to
benchmark it nor to list the configs its GPU would tune over.
"""

from __future__ import annotations

import ast
import re

from .errors import UsageError

# the packages a kernel file imports from (Inductor's runtime, Triton, the harness's torch)
IMPORTED_PACKAGES = frozenset({"triton", "torch", "math"})
# top-level calls Inductor writes: the driver switch, proton's semantic (profiling builds)
TOP_LEVEL_CALLS = frozenset({
    "triton_helpers.set_driver_to_gpu", "triton_helpers.set_driver_to_cpu", "pl.enable_semantic",
})
# calls inside the decorator's arguments, a default or a constant: descriptors Inductor
# writes into triton_meta, ``set()`` and a Triton constexpr
VALUE_CALLS = frozenset({
    "DeviceProperties", "AttrsDescriptor", "AttrsDescriptor.from_dict", "instance_descriptor",
    "set", "tl.constexpr", "triton.language.constexpr",
})
_DECORATORS = frozenset({"triton.jit"})
# the names those calls and decorators start from: the file may bind them only as Inductor
# does (its imports), never by a def, an assignment or another import's alias
TRUSTED_NAMES = frozenset(n.split(".")[0] for n in VALUE_CALLS | TOP_LEVEL_CALLS | _DECORATORS) | {
    "triton_heuristics"}
MODULE_ALIASES = frozenset({("triton.language", "tl"), ("triton.profiler.language", "pl")})
_PLAIN = (ast.Constant, ast.Name, ast.Attribute, ast.Dict, ast.List, ast.Tuple, ast.Set,
          ast.UnaryOp, ast.BinOp, ast.unaryop, ast.operator, ast.Load, ast.keyword, ast.expr_context)


def _dotted(node: ast.expr) -> str | None:
    """``tl.constexpr`` for an attribute chain of names, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def _not_a_value(node: ast.AST | None) -> ast.AST | None:
    """What loading would run in an expression (None: nothing of the file's choosing): a
    value is literals, displays, names and attributes, arithmetic, and the calls above."""
    if node is None:
        return None
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            if _dotted(sub.func) not in VALUE_CALLS:
                return sub
        elif not isinstance(sub, _PLAIN):
            return sub
    return None


def _first(nodes: list[ast.expr | None]) -> ast.AST | None:
    return next((bad for n in nodes if (bad := _not_a_value(n)) is not None), None)


def _call_arguments(node: ast.expr) -> ast.AST | None:
    """What a call's arguments run (a name or attribute, not called, has none)."""
    if not isinstance(node, ast.Call):
        return None
    return _first([*node.args, *(k.value for k in node.keywords)])


def _in_function(fn: ast.FunctionDef) -> ast.AST | None:
    """What defining ``fn`` runs beyond Inductor's decorators: their arguments, the defaults
    and annotations (the body runs only when called)."""
    for dec in fn.decorator_list:
        name = _dotted(dec.func if isinstance(dec, ast.Call) else dec)
        heuristic = (isinstance(dec, ast.Call) and name is not None
                     and re.fullmatch(r"triton_heuristics\.[a-z]\w*", name) is not None)  # not __loader__...
        if name not in _DECORATORS and not heuristic:
            return dec
        if (bad := _call_arguments(dec)) is not None:
            return bad
    a = fn.args
    params = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
    return _first([*a.defaults, *a.kw_defaults, fn.returns, *(x.annotation for x in params if x)])


def _import_is_inductors(node: ast.Import | ast.ImportFrom) -> bool:
    """From torch or Triton, and a name the checks above trust bound to what Inductor binds
    it to (``from torch.hub import load as DeviceProperties`` would make a call of them run
    other code)."""
    if isinstance(node, ast.ImportFrom):
        return (node.level == 0 and (node.module or "").split(".")[0] in IMPORTED_PACKAGES
                and all(a.name != "*" and (a.asname in (None, a.name) or a.asname not in TRUSTED_NAMES)
                        for a in node.names))
    return all(a.name.split(".")[0] in IMPORTED_PACKAGES
               and (a.asname is None or a.asname not in TRUSTED_NAMES or (a.name, a.asname) in MODULE_ALIASES)
               for a in node.names)


def _is_main_guard(node: ast.If) -> bool:
    t = node.test
    return (not node.orelse and isinstance(t, ast.Compare) and len(t.ops) == 1
            and isinstance(t.ops[0], ast.Eq) and ast.unparse(t) in
            ("__name__ == '__main__'", '__name__ == "__main__"'))


def _what_loading_runs(node: ast.stmt) -> ast.AST | None:
    """The part of a top-level statement Inductor never writes there (None: it is Inductor's)."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return None if _import_is_inductors(node) else node
    if isinstance(node, ast.FunctionDef):
        return node if node.name in TRUSTED_NAMES else _in_function(node)
    if isinstance(node, ast.If):
        return None if _is_main_guard(node) else node
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        call = node.value
        return node if _dotted(call.func) not in TOP_LEVEL_CALLS else _call_arguments(call)
    if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) and t.id not in TRUSTED_NAMES
                                            for t in node.targets):
        return _not_a_value(node.value)  # a global constexpr a Triton kernel reads
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return None  # a docstring
    return node


def require_inductor_top_level(path: str, text: str) -> None:
    """UsageError naming the first top-level statement Inductor never writes: loading the
    file would run it. ``text`` parses (``kernelfile.parse_kernel_source`` read it)."""
    for node in ast.parse(text).body:
        bad = _what_loading_runs(node)
        if bad is not None:
            code = ast.unparse(bad).splitlines()[0]
            code = code if len(code) <= 60 else code[:59] + "…"
            line = getattr(bad, "lineno", node.lineno)
            raise UsageError(
                f"{path}: not a kernel file Inductor wrote: loading it would run `{code}` (line "
                f"{line}), which Inductor never writes at a kernel file's top level; nothing of "
                "the file was run")
