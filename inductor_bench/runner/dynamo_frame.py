"""Which of the user's functions a compiled module was made from: the code object Dynamo was
compiling when Inductor wrote the module, found on the call stack (``convert_frame``'s
``_compile(code, ...)`` and the functions it calls hold it as ``code``, in torch 2.5 to 2.15).

A backward module is written when the first backward runs, with no Dynamo frame on the stack:
it takes its forward's code (the same frame id and compile id), in ``runner/graphs.py``."""

from __future__ import annotations

import types
from typing import Any

CODE_KEY = "compiled_from"  # in the modules log and GraphResult
DYNAMO_DIR = "/torch/_dynamo/"
TORCH_DIR = "/torch/"


def compiled_code(frame: types.FrameType | None) -> dict[str, Any] | None:
    """The user code Dynamo is compiling, from ``frame`` outwards: its qualified name, file
    and first line; None when no Dynamo frame holds one."""
    while frame is not None:
        if DYNAMO_DIR in frame.f_code.co_filename.replace("\\", "/"):
            code = frame.f_locals.get("code")
            if isinstance(code, types.CodeType) and TORCH_DIR not in code.co_filename.replace("\\", "/"):
                return {
                    "name": getattr(code, "co_qualname", code.co_name),  # 3.11 on: Class.method
                    "file": code.co_filename,
                    "line": code.co_firstlineno,
                }
        frame = frame.f_back
    return None
