"""Which of the user's functions a compiled module was made from: the code object Dynamo was
compiling when Inductor wrote the module, found on the call stack (``convert_frame.py``'s
``_compile(code, ...)`` and the functions in it that it calls hold it as ``code``, in torch 2.5
to 2.15). It may be torch's own: ``Sequential.forward``, an optimizer's ``step``.

A decorator's wrapper (``merge_with_config_defaults.<locals>.wrapper``, around the forward of
most Hugging Face models) is what Dynamo compiles, inlining the function it wraps: the one
function among its free variables (``_compile``'s ``locals``, or its ``closure`` from 2.8 on)
is recorded beside it as what it wraps.

A backward module is written when the first backward runs, with no Dynamo frame on the stack:
it takes its forward's code (the same frame id and compile id), in ``runner/graph_sources.py``."""

from __future__ import annotations

import inspect
import types
from pathlib import Path
from typing import Any

from ..core.graph_breaks import library_path

CODE_KEY = "compiled_from"  # in the modules log and GraphResult
CONVERT_FRAME = "/torch/_dynamo/convert_frame.py"
DYNAMO_DIR = "/torch/_dynamo/"
TORCH_DIR = "/torch/"
# the tool's own code (its harness, which calls a factory's model)
OWN_DIR = str(Path(__file__).resolve().parent.parent).replace("\\", "/") + "/"
NESTED = "<locals>"  # in the qualified name of a function defined inside another
MAX_WRAPPERS = 8  # wrappers followed inward, at most


def compiled_code(frame: types.FrameType | None) -> dict[str, Any] | None:
    """The user code Dynamo is compiling, from ``frame`` outwards: its qualified name, file
    and first line, and for a decorator's wrapper the function it wraps (``wraps``); None when
    no Dynamo frame holds one."""
    while frame is not None:
        if _path(frame.f_code.co_filename).endswith(CONVERT_FRAME):
            f_locals = frame.f_locals
            code = f_locals.get("code")
            if isinstance(code, types.CodeType):  # torch's own too: nn.Sequential, an optimizer's step
                out = _describe(code, qualname(code, f_locals.get("globals")))
                wrapped = _safely_wrapped(code, f_locals) if _nested(code, out["name"]) else None
                if wrapped is not None and DYNAMO_DIR in _path(code.co_filename):
                    out = _describe_function(wrapped)  # Dynamo's own wrapper (wrap_inline), not the model's
                elif wrapped is not None:
                    out["wraps"] = _describe_function(wrapped)
                return _with_caller(out, frame)
        frame = frame.f_back
    return None


def _with_caller(out: dict[str, Any], frame: types.FrameType) -> dict[str, Any]:
    """``out``, and where its function is a library's, the model's line that called it."""
    caller = _user_caller(frame.f_back) if _in_library(str((out.get("wraps") or out)["file"])) else None
    return {**out, "called_from": caller} if caller is not None else out


def _user_caller(frame: types.FrameType | None) -> dict[str, Any] | None:
    """The innermost frame outside every library, from ``frame`` outwards: the model's line
    that called a library's compiled function (``opt.step()``); None where this tool's
    harness called it (a factory's model) before any of the model's code."""
    while frame is not None:
        file = frame.f_code.co_filename
        if _path(file).startswith(OWN_DIR):
            return None
        if not file.startswith("<") and not _in_library(file):
            return {"file": file, "line": frame.f_lineno}
        frame = frame.f_back
    return None


def _in_library(file: str) -> bool:
    """torch's own file, or an installed package's (``graph_breaks.library_path``)."""
    return TORCH_DIR in _path(file) or bool(library_path(file, ""))


def _safely_wrapped(code: types.CodeType, f_locals: dict[str, Any]) -> types.FunctionType | None:
    """``_wrapped``, or None where the wrapper's free variables hold something that fails to
    be looked at (evidence only: never the reason a module's record is lost)."""
    try:
        return _wrapped(code, f_locals)
    except Exception:
        return None


