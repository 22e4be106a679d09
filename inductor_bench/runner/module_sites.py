"""Where each ``nn.Module`` of the compile worker was built: the model's line that made it.

A kernel of torch's own modules run by torch's own code (an ``nn.Sequential`` of ``Linear``,
``GELU``, ``LayerNorm``; a compiled ``nn.TransformerEncoderLayer``) has no line of the model:
Dynamo keeps only the frames outside torch in a node's stack trace, and there are none. The
line that built the module is then the model's line to point at (``nn.Linear(256, 512),``).

``install`` wraps ``nn.Module.__init__`` as Dynamo itself does (``mutation_guard``; Dynamo
traces the unwrapped original when a compiled function builds a module; the wrapper is
``torch._dynamo.disable``'d, so no frame of it is ever compiled), noting for each module the
innermost frame that is neither torch's nor the module's own ``__init__`` chain: for a layer
torch's ``TransformerEncoderLayer`` builds, the model's line that built that layer.
``built_sites`` resolves, while Dynamo compiles a frame, the module paths its graph's nodes
ran in (``L['self'].seq.0``, ``G['model'].0``) against that frame's locals and globals, and
returns their sites by module path (``core/sources.module_path``).
Best effort throughout: a module copied (``deepcopy``) or loaded has no site, and nothing
here ever disturbs the model or its compile.
"""

from __future__ import annotations

import linecache
import os
import re
import sys
import weakref
from typing import Any

from ..core.sources import getattr_as_dots, module_path

_SITES: dict[int, tuple[weakref.ref[Any], list[Any]]] = {}  # id(module) -> (it, [file, line, func, code])
_ROOT = re.compile(r"^(?:(?P<scope>[LG])\['(?P<name>[^']+)'\]|(?P<self>L__self__|self)(?=\.|$))")
_installed = False
_TORCH_DIR: str | None = None


def install() -> None:
    """Note the site of every module built from now on in this process (once)."""
    global _installed
    if _installed:
        return
    import torch
    import torch._dynamo  # noqa: F401  Dynamo's own wrapper first: it keeps the original to trace

    init = torch.nn.Module.__init__

    def built_init(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        if not torch.compiler.is_compiling():
            _note(self)

    # Never a frame Dynamo compiles: under a compiled function's eager parts (its code after a
    # graph break, compiled autograd's backward) every frame outside torch is one it tries
    torch.nn.Module.__init__ = torch._dynamo.disable(built_init)  # type: ignore[method-assign]
    _installed = True


def torch_dir() -> str:
    """torch's own directory, with a trailing separator (read once)."""
    global _TORCH_DIR
    if _TORCH_DIR is None:
        import torch

        _TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
    return _TORCH_DIR


def _note(module: Any) -> None:
    try:
        site = builder_frame(module, sys._getframe(2), torch_dir())
        if site is not None:
            key = id(module)
            _SITES[key] = (weakref.ref(module, lambda _r, k=key: _SITES.pop(k, None)), site)
    except Exception:  # never disturb the model
        pass


def builder_frame(module: Any, frame: Any, skip_dir: str) -> list[Any] | None:
    """``[file, line, function, code]`` of the innermost frame from ``frame`` outward that is
    not under ``skip_dir`` (torch) and not an ``__init__`` of ``module`` itself (a model's
    ``super().__init__()`` is not where it was built)."""
    while frame is not None:
        code = frame.f_code
        file = code.co_filename
        own_init = code.co_name == "__init__" and code.co_argcount > 0 and \
            frame.f_locals.get(code.co_varnames[0]) is module  # its first argument, however named
        if not own_init and not os.path.abspath(file).startswith(skip_dir) and file != __file__:
            line = frame.f_lineno
            return [file, line, code.co_name, linecache.getline(file, line).strip()]
        frame = frame.f_back
    return None


def site_of(module: Any) -> list[Any] | None:
    entry = _SITES.get(id(module))
    return entry[1] if entry is not None and entry[0]() is module else None


def resolve(raw: str, f_locals: dict[str, Any], f_globals: dict[str, Any]) -> Any:
    """The module an ``nn_module_stack`` path names, in the frame with these locals and globals;
    None where a step is not there."""
    raw = getattr_as_dots(raw)
    m = _ROOT.match(raw)
    if m is None:
        return None
    rest = module_path(raw)  # a global's keeps its name as its first part
    if m.group("self"):
        obj = f_locals.get("self")
    elif m.group("scope") == "G":
        obj = f_globals
    else:
        obj = f_locals.get(m.group("name"))
        if m.group("name") == "args":  # L['args'][0].model: module_path drops the index too
            index = re.match(r"^L\['args'\](?:\[(\d+)\]|\.(\d+))", raw)
            obj = _step(obj, next(g for g in index.groups() if g)) if index else None
    for part in [p for p in rest.split(".") if p]:
        obj = _step(obj, part)
    return obj


def _step(obj: Any, part: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(part)
    modules = getattr(obj, "_modules", None)
    if isinstance(modules, dict) and part in modules:
        return modules[part]
    if part.isdigit() and isinstance(obj, (list, tuple)):
        return obj[int(part)] if int(part) < len(obj) else None
    return getattr(obj, part, None)


def built_sites(nodes: dict[str, dict[str, Any]]) -> dict[str, list[Any]]:
    """For the Dynamo graph being compiled now (its nodes as ``dynamo_graphs.dynamo_nodes``
    reads them): each module path some node with no line of the model ran in -> the site that
    built the module. Empty outside a Dynamo compile or where none is known."""
    raws = {str(r["module"][0]) for r in nodes.values() if r.get("module") and not r.get("frame")}
    if not raws or not _SITES:
        return {}
    try:
        from torch._dynamo.symbolic_convert import InstructionTranslator

        tx = InstructionTranslator.current_tx()
        tx = getattr(getattr(tx, "output", None), "root_tx", None) or tx  # the compiled frame's
        f_locals, f_globals = dict(tx.f_locals), tx.f_globals
    except Exception:
        return {}
    out: dict[str, list[Any]] = {}
    for raw in sorted(raws):
        try:
            site = site_of(resolve(raw, f_locals, f_globals))
        except Exception:
            site = None
        if site is not None:
            out.setdefault(module_path(raw), site)
    return out
