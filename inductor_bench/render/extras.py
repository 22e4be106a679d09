"""Optional report sections carried in ``BreakdownResult.extras``."""

from __future__ import annotations

from collections.abc import Iterator

from ..results import BreakdownResult


def render_sections(r: BreakdownResult, *, markdown: bool) -> Iterator[str]:
    if "compile_s" in r.extras:
        yield (f"compile (first call, timed on its own): {r.extras['compile_s']:.1f} s")
    if "autotune" in r.extras:
        from .kernel import render_autotune_top

        yield render_autotune_top(r.extras["autotune"], markdown=markdown)
