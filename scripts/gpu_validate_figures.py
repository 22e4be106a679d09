"""The figures of a breakdown run in the report: its facts, graphs and top kernels, and its row
in the matrix; the formatting they share."""

from __future__ import annotations

import json
import shlex
import statistics
from typing import Any

import gpu_validate_checks as ck
from gpu_validate_checks import Run

# Fields shown in the tables; any other scalar field is listed beside them.
GRAPH_SHOWN = {
    "id",
    "role",
    "iterations",
    "wall_ms",
    "kernel_ms",
    "busy_ms",
    "status",
    "kernels",
    "pipelined",
    "categories",
    "wall_samples_ms",
    "windows_ms",
    "window_faults",
    "window",
    "module",
    "trace",
    "aot_id",
    "frame_id",
    "frame_compile_id",
    "device",
    "error",
    "cuda_graphs",
    "replayed",
    "pipelined_trace",
}
TOP_SHOWN = {
    "model",
    "model_path",
    "device",
    "device_name",
    "mode",
    "train",
    "dtype",
    "autocast",
    "freezing",
    "batch_size",
    "script",
    "versions",
    "created",
    "run_dir",
    "iterations",
    "graphs",
    "status",
    "errors",
    "extras",
    "totals",
    "schema",
    "schema_version",
}


def f(x: Any, digits: int = 4, unit: str = "") -> str:
    v = ck.num(x)
    return "n/a" if v is None else f"{v:.{digits}g}{unit}"


def table(headers: list[str], rows: list[list[Any]]) -> str:
    def cell(v: Any) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows]
    return "\n".join(out)


def short(v: Any, n: int = 80) -> str:
    s = json.dumps(v) if not isinstance(v, str) else v
    return s if len(s) <= n else s[: n - 1] + "…"


# -- figures per step ----------------------------------------------------------------------


def breakdown_figures(ctx: Any, run: Run) -> str:
    bd = run.bd
    head = [
        f"### breakdown {run.label}",
        "",
        f"`{shlex.join(run.cmd) if run.cmd else 'inductor-bench breakdown'}`: exit {run.rc} in "
        f"{run.seconds:.0f} s" + (f" ({run.cli_error})" if run.cli_error else ""),
    ]
    if bd is None:
        return "\n".join(head + ["", "No breakdown.json was written."])
    ex = bd.get("extras") if isinstance(bd.get("extras"), dict) else {}
    steps = ck.step_samples(bd)
    facts = [
        f"status {bd.get('status')}",
        f"device {bd.get('device')} ({bd.get('device_name')})",
        f"compile {f(ex.get('compile_s'), 3, ' s')}",
        f"step median {f(statistics.median(steps)) if steps else 'n/a'} ms ({len(steps)} steps)",
        f"whole run {f(ex.get('elapsed_s'), 3, ' s')}",
    ]
    pm = ex.get("peak_memory")
    if isinstance(pm, dict):
        facts.append(f"peak memory {f((ck.num(pm.get('bytes')) or 0) / 2**20, 4)} MiB ({pm.get('kind')})")
    ts = ex.get("torch_settings")
    if isinstance(ts, dict) and isinstance(ts.get("values"), dict):
        shown = {k: ts["values"].get(k) for k in ["float32_matmul_precision", *(ts.get("changed") or [])]}
        facts.append("settings " + ", ".join(f"{k}={v}" for k, v in shown.items()))
    if bd.get("errors"):
        facts.append("errors: " + "; ".join(map(str, bd["errors"]))[:400])
    rows = []
    for g in ck.graphs(bd):
        pipe = g.get("pipelined") if isinstance(g.get("pipelined"), dict) else {}
        pbusy = ck.pct(ck.num(pipe.get("busy_ms")), ck.num(pipe.get("wall_ms")))
        more = {k: v for k, v in g.items() if k not in GRAPH_SHOWN and not isinstance(v, (list, dict))}
        rows.append(
            [
                g.get("id"),
                g.get("role"),
                g.get("iterations"),
                f(g.get("wall_ms")),
                f(g.get("kernel_ms")),
                f(ck.pct(ck.num(g.get("busy_ms")), ck.num(g.get("wall_ms"))), 3),
                f(pipe.get("wall_ms")),
                f(pbusy, 3),
                f(pipe.get("launch_ms")),
                {True: "replayed", False: "no"}.get(g.get("replayed"), "n/a")
                if g.get("cuda_graphs") is not None or g.get("replayed")
                else "-",
                len(g.get("kernels") or []),
                g.get("status"),
                ", ".join(f"{k}={short(v, 60)}" for k, v in more.items()) or "",
            ]
        )
    out = head + [
        "",
        " · ".join(facts),
        "",
        table(
            [
                "graph",
                "role",
                "iters",
                "wall ms",
                "kernel ms",
                "busy %",
                "pipelined ms",
                "pipelined busy %",
                "launch ms",
                "CUDA graph",
                "kernels",
                "status",
                "more fields",
            ],
            rows,
        ),
    ]
    kern = sorted(
        ((str(g.get("id")), k) for g in ck.graphs(bd) for k in g.get("kernels") or [] if isinstance(k, dict)),
        key=lambda gk: -(ck.num(gk[1].get("ms")) or 0),
    )[:10]
    if kern:
        out += [
            "",
            table(
                ["graph", "kernel", "category", "calls", "ms / iteration", "file"],
                [
                    [
                        gid,
                        k.get("name"),
                        k.get("category"),
                        f(k.get("calls")),
                        f(k.get("ms")),
                        "yes" if k.get("file") else "-",
                    ]
                    for gid, k in kern
                ],
            ),
        ]
    cats = (bd.get("totals") or {}).get("categories") if isinstance(bd.get("totals"), dict) else None
    if isinstance(cats, dict) and cats:
        total = sum(ck.num(v) or 0 for v in cats.values()) or 1.0
        out += [
            "",
            table(
                ["category", "ms", "% of kernel time"],
                [
                    [c, f(v), f"{100 * (ck.num(v) or 0) / total:.1f}%"]
                    for c, v in sorted(cats.items(), key=lambda cv: -(ck.num(cv[1]) or 0))
                ],
            ),
        ]
    extra = {k: v for k, v in bd.items() if k not in TOP_SHOWN}
    extra.update(
        {
            f"extras.{k}": v
            for k, v in ex.items()
            if k not in ("compile_s", "step_samples_ms", "peak_memory", "elapsed_s", "torch_settings")
        }
    )
    if extra:
        out += ["", "Also in breakdown.json: " + "; ".join(f"`{k}` = {short(v)}" for k, v in extra.items())]
    return "\n".join(out)

