"""The ``inductor-bench breakdown`` command line that measures a saved run's workload again:
its model file, and each option that made the workload what it was (--train, the compile mode,
dtype, autocast, freezing, batch size, device, the script's own arguments after ``--``), quoted
as a shell needs them. A command that left one out would measure another workload, which
``diff`` then refuses to judge against the run."""

from __future__ import annotations

import shlex
from pathlib import Path

from .results import BreakdownResult
from .vocab import CompileMode


def tool_command(*words: str | Path) -> str:
    """An ``inductor-bench`` command line to give in a message, a path in it with a space or a
    quote kept one word: ``tool_command("report", run)``."""
    return shlex.join(["inductor-bench", *map(str, words)])


def breakdown_again(r: BreakdownResult) -> str:
    """``inductor-bench breakdown mlp.py --train --device cpu``, for ``r``."""
    words = ["breakdown", Path(r.model_path).name or r.model]
    words += ["--train"] * r.train
    words += ["--mode", r.mode] * (r.mode != CompileMode.DEFAULT)
    words += ["--dtype", r.dtype] * (r.dtype != "float32")
    words += ["--autocast"] * r.autocast + ["--freezing"] * r.freezing
    words += ["--batch-size", str(r.batch_size)] * (r.batch_size is not None)
    words += ["--device", r.device] * bool(r.device)
    words += ["--", *r.script_args] * bool(r.script_args)
    return tool_command(*words)
