"""Which of the user's functions each graph was compiled from (``GraphResult.compiled_from``:
the code object Dynamo compiled, recorded by ``runner/dynamo_frame.py``), in words; pure."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from .results import BreakdownResult, GraphResult

# Dynamo names the code it resumes a function with after a graph break this way
# (torch/_dynamo/resume_execution.py, 2.5 to 2.15): the function, and the line of the break.
RESUME = re.compile(r"^torch_dynamo_resume_in_(?P<function>.+)_at_(?P<line>\d+)$")


def code_label(code: dict[str, Any] | None) -> str | None:
    """``MLP.forward (mlp.py:30)``; after a graph break, ``f after its graph break at line 10
    (script.py:10)``; a decorator's wrapper by the function it wraps, ``BertModel.forward
    (modeling_bert.py:612), through its decorator merge_with_config_defaults`` (the wrapper
    ``merge_with_config_defaults.<locals>.wrapper``); None where it is not known."""
    if not code or not code.get("name"):
        return None
    if code.get("wraps"):
        decorator = str(code["name"]).split(".<locals>", 1)[0]
        return f"{_one_label(code['wraps'])}, through its decorator {decorator}"
    return _one_label(code)


# The file torch.fx gives the code it generates for a GraphModule (an exported or PT2E-quantized
# model's ``forward``): its number counts the modules a process has generated, so it differs
# between runs of one model.
FX_CODE = re.compile(r"^<eval_with_key>\.\d+$")


def _one_label(code: dict[str, Any]) -> str:
    name, file = str(code["name"]), _base(str(code.get("file") or ""))
    where = f"{file}:{code['line']}" if code.get("line") else file
    if FX_CODE.match(file):
        return f"{name} of a torch.fx GraphModule (its generated code, {where})"
    resumed = RESUME.match(name.rsplit(".", 1)[-1])
    if resumed:
        name = f"{resumed['function']} after its graph break at line {resumed['line']}"
    return f"{name} ({where})" if where else name


def top_levels(graphs: list[GraphResult]) -> dict[str, str]:
    """Graph id -> the name its own code (the module path ``""``: no ``nn.Module``) goes by,
    where the graphs come from several functions: ``(top level of Adam.step)``, so that a train
    step's loss and the optimizer update it calls are not one "top level"; {} where they come
    from one (or are not known), whose code is simply the top level."""
    named: dict[str, tuple[str, str, bool]] = {}  # graph id -> file, function, resumed
    for g in graphs:
        if g.compiled_autograd:
            named[g.id] = ("", "", False)
        elif g.compiled_from and g.compiled_from.get("name"):
            name, resumed = _function(g.compiled_from)
            named[g.id] = (_base(str((g.compiled_from.get("wraps") or g.compiled_from).get("file") or "")),
                           name, resumed)
    whole = {(file, name) for file, name, resumed in named.values() if not resumed}
    ids = {gid: (file, _resumed_as(file, name, whole) if resumed else name)
           for gid, (file, name, resumed) in named.items()}
    if len(set(ids.values())) < 2:
        return {}
    return {gid: f"(top level of {name})" if name else "(compiled autograd's backward)"
            for gid, (_, name) in ids.items()}


def _resumed_as(file: str, function: str, whole: set[tuple[str, str]]) -> str:
    """The function a resumed code object continues: its code names no class (``forward``),
    so the one function of the run in its file by that name (``Block.forward``), if one."""
    same = [name for f, name in whole if f == file and name.rsplit(".", 1)[-1] == function]
    return same[0] if len(same) == 1 else function


def _function(code: dict[str, Any]) -> tuple[str, bool]:
    """The function's name (a resumed one's and a decorator's wrapper's by the function
    itself), and whether this code is its resumption after a graph break."""
    name = str((code.get("wraps") or code)["name"])
    resumed = RESUME.match(name.rsplit(".", 1)[-1])
    return (resumed["function"], True) if resumed else (name, False)


def same_code(a: GraphResult, b: GraphResult) -> bool:
    """Whether two graphs (of two runs) were compiled from the same function, as far as both
    runs know: its name and file (lines move with edits)."""
    if not a.compiled_from or not b.compiled_from:
        return True
    return _identity(a.compiled_from) == _identity(b.compiled_from)


# Compiled autograd's graph: Dynamo compiles the GraphModule compiled autograd traced of the
# backward (its ``forward``, in torch.fx's generated code), not a function of the model
AUTOGRAD_LABEL = "the backward, as compiled autograd captured it"


def origins_line(r: BreakdownResult) -> str | None:
    """``graph origins: 0-forward, 0-backward from MLP.forward (mlp.py:30); ...``; a function
    of a library's (torch's ``Adam.step``, a Hugging Face model's ``forward``) with the model's
    line that called it, where the compile recorded one (``called_from``)."""
    groups: dict[str, list[str]] = {}
    for g in r.graphs:
        label = AUTOGRAD_LABEL if g.compiled_autograd else code_label(g.compiled_from)
        if label is not None and (caller := (g.compiled_from or {}).get("called_from")):
            label += f", called from {_base(str(caller.get('file') or ''))}:{caller.get('line')}"
        if label is not None:
            groups.setdefault(label, []).append(g.id)
    if not groups:
        return None
    return "graph origins: " + "; ".join(f"{', '.join(ids)} from {label}" for label, ids in groups.items())


def _identity(code: dict[str, Any]) -> tuple[str, str]:
    code = code.get("wraps") or code
    file = _base(str(code.get("file") or ""))
    return function_name(code), "<eval_with_key>" if FX_CODE.match(file) else file


def function_name(code: dict[str, Any] | None) -> str:
    """The name of the function a graph was compiled from (a decorator's wrapper's, the one it
    wraps): ``MLP.forward``."""
    code = code or {}
    return str((code.get("wraps") or code).get("name"))


def _base(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


_CACHE_PATH_LINE = re.compile(r"^\s*# kernel path: .*$", re.M)
# torch 2.5's C++ kernels include their prefix header by its path in the cache
# (``#include "/tmp/torchinductor_me/vu/cvuvp4i7....h"``); the file's name is its content's hash.
_INCLUDE_DIR = re.compile(r'^(\s*#include\s+")/[^"\n]*/([^/"\n]+")', re.M)


def cache_neutral(text: str) -> str:
    """Compiled code less what names the cache it was written in: its ``# kernel path:``
    comments, and the directories of the headers its C++ kernels include by absolute path."""
    return _INCLUDE_DIR.sub(r"\1\2", _CACHE_PATH_LINE.sub("", text))


def code_digest(module_text: str) -> str:
    """A compiled module's code, less what names the cache it was written in
    (``cache_neutral``): two cold caches that generated the same code give the same digest."""
    return hashlib.sha256(cache_neutral(module_text).encode()).hexdigest()


def graph_codes(result: BreakdownResult, run_dir: Path | None = None,
                texts: dict[str, str] | None = None) -> dict[str, str]:
    """Graph id -> ``code_digest`` of its module, read from ``run_dir`` (default: the run's
    own) or taken from ``texts`` (``module_texts`` already read); {} unless every graph was
    measured and its module is there to read."""
    gs = result.graphs
    if not gs or not all(g.ok and g.module for g in gs):
        return {}
    texts = module_texts(result, run_dir) if texts is None else texts
    return {g.id: code_digest(texts[g.id]) for g in gs} if all(g.id in texts for g in gs) else {}


def module_texts(result: BreakdownResult, run_dir: Path | None = None) -> dict[str, str]:
    """Graph id -> its module's text, read from ``run_dir`` (default: the run's own), for the
    measured graphs whose module is there."""
    where = run_dir or (Path(result.run_dir) if result.run_dir else None)
    out: dict[str, str] = {}
    for g in (g for g in result.measured() if g.module and where is not None):
        try:
            out[g.id] = (where / str(g.module)).read_text()
        except (OSError, UnicodeDecodeError):
            continue
    return out
