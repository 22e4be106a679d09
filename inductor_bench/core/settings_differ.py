"""The process-wide torch settings two results ran with (TF32, float32 matmul precision, cuDNN,
SDPA backends, threads: ``TorchSettings``, read after the model's first step), where they
differ: they choose which kernels a matmul, a convolution or attention runs, so a change
between the sides may be theirs and not the code's. Pure; no torch."""

from __future__ import annotations

from typing import Any

from .result_kinds import Result, breakdowns


def settings_differ(base: Result, head: Result) -> list[str]:
    """One line naming each setting both sides recorded with other values (``float32_matmul_precision:
    base highest, head high``); none where a side recorded none (a run saved before they were)."""
    b, h = _settings(base), _settings(head)
    changed = [f"{key}: base {_words(b[key])}, head {_words(h[key])}" for key in b
               if key in h and set(b[key]) != set(h[key])]
    if not changed:
        return []
    return ["torch settings differ: " + "; ".join(changed) + " (read after the first step: they choose "
            "the kernels a matmul, a convolution or attention runs)"]


def _settings(r: Result) -> dict[str, list[Any]]:
    """Each setting's values over the result's breakdowns (a compare's columns), in order, once."""
    out: dict[str, list[Any]] = {}
    for b in breakdowns(r):
        for key, value in b.torch_settings.values.items() if b.torch_settings else ():
            if value not in out.setdefault(key, []):
                out[key].append(value)
    return out


def _words(values: list[Any]) -> str:
    return " and ".join(str(v) for v in values)