def _wrapped(code: types.CodeType, f_locals: dict[str, Any]) -> types.FunctionType | None:
    """The one user function among ``code``'s free variables, read from the compiled frame's
    locals or closure as ``_compile`` holds them; None unless exactly one."""
    values: list[Any] = []
    frame_locals, closure = f_locals.get("locals"), f_locals.get("closure")
    if isinstance(frame_locals, dict):
        values = [frame_locals.get(name) for name in code.co_freevars]
    if all(v is None for v in values) and isinstance(closure, tuple):  # a tensor has no truth value
        values = [_cell(c) for c in closure]
    fn = _one_function(values)
    for _ in range(MAX_WRAPPERS):  # a wrapper may wrap another wrapper
        if fn is None or NESTED not in fn.__qualname__:
            break
        inner = _unwrap(fn)
        fn = inner if inner is not fn else _one_function([_cell(c) for c in fn.__closure__ or ()])
    return fn


def _one_function(values: list[Any]) -> types.FunctionType | None:
    """The one function among ``values`` (a module's ``forward`` for a module: Dynamo's
    ``wrap_inline`` wraps the module itself), unwrapped; None unless exactly one."""
    found = [f for f in map(_function_of, values) if f is not None]
    users = [f for f in found if not _in_torch(f.__code__)]  # a wrapper may also hold torch's helpers
    one = users if len(users) == 1 else found
    return _unwrap(one[0]) if len(one) == 1 else None


def _function_of(value: Any) -> types.FunctionType | None:
    if isinstance(value, types.FunctionType):
        return value
    forward = getattr(type(value), "forward", None) if callable(value) else None
    return forward if isinstance(forward, types.FunctionType) else None


def _unwrap(fn: types.FunctionType) -> types.FunctionType:
    """The function ``functools.wraps`` says ``fn`` wraps, to the innermost (``fn`` itself
    where it says none)."""
    try:
        inner = inspect.unwrap(fn)
    except ValueError:  # a cycle of __wrapped__
        return fn
    return inner if isinstance(inner, types.FunctionType) else fn


def _cell(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except (AttributeError, ValueError):  # not a cell, or an empty one
        return None


def _describe(code: types.CodeType, name: str) -> dict[str, Any]:
    return {"name": name, "file": code.co_filename, "line": code.co_firstlineno}


def _describe_function(fn: types.FunctionType) -> dict[str, Any]:
    return _describe(fn.__code__, fn.__qualname__)


def _nested(code: types.CodeType, name: str) -> bool:
    """A function defined inside another (a decorator's wrapper): by its qualified name, or on
    Python 3.10, where a name not found in the globals is bare, by its free variables."""
    return NESTED in name or (not hasattr(code, "co_qualname") and bool(code.co_freevars))


def qualname(code: types.CodeType, frame_globals: Any) -> str:
    """``Class.method``, ``outer.<locals>.wrapper``: the code's own (Python 3.11 on), else as
    found in the globals of the frame Dynamo compiles, else the bare name."""
    own = getattr(code, "co_qualname", None)
    if own:
        return own
    found = globals_qualname(code, frame_globals) if isinstance(frame_globals, dict) else None
    return found or code.co_name


def globals_qualname(code: types.CodeType, frame_globals: dict[str, Any]) -> str | None:
    """Python 3.10's code objects have no qualified name: the one of the module-level function
    whose code this is, of the class method, or of the function defined directly inside a
    module-level function (its code among that function's constants); None if none is."""
    for value in list(frame_globals.values()):
        fn = _plain(value)
        if fn is not None and fn.__code__ is code:
            return fn.__qualname__
        if fn is not None and any(c is code for c in fn.__code__.co_consts):
            return f"{fn.__qualname__}.{NESTED}.{code.co_name}"
        if isinstance(value, type):
            for attr in list(vars(value).values()):
                method = _plain(attr)
                if method is not None and method.__code__ is code:
                    return method.__qualname__
    return None


def _plain(value: Any) -> types.FunctionType | None:
    """The function itself, or the one a staticmethod or classmethod holds."""
    value = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
    return value if isinstance(value, types.FunctionType) else None


def _in_torch(code: types.CodeType) -> bool:
    return TORCH_DIR in _path(code.co_filename)


def _path(p: str) -> str:
    return p.replace("\\", "/")
