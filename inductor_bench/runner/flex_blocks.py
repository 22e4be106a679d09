"""How many key/value blocks a masked flex attention computes, on the inputs it is profiled on.

Inductor's C++ flex attention template walks, for each query block, the key/value blocks its
block mask lists (``kv_num_blocks`` partial ones and ``full_kv_num_blocks`` whole ones) and
skips the rest: its FLOPs follow the mask's values, which the module's text cannot say (a
causal mask of 4 x 4 blocks computes 10 of 16). ``blocks`` calls the graph once, untimed,
tracing the lines of the module's file; at each call of such a template it reads the two
count tensors the call passes (arguments of ``call()``, or buffers it made) and keeps their
sum: kernel -> the sum at each of its calls, in order. ``core/conv_attention.py`` counts
the FLOPs from it.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core.conv_attention import flex_block_args
from ..core.modparse import ModuleInfo, parse_module
from ..core.module_calls import call_of
from ..core.work import is_cpp_flex, kernel_params
from .unbacked import hooked


def read(call: Callable[[], Any], module_file: str, text: str) -> dict[str, list[int | None]]:
    """``blocks`` where the module has a C++ flex attention template, whose work its block mask
    decides; {} otherwise, and where the call fails (a count is an addition to the
    measurement: the profile's own calls say what is wrong)."""
    if "kvBlockSize" not in text:
        return {}
    module = parse_module(text)
    if not any(is_cpp_flex(k) for k in module.kernels.values()):
        return {}
    try:
        return blocks(call, module_file, text, module)
    except Exception:
        return {}


def blocks(call: Callable[[], Any], module_file: str, text: str,
           module: ModuleInfo) -> dict[str, list[int | None]]:
    """Call ``call`` once; each flex attention template of ``module`` -> its block mask's
    count of blocks (partial and full, summed over the mask) at each of its calls; None for a
    call whose counts could not be read."""
    target = str(Path(module_file).resolve())
    lines = text.splitlines()
    flex = {name: [n for n, _ in kernel_params(k) or []]
            for name, k in module.kernels.items() if is_cpp_flex(k)}
    seen: dict[str, list[int | None]] = {}

    def on_line(frame: Any, event: str, _arg: Any) -> Any:
        if event == "line" and 0 < frame.f_lineno <= len(lines):
            try:  # whatever fails here would be raised in the module's own frame
                c = call_of(lines[frame.f_lineno - 1], module)
                exprs = flex_block_args(flex[c.name], c.args) if c is not None and c.name in flex else None
            except Exception:
                return on_line
            if exprs:
                seen.setdefault(c.name, []).append(_total(exprs, frame))
        return on_line

    def on_call(frame: Any, event: str, _arg: Any) -> Any:
        return on_line if frame.f_code.co_filename == target else None

    hooked(call, on_call, trace=True)
    return seen


def _total(exprs: list[str], frame: Any) -> int | None:
    """The sum of the tensors the arguments of the module's call name (``arg4_1``, ``buf5``),
    read in the frame about to make the call; None where one cannot be read (an exception
    here would be raised in the module's own frame)."""
    try:  # the module's own expressions, in the frame that is about to evaluate them
        return sum(int(eval(e, frame.f_globals, frame.f_locals).sum()) for e in exprs)
    except Exception:
        return None
