"""The process-wide settings that change which kernels run and how fast: TF32 and reduced
precision reductions in matmuls, cuDNN's autotuner and determinism, the scaled-dot-product
attention backends, deterministic algorithms, intra-op threads, the process group a compiled
collective runs in.

A model file or script sets them (``torch.set_float32_matmul_precision("high")``,
``torch.backends.cudnn.benchmark = True``, ...) in the process that runs the model; the
profiling worker is another process. The compile worker therefore reads them after the
model's first step (``snapshot``), the result keeps them, and every profiling worker applies
them before it loads a compiled module (``apply``), so the profiled kernels run as they ran in
the model. A setting the installed torch does not have is left out of the snapshot.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..core.devices import accelerators
from . import process_group


@dataclass(frozen=True)
class Setting:
    key: str  # the name in results and reports
    get: Callable[[Any], Any]  # torch -> value
    set: Callable[[Any, Any], None]  # (torch, value) -> None


def _attr(path: str) -> Setting:
    """A plain attribute below ``torch`` (``backends.cudnn.benchmark``)."""
    *parents, leaf = path.split(".")

    def owner(torch: Any) -> Any:
        obj = torch
        for p in parents:
            obj = getattr(obj, p)
        return obj

    return Setting(path, lambda t: getattr(owner(t), leaf), lambda t, v: setattr(owner(t), leaf, v))


def _sdp(ns: str, backend: str) -> Setting:
    """An attention backend switch of accelerator namespace ``ns`` (``torch.backends.<ns>``):
    ``<backend>_sdp_enabled()`` and ``enable_<backend>_sdp(bool)``."""

    def get(t: Any) -> Any:
        return getattr(getattr(t.backends, ns), f"{backend}_sdp_enabled")()

    def put(t: Any, v: Any) -> None:
        getattr(getattr(t.backends, ns), f"enable_{backend}_sdp")(bool(v))

    return Setting(f"{ns}.sdp.{backend}", get, put)


def _accelerator_settings() -> tuple[Setting, ...]:
    """Matmul precision switches and attention backends of every accelerator in the device
    table (``torch.backends.<torch_module>``)."""
    out: list[Setting] = []
    for b in accelerators():
        ns = b.torch_module
        out += [_attr(f"backends.{ns}.matmul.{leaf}") for leaf in (*_MATMUL, "fp32_precision")]
        out += [_sdp(ns, k) for k in _SDP]
    return tuple(out)


_MATMUL = ("allow_tf32", "allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction")
_SDP = ("flash", "mem_efficient", "math", "cudnn")

SETTINGS: tuple[Setting, ...] = (
    Setting(
        "float32_matmul_precision",
        lambda t: t.get_float32_matmul_precision(),
        lambda t, v: t.set_float32_matmul_precision(v),
    ),
    *_accelerator_settings(),
    _attr("backends.cudnn.enabled"),
    _attr("backends.cudnn.allow_tf32"),
    _attr("backends.cudnn.benchmark"),
    _attr("backends.cudnn.deterministic"),
    # torch >= 2.9 also has per-backend fp32 precision ("ieee" / "tf32" / "none"); a script
    # may set either API, and a snapshot of a consistent state applies in this order.
    _attr("backends.fp32_precision"),
    _attr("backends.cudnn.conv.fp32_precision"),
    _attr("backends.mkldnn.matmul.fp32_precision"),
    _attr("backends.mkldnn.conv.fp32_precision"),
    Setting(
        "deterministic_algorithms",
        lambda t: t.are_deterministic_algorithms_enabled(),
        lambda t, v: t.use_deterministic_algorithms(bool(v)),
    ),
    Setting("num_threads", lambda t: t.get_num_threads(), lambda t, v: t.set_num_threads(int(v))),
    # the group a compiled collective runs in (runner/process_group.py)
    Setting("process_group", process_group.current, process_group.join),
)
_BY_KEY = {s.key: s for s in SETTINGS}


def snapshot() -> dict[str, Any]:
    """Every setting the installed torch has, as plain JSON values."""
    import torch

    out: dict[str, Any] = {}
    for s in SETTINGS:
        try:
            out[s.key] = s.get(torch)
        except (AttributeError, RuntimeError, TypeError):
            continue  # not in this torch version
    return out


def apply(values: dict[str, Any] | None) -> list[str]:
    """Set what ``values`` holds; returns the keys that could not be set here (unknown to
    this version or refused), so the caller can say so."""
    import torch

    failed: list[str] = []
    for key, value in (values or {}).items():
        s = _BY_KEY.get(key)
        if s is None:
            failed.append(key)
            continue
        try:
            current = s.get(torch)
        except (AttributeError, RuntimeError, TypeError):
            # absent here, or torch refuses to read it once the other precision API was
            # used: then that API's keys carry the setting
            continue
        if current == value:
            continue
        try:
            s.set(torch, value)
        except (AttributeError, RuntimeError, TypeError, ValueError):
            failed.append(key)
    return failed
