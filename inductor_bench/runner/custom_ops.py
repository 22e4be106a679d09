"""Custom ops the profiler can see (torch side).

From torch 2.14 an op made with ``torch.library.custom_op`` whose kernel is Python is called
through a fast path (``OpOverload._enable_pyobj_dispatch``, turned on when the op is made) that
skips the C++ dispatcher, and with it the profiler's record of the op: the profile then shows
only the ATen ops inside it, at the top level, as if the compiled module's own Python code ran
them, and the module's call of the op is never found. The workers that run a model file turn
the fast path off, for the ops made before and after, so each call is an extern call of its own
again, as under torch 2.13 and before. It costs the call the dispatcher's round trip: 5.6 →
6.8 µs a call of a small op on a 2-core AMD EPYC under torch 2.15.0 (docs/version-matrix.md).
"""

from __future__ import annotations

from typing import Any


def keep_custom_ops_visible() -> int:
    """Turn torch's dispatcher-skipping path off for every custom op, now and for the ops made
    later in this process; the number turned off now. A torch without it (before 2.14): 0."""
    from torch._ops import OpOverload

    enable = getattr(OpOverload, "_enable_pyobj_dispatch", None)
    if enable is None or getattr(enable, "_inductor_bench", False):
        return 0

    def off_only(self: Any, enabled: bool = True) -> None:
        if not enabled:
            enable(self, False)

    off_only._inductor_bench = True  # type: ignore[attr-defined]
    OpOverload._enable_pyobj_dispatch = off_only  # type: ignore[method-assign]
    from torch._library.custom_ops import OPDEFS

    turned = 0
    for opdef in list(OPDEFS.values()):
        overload = getattr(opdef, "_opoverload", None)
        if overload is not None and overload._is_pyobj_dispatcher_enabled():
            enable(overload, False)
            turned += 1
    return turned
