"""torch.compile modes as the installed torch lists them (the torch side of ``core/modes.py``).

The parent accepts any well-formed ``--mode`` name without importing torch; the compile
worker checks it here, against ``torch._inductor.list_mode_options()``, before compiling.
Imports torch only inside functions.
"""

from __future__ import annotations

from typing import Any

from ..core import modes
from ..core.vocab import CompileMode


def table() -> dict[str, dict[str, Any]]:
    """Every mode the installed torch lists, with its config options."""
    from torch._inductor import list_mode_options

    return {name: dict(opts) for name, opts in list_mode_options().items()}


def check(mode: str) -> None:
    """UsageError (one line, naming the torch version and its modes) for a mode the installed
    torch does not list; ``eager`` is ours and always passes."""
    import torch

    if mode == CompileMode.EAGER:
        return
    known = table()
    if mode not in known:
        raise modes.unknown_mode(mode, torch.__version__, list(known))


def uses_cuda_graphs(mode: str) -> bool:
    """The installed torch's table turns CUDA graphs on for this mode (``triton.cudagraphs``);
    whether the device has them is ``device.uses_cuda_graphs``'s business."""
    return modes.uses_cuda_graphs(table().get(mode, {}))


CHECK_TIMEOUT_S = 120.0


def check_before_running(names: list[str]) -> None:
    """UsageError before any work for a mode name the installed torch does not list. The
    common modes need no check (every supported torch lists them); another name (``lite`` of
    torch 2.11, or a typo) is asked of a worker that imports torch, a few seconds, so that
    ``compare`` does not time eager first and then fail on it."""
    from .worker import run_worker

    odd = [m for m in dict.fromkeys(names) if m != CompileMode.EAGER and m not in modes.COMMON]
    if odd:
        run_worker(__name__, {"modes": odd}, timeout=CHECK_TIMEOUT_S)


def handle(request: dict[str, Any]) -> dict[str, Any]:
    """``{"modes": [...]}``: each checked (``check``); the first unknown one is the error."""
    for mode in request["modes"]:
        check(mode)
    return {}


if __name__ == "__main__":
    from .worker_entry import worker_main

    worker_main(handle)
