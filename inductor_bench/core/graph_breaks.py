"""Where Dynamo broke the model's graph, read from torch's own record of each break (pure;
no torch).

Each break Dynamo meets is a ``dynamo_graph_break_reason`` artifact of the structured trace
(torch 2.6 and later; the compile worker keeps their text), which reads::

    Graph break in user code at /path/model.py:16
    Graph Break Reason: Failed to handle graph break gracefully. Skipping the function and
    falling back to eager. Graph break encountered:

    Attempted to wrap RNN, GRU, or LSTM
      Explanation: Dynamo does not support RNN, GRU, or LSTM.
      Hint: ...

or, for a frame Dynamo cannot resume after the break (a skip)::

    Graph break: torch.compile cannot properly resume from this graph break, which results in a skip.
    torch.compile will skip tracing the frame f (/path/model.py line 12) and fall back to eager.
    The graph break occurred in the following user code:
      File "/path/model.py", line 14, in f
    ...

Torch 2.6 writes the same first line, then ``Reason: Unsupported: ...`` (Dynamo's exception)
and the user code's traceback; for a skip, ``Graph break: skip: from user code at:``, the
user's stack, and the reason only as the exception that ends Python's traceback.

or, for a break Dynamo cannot resume after but has a place to compile up to (torch 2.13 and
2.14; 2.15 resumes after the same break)::

    Graph Break Reason: Encountered graph break that we cannot resume from. Compiling up to the
    previous resumable state, then skipping the rest of the function. Graph break encountered:

Where a torch writes no such artifact (2.5), the worker reads Dynamo's ``graph_breaks`` logging
artifact, whose records hold the user's stack (``from_log``), with the counts of Dynamo's
``counters["graph_break"]``; where neither says anything, those counters alone (the reason,
with a count; no place). A break whose function was skipped ran that function eagerly, and one
after which the rest of its function was skipped ran that rest eagerly: the time it took is in
no compiled graph.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .backend_failures import cause_first

REASON_CHARS = 240
_AT = re.compile(r"Graph break in user code at (?P<file>.+?):(?P<line>\d+)\s*$", re.M)
_FILE_LINE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)', re.M)
_EXPLANATION = re.compile(r"^\s*Explanation:\s*(?P<text>.+)$", re.M)
_HINT = re.compile(r"^\s*Hint:\s*(?P<text>.+)$", re.M)
_REASON = re.compile(r"^(?:Graph Break )?Reason:\s*(?P<text>.*)$", re.M)  # 2.6: "Reason:"
_WONT = re.compile(r"^WON'T CONVERT \S+ (?P<file>\S+) line (?P<line>\d+)", re.M)  # older torch
_REST = "skipping the rest of the function"
_SKIPS = ("Skipping the function and falling back to eager", "results in a skip",
          "skip tracing the frame", "WON'T CONVERT", "Graph break: skip:", _REST)
# 2.6's skip says why only in the traceback that ends it: the exception Dynamo raised
_RAISED = re.compile(r"^torch\._dynamo\.exc\.\w+: (?P<text>.+)$", re.M)
# torch 2.15's delayed break names what it was calling and why in one explanation
_CALLING = re.compile(r"^Dynamo determined that a graph break should occur when calling `(?P<what>[^`]+)`\. "
                      r"Reason: (?P<why>.+?\.)(?:\s+(?P<hint>.+))?$")
_TRACE_START = "\nTraceback (most recent call last):"
_USER_TRACE = "User code traceback:"
_QUOTES = "'\""
_BACKWARD_CALL = "Tensor.backward"  # torch 2.5's reason, and in each later one's words
# where an installed package's file is named in torch's words: the package's own path is enough
_INSTALLED = re.compile(r"(?:[A-Za-z]:)?[/\\][^\s'\"]*[/\\](?:site|dist)-packages[/\\]")
# torch's own breaks that are there by design: (its file within torch, words of the reason, why)
BY_DESIGN = (
    ("torch/optim/optimizer.py", ("graph_break", "graph break"),
     "torch breaks the graph inside Optimizer.step by design, so that the update compiles as a graph "
     "of its own, under no_grad, changing the parameters in place; nothing to change in the model"),
)


def parse(payload: str, torch_dir: str = "") -> dict[str, Any]:
    """One artifact's text -> {"file", "line", "reason", "skipped", "count": 1}, "rest": True
    where Dynamo compiled up to the break and skipped only the rest of the function, "hint":
    Dynamo's first hint, when it gave one, and for a break inside a library's code (torch's,
    its files under ``torch_dir``, or an installed package's) what ``_library_side`` adds."""
    text = payload.split(_TRACE_START, 1)[0]
    file, line = _place(text)
    # a skip's own lines say only that it skipped: Dynamo's explanation ends its traceback
    why = text if _EXPLANATION.search(text) or not _EXPLANATION.search(payload) else payload
    if not (_EXPLANATION.search(why) or _REASON.search(why)) and (raised := _RAISED.findall(payload)):
        why = f"Reason: {raised[-1]}"
    hint = _hint(why)
    out = {"file": file, "line": line, "reason": _reason(why), "skipped": any(s in text for s in _SKIPS),
           "count": 1, **({"rest": True} if _REST in text else {}),
           **({"hint": " ".join(hint.split())} if hint else {})}
    return _library_side(out, text, torch_dir)


def fullgraph_error(text: str) -> str | None:
    """The line for the error Dynamo raises at a break it may not make (``fullgraph=True``):
    ``fg.py:6: Dynamo does not know how to trace builtin operator `print` ... (Dynamo's hint:
    ...)``; None where its text names no place."""
    b = parse(text)
    if not b["file"]:
        return None
    hint = f" (Dynamo's hint: {b['hint']})" if b.get("hint") else ""
    return f"a graph break, an error under fullgraph=True (or error_on_graph_break), at {describe(b)}{hint}"


def from_log(message: str, error: str, torch_dir: str = "") -> dict[str, Any]:
    """One record of Dynamo's ``graph_breaks`` logging artifact where the structured trace has
    no break record (torch 2.5): "Graph break: from user code at:" and the user's stack,
    innermost frame last (``skip:`` where Dynamo skipped the frame), with the text of the
    exception Dynamo raised (quoted as its counters quote it: the same reason either way)."""
    return parse(f"{message}\nGraph Break Reason: {error.strip(_QUOTES)}", torch_dir)


def with_counts(logged: list[dict[str, Any]], counter: dict[str, int]) -> list[dict[str, Any]]:
    """The logged breaks (Dynamo logs a place once, however often it breaks there) with the
    count its ``counters["graph_break"]`` holds for their reason, and each counted reason no
    record names, without a place."""
    counts = {from_counter(k, 0)["reason"]: int(n) for k, n in counter.items()}
    out = collect(logged)
    for reason, n in counts.items():
        same = [b for b in out if b["reason"] == reason]
        if not same:
            out.append({"file": "", "line": 0, "reason": reason, "skipped": False, "count": n})
        else:  # the breaks no record names go to the first place of that reason
            same[0]["count"] += max(0, n - sum(b["count"] for b in same))
    return out


def from_counter(reason: str, count: int) -> dict[str, Any]:
    """One ``counters["graph_break"]`` entry: the reason, no place."""
    text = _reason(reason.strip(_QUOTES))
    return {"file": "", "line": 0, "reason": text, "skipped": False, "count": int(count)}


def collect(breaks: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same break (place and reason) met several times counted once, first seen first."""
    out: dict[tuple[str, int, str, str], dict[str, Any]] = {}
    for b in breaks:
        key = (b["file"], b["line"], b["reason"], str(b.get("reached_from", "")))
        if key in out:
            out[key]["count"] += b["count"]
            out[key]["skipped"] = out[key]["skipped"] or b["skipped"]
            if b.get("rest"):
                out[key]["rest"] = True
        else:
            out[key] = dict(b)
    return list(out.values())


def one_side_only(base: list[dict[str, Any]], head: list[dict[str, Any]],
                  reworded: bool = False) -> tuple[list, list]:
    """(the breaks only in head, those only in base). A break is the same on both sides when its
    file's name and its reason are: a change above it moves its line. ``reworded``: the sides ran
    other torch versions, which word one break otherwise (2.5's ``builtin: print [...]`` is
    2.14's ``Dynamo does not know how to trace builtin operator `print```), so a break at the
    same file and line is the same one too."""
    def key(b: dict[str, Any]) -> tuple[str, str]:
        return Path(b.get("file") or "").name, b.get("reason", "")

    def at(b: dict[str, Any]) -> tuple[str, Any]:
        return Path(b.get("file") or "").name, b.get("line")
    bk, hk = {key(b) for b in base}, {key(b) for b in head}
    added, gone = [b for b in head if key(b) not in bk], [b for b in base if key(b) not in hk]
    if not reworded:
        return added, gone
    a_at, g_at = {at(b) for b in added if b.get("file")}, {at(b) for b in gone if b.get("file")}
    return [b for b in added if at(b) not in g_at], [b for b in gone if at(b) not in a_at]


def noted(breaks: list[dict[str, Any]], autograd_graphs: list[str],
          backward_graphs: list[str] | None = None) -> list[dict[str, Any]]:
    """The breaks, each at ``Tensor.backward()`` saying why it costs nothing: where compiled
    autograd captured the backward (``autograd_graphs``: its graphs), Dynamo leaves the call to
    it, which compiled the backward as a graph of its own; else, where AOTAutograd compiled
    backward graphs with their forwards (``backward_graphs``), autograd runs those."""
    if autograd_graphs:
        why = (f"by design under compiled autograd: Dynamo leaves the call to it, and it compiled the "
               f"backward as {', '.join(autograd_graphs)}")
    elif backward_graphs:
        why = (f"expected in a compiled training step: Dynamo leaves the call to autograd, which runs "
               f"the backward compiled with the forward ({', '.join(backward_graphs)}); nothing to "
               "change in the model")
    else:
        return breaks
    return [{**b, "on_purpose": why} if _BACKWARD_CALL in b.get("reason", "") and "on_purpose" not in b
            else b for b in breaks]


def describe(b: dict[str, Any]) -> str:
    """``model.py:16: Dynamo does not support RNN, GRU, or LSTM. (its function ran eagerly)``;
    a break in a library's code (torch's, an installed package's) also says from which line of
    the model it was reached, and why torch breaks there where it does so by design."""
    where = f"{_where(b)}: " if b.get("file") else ""
    times = f" ({b['count']} times)" if b.get("count", 1) > 1 else ""
    eager = (" (the rest of its function ran eagerly, outside any compiled graph)" if b.get("rest") else
             " (its function ran eagerly, outside any compiled graph)" if b.get("skipped") else "")
    why = f" — {b.get('on_purpose') or b['cause']}" if b.get("on_purpose") or b.get("cause") else ""
    return f"{where}{b['reason']}{times}{eager}{why}"


def _where(b: dict[str, Any]) -> str:
    library = b.get("in_library")
    if not library:
        return f"{Path(b['file']).name}:{b['line']}"
    src = b.get("reached_from")
    via = f", reached from {Path(src['file']).name}:{src['line']}" if src else ""
    whose = "torch's own code" if library.startswith("torch/") else "an installed package's code"
    return f"{library}:{b['line']} ({whose}{via})"


def summary_line(breaks: list[dict[str, Any]], shown: int = 3) -> str:
    """The report's line: how many breaks, the first few described (a backend's failure on an
    ``.item()`` first: ``backend_failures.cause_first``)."""
    breaks = cause_first(breaks)
    parts = [describe(b) for b in breaks[:shown]]
    more = f" · and {len(breaks) - shown} more (JSON: extras.graph_breaks)" if len(breaks) > shown else ""
    met = sum(max(1, int(b.get("count", 1))) for b in breaks)
    places = f" at {len(breaks)} place{'' if len(breaks) == 1 else 's'}" if met > len(breaks) else ""
    return f"graph breaks: {met}{places} — " + " · ".join(parts) + more


def nothing_compiled(path: str, script: bool, breaks: list[dict[str, Any]], dynamo_graphs: int | None = None,
                     lookalikes: list[str] | None = None, asked: dict[str, Any] | None = None,
                     stopped_s: float | None = None, failed: str | None = None) -> str:
    """Why a run has no graph to profile, as one line. ``dynamo_graphs``: the graphs Dynamo
    captured, whichever backend then compiled them; ``lookalikes``: a script's top-level
    functions named like a model factory (``get_model``), which the tool does not call;
    ``asked``: what a script asked to compile (``runner/script_compiles.py``); ``stopped_s``:
    when ``--script-seconds`` stopped the script; ``failed``: a compile that failed and ran
    eagerly, ``f (m.py:3) failed: InductorError: ...`` (``core/compiles.first_failure``)."""
    asked, breaks = asked or {}, cause_first(breaks)
    if script and stopped_s is not None:
        return (f"{path}: nothing was compiled — the script was stopped after {stopped_s:.1f} s "
                "(--script-seconds), before it had compiled a graph: give it more seconds")
    if failed:
        return (f"{path}: nothing was compiled — the compile of {failed}; Dynamo went on "
                "(torch._dynamo.config.suppress_errors) and ran its calls eagerly")
    if script and asked.get("aot_compiles"):
        return (f"{path}: nothing for breakdown to profile — the script compiled with AOTInductor "
                f"({asked['aot_compiles']} ahead-of-time compile(s): aoti_compile_and_package, aot_compile), "
                "whose package runs outside torch.compile, and breakdown profiles the graphs torch.compile "
                "makes: compile the model with torch.compile to break it down, or profile the package's "
                "runs with torch.profiler and read the trace with `inductor-bench analyze`")
    if script and dynamo_graphs:
        return (f"{path}: nothing was compiled by Inductor — Dynamo captured {dynamo_graphs} graph(s), "
                "and another backend compiled them: this tool profiles torch.compile's default "
                "backend, inductor (torch.compile(..., backend='inductor'))")
    if script and breaks:
        head = (f"{path}: nothing was compiled — the script ran a torch.compile'd function, and Dynamo "
                "ran it eagerly at a graph break")
    elif script and asked.get("exited"):
        head = (f"{path}: nothing was compiled — the script called sys.exit() before it ran a "
                "torch.compile'd function (argparse's --help does; what it printed is in the run "
                "directory's logs/)")
    elif script:
        head = f"{path}: nothing was compiled — the script never ran a torch.compile'd function"
    else:
        head = (f"{path}: nothing was compiled — make_workload()'s model ran without a single "
                "Inductor graph (Dynamo ran all of it eagerly)")
    if script and asked.get("module_compile_eager"):
        return (f"{path}: nothing was compiled — the script compiled {asked['module_compile_eager'][0]}, "
                f"which this torch leaves eager: {MODULE_COMPILE_EAGER}")
    if breaks:
        hint = f" (Dynamo's hint: {breaks[0]['hint']})" if breaks[0].get("hint") else ""
        return f"{head}; {summary_line(breaks, shown=1)}{hint}"
    if script and asked.get("torch_compile"):
        named = ", ".join(asked["torch_compile"][:3])
        why = ("the script called sys.exit() before it called the compiled function" if asked.get("exited")
               else "the compiled function never ran, or Dynamo skipped it (TORCH_LOGS=+dynamo says why)")
        return (f"{path}: nothing was compiled — the script called torch.compile "
                f"{len(asked['torch_compile'])} time(s) ({named}), but Dynamo compiled no frame: {why}")
    if script:
        return head + ("" if asked.get("exited") else _no_factory(lookalikes or []))
    return head + " and reported no graph break (torch.compiler.disable, or a backend other than inductor?)"


MODULE_COMPILE_EAGER = ("before torch 2.14 Dynamo skips nn.Module.compile() of a module whose forward is "
                       "torch's own (nn.Sequential, nn.Linear; pytorch/pytorch#150915); compile it with "
                       "model = torch.compile(model) instead")


def module_compile_skips(names: list[str]) -> list[dict[str, Any]]:
    """A skipped-function entry (as Dynamo's own skips are listed) for each module a script
    compiled with ``nn.Module.compile()`` that this torch left eager."""
    return [{"file": "", "line": 0, "reason": f"{n} compiled nothing: {MODULE_COMPILE_EAGER}",
             "skipped": True, "count": 1} for n in dict.fromkeys(names)]


def _no_factory(lookalikes: list[str]) -> str:
    """For a script that compiled nothing: the convention it may have meant to follow."""
    named = ", ".join(f"{n}()" for n in lookalikes[:3])
    meant = f": it defines {named}, which the tool does not call" if lookalikes else ""
    return (f" (a file without make_workload() runs as a script{meant}; to profile a model, name its "
            "factory make_workload(device, dtype, batch_size), returning (model, args))")


def _place(text: str) -> tuple[str, int]:
    m = _AT.search(text) or _WONT.search(text)
    if m:
        return m["file"], int(m["line"])
    frames = _FILE_LINE.findall(text)  # a skip: the innermost frame of the user code
    return (frames[-1][0], int(frames[-1][1])) if frames else ("", 0)


def _reason(text: str) -> str:
    m = _EXPLANATION.search(text) or _REASON.search(text)
    first = m["text"] if m else next((ln for ln in text.splitlines() if ln.strip()), "")
    first = " ".join(first.split())
    calling = _CALLING.match(first)
    if calling:
        first = f"{calling['why']} (calling {_python_name(calling['what'])})"
    return one_line(_INSTALLED.sub("", first))


def one_line(text: str, chars: int = REASON_CHARS) -> str:
    """Torch's words on one line, cut to ``chars`` with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= chars else text[: chars - 1] + "…"


def _hint(text: str) -> str | None:
    """Dynamo's first hint; torch 2.15's delayed break gives it after the reason, in the
    explanation itself."""
    if (m := _HINT.search(text)) is not None:
        return m["text"]
    m = _EXPLANATION.search(text)
    calling = _CALLING.match(m["text"].strip()) if m else None
    return calling["hint"] if calling else None


def _python_name(source: str) -> str:
    """Dynamo's name of what a frame called, as the model's code names it:
    ``L['self']._modules['gru']`` and ``L['self'].__dict__['_modules']['gru']`` ->
    ``self.gru``."""
    name = re.sub(r"^[LG]\['([^']+)'\]", r"\1", source)
    return re.sub(r"\.(?:__dict__\[')?_(?:modules|parameters|buffers)(?:'\])?\['([^']+)'\]", r".\1", name)


def _library_side(b: dict[str, Any], text: str, torch_dir: str) -> dict[str, Any]:
    """A break whose place is in a library's code, torch's own (under ``torch_dir``) or an
    installed package's, gets ``in_library``, its file within the library's folder, and
    ``reached_from``, the innermost frame of the model's stack outside every library (the line
    the user can change); where torch breaks there by design, ``on_purpose`` says why, in
    place of Dynamo's hint (to remove the call)."""
    inside = library_path(b["file"], torch_dir)
    if not inside:
        return b
    b["in_library"] = inside
    stack = text.split(_USER_TRACE, 1)[-1]
    user = [(f, int(n)) for f, n in _FILE_LINE.findall(stack)
            if not f.startswith("<") and not library_path(f, torch_dir)]
    if user:
        b["reached_from"] = {"file": user[-1][0], "line": user[-1][1]}
    for file, words, why in BY_DESIGN:
        if inside == file and any(w in b["reason"].lower() for w in words):
            b.pop("hint", None)
            b["on_purpose"] = why
    return b


def library_path(file: str, torch_dir: str) -> str:
    """``torch/optim/optimizer.py`` for a file under ``torch_dir`` (torch's package folder,
    wherever torch was built), ``transformers/models/llama/modeling_llama.py`` for one under a
    ``site-packages`` or ``dist-packages`` folder; ``""`` for the model's own."""
    root = torch_dir.replace("\\", "/").rstrip("/")
    path = file.replace("\\", "/")
    if root and path.startswith(root + "/"):
        return f"{Path(root).name}/{path[len(root) + 1:]}"
    installed = _INSTALLED.match(path)
    return path[installed.end():] if installed else ""
