"""Optional report sections carried in ``BreakdownResult.extras``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..results import BreakdownResult


def render_sections(r: BreakdownResult, *, markdown: bool) -> Iterator[str]:
    if "compile_s" in r.extras:
        yield f"compile (first call, timed on its own): {r.extras['compile_s']:.1f} s"
    if "autotune" in r.extras:
        yield _autotune(r.extras["autotune"], markdown)


def _autotune(a: dict[str, Any], markdown: bool) -> str:
    from .kernel import render_autotune_top, render_matches

    if a.get("route") == "cuda-kernels":
        return render_autotune_top(a["rows"], a.get("total_bound", 0.0), markdown=markdown).rstrip()
    base, tuned = a.get("base_step_ms", 0.0), a.get("tuned_step_ms", 0.0)
    speed = f"{base / tuned:.2f}x" if tuned > 0 else "n/a"
    head = (
        f"max-autotune recompile (CPU): step {base:.3f} ms -> {tuned:.3f} ms ({speed}); "
        f"kernels {a.get('base_kernel_ms', 0.0):.3f} ms -> {a.get('tuned_kernel_ms', 0.0):.3f} ms; "
        f"run: {a.get('tuned_run', '')}"
    )
    if a.get("tuned_status") not in (None, "ok"):
        head += f" (status {a['tuned_status']})"
    return head + "\n\n" + render_matches(a.get("rows", []), markdown=markdown, top=a.get("n")).rstrip()
