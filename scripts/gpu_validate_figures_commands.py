"""The figures of the kernel, compare and pytest steps in the report."""

from __future__ import annotations

import statistics
from typing import Any

import gpu_validate_checks as ck
from gpu_validate_figures import f, short, table


def kernel_figures(name: str, d: dict[str, Any], seconds: float, extra: list[str]) -> str:
    rows = []
    for r in d.get("runs") or []:
        if isinstance(r, dict):
            rows.append(
                [
                    r.get("mode"),
                    r.get("space_size"),
                    r.get("tried"),
                    f(r.get("ms")),
                    f(r.get("gbps")),
                    f(r.get("pct_of_peak_bw"), 3),
                    f(r.get("tflops")),
                    r.get("regs"),
                    r.get("spills"),
                    short(r.get("config"), 70),
                ]
            )
    k = d.get("kernel") or {}
    cmp = d.get("comparison") or {}
    peak = d.get("peak") or {}
    lines = [
        f"### kernel {name}{' --max-autotune' if extra else ''}",
        "",
        f"{k.get('category')} ({k.get('heuristic')}), {seconds:.0f} s; peak {f(peak.get('gbps'))} GB/s "
        f"({peak.get('source')})"
        + (f"; verdict {cmp.get('verdict')}, speedup {f(cmp.get('speedup'), 3)}" if cmp else ""),
        "",
        table(
            ["mode", "candidates", "tried", "ms", "GB/s", "% peak BW", "TFLOP/s", "regs", "spills", "config"],
            rows,
        ),
    ]
    patch = d.get("max_autotune_patch")
    if isinstance(patch, dict) and extra:
        lines += [
            "",
            f"Patch: applied {patch.get('applied')}, ignored {patch.get('ignored')}, "
            f"meta {short(patch.get('meta'), 200)}",
        ]
    if d.get("notes"):
        lines += ["", "Notes: " + " ".join(map(str, d["notes"]))]
    return "\n".join(lines)


def compare_figures(d: dict[str, Any], seconds: float) -> str:
    rows = []
    for m in d.get("modes") or []:
        if not isinstance(m, dict):
            continue
        s = ck.column_samples(m)
        bd = m.get("breakdown") if isinstance(m.get("breakdown"), dict) else None
        tot = (bd or {}).get("totals") or {}
        rows.append(
            [
                m.get("mode"),
                m.get("status"),
                f(m.get("compile_s"), 3),
                f(statistics.median(s)) if s else "n/a",
                len(s),
                f(ck.pct(ck.num(tot.get("busy_ms")), ck.num(tot.get("wall_ms"))), 3),
                tot.get("kernel_count", "n/a"),
                f((ck.num(m.get("peak_memory_bytes")) or 0) / 2**20, 4),
                short(m.get("reason") or "", 80),
            ]
        )
    return "\n".join(
        [
            f"### compare ({seconds:.0f} s)",
            "",
            table(
                [
                    "mode",
                    "status",
                    "compile s",
                    "step median ms",
                    "steps",
                    "busy % (profiled)",
                    "kernels",
                    "peak MiB",
                    "reason",
                ],
                rows,
            ),
        ]
    )


def pytest_figures(p: dict[str, Any]) -> str:
    rows = [[t, v] for t, v in p["tests"].items()]
    return "\n".join(
        [
            f"### pytest -m gpu ({p['seconds']:.0f} s, exit {p['rc']}"
            + (", stopped at its time limit" if p["timed_out"] else "")
            + ")",
            "",
            f"{p['selected']} selected; " + ", ".join(f"{n} {k.lower()}" for k, n in p["counts"].items()),
            "",
            table(["test", "outcome"], rows) if rows else "No test reported an outcome.",
        ]
    )
