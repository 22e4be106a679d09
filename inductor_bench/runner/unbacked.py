"""The values a graph's data-dependent sizes took on the inputs it is profiled on.

A graph that captures an op whose output size depends on the data (``nonzero``, ``masked_select``
or ``.item()`` with ``capture_dynamic_output_shape_ops`` / ``capture_scalar_outputs``) has an
*unbacked* size symbol: ``call()`` reads it from a result as it runs (``u0 = buf1.size(0)``) and
allocates and launches with it (``empty_strided_cpu((u0, 64), ...)``). The module's text cannot
say its value; the run can. ``values`` calls the graph once, untimed, with a profile hook that
reads each function of the module's file as it returns, keeping its locals named like an unbacked
symbol: the sizes of that call, on the inputs every profiled call gets (the model's own first
call, ``runner/call_inputs.py``). ``core/symbols.py`` counts bytes and FLOPs at them.
"""
from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

UNBACKED_NAME = re.compile(r"u\d+")
_READ = re.compile(r"^\s+u\d+ = ", re.MULTILINE)  # call() (or a partition) reading one


def has_unbacked(text: str) -> bool:
    """The module reads a data-dependent size as it runs."""
    return _READ.search(text) is not None


def values(call: Callable[[], Any], module_file: str) -> dict[str, int]:
    """Call ``call`` once; each unbacked symbol a function of ``module_file`` held when it
    returned -> its value (the first seen, in the order met)."""
    target = str(Path(module_file).resolve())
    seen: dict[str, int] = {}

    def hook(frame: Any, event: str, _arg: Any) -> None:
        if event == "return" and frame.f_code.co_filename == target:
            for name, v in frame.f_locals.items():
                if type(v) is int and UNBACKED_NAME.fullmatch(name):
                    seen.setdefault(name, v)

    hooked(call, hook)
    return dict(sorted(seen.items(), key=lambda kv: int(kv[0][1:])))


def hooked(call: Callable[[], Any], hook: Callable[..., Any], trace: bool = False) -> None:
    """Call ``call`` once with ``hook`` as the interpreter's profile function (``trace``: its
    trace function, which sees lines), the one before put back after."""
    get, put = (sys.gettrace, sys.settrace) if trace else (sys.getprofile, sys.setprofile)
    before = get()
    put(hook)
    try:
        call()
    finally:
        put(before)