def run_row(run: Run) -> dict[str, Any]:
    bd = run.bd or {}
    steps = ck.step_samples(bd)
    tot = bd.get("totals") if isinstance(bd.get("totals"), dict) else {}
    pipes = [g["pipelined"] for g in ck.graphs(bd) if isinstance(g.get("pipelined"), dict)]
    pw = sum(ck.num(p.get("wall_ms")) or 0 for p in pipes)
    return {
        "status": bd.get("status", "no result"),
        "rc": run.rc,
        "seconds": round(run.seconds, 1),
        "graphs": len(ck.graphs(bd)),
        "kernels": tot.get("kernel_count"),
        "step_ms": statistics.median(steps) if steps else None,
        "busy_pct": ck.pct(ck.num(tot.get("busy_ms")), ck.num(tot.get("wall_ms"))),
        "pipelined_busy_pct": ck.pct(sum(ck.num(p.get("busy_ms")) or 0 for p in pipes), pw) if pw else None,
        "replayed": sum(bool(g.get("replayed")) for g in ck.graphs(bd)),
        "note": run.cli_error,
    }


def matrix_figures(rows: list[dict[str, Any]], jobs: int, profile: list[str]) -> str:
    body = [
        [
            r["label"],
            r.get("status"),
            r.get("rc", ""),
            r.get("seconds", ""),
            r.get("graphs", ""),
            r.get("kernels", ""),
            f(r.get("step_ms")),
            f(r.get("busy_pct"), 3),
            f(r.get("pipelined_busy_pct"), 3),
            r.get("replayed", ""),
            short(r.get("note") or "", 100),
        ]
        for r in rows
    ]
    head = [
        f"### breakdown of the other example models ({jobs} at a time, {' '.join(profile)}, `--summary`)",
        "",
    ]
    if jobs > 1:
        head += [
            "Runs side by side share the device: these are correctness figures (every graph measured, "
            "busy ≤ 100%), not reference timings.",
            "",
        ]
    return "\n".join(
        [
            *head,
            table(
                [
                    "run",
                    "status",
                    "exit",
                    "s",
                    "graphs",
                    "kernels",
                    "step ms",
                    "busy %",
                    "pipelined busy %",
                    "replayed graphs",
                    "note",
                ],
                body,
            ),
        ]
    )
