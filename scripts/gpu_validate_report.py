"""The report, the results data and the two bundles of ``scripts/gpu_validate.py``.

Everything here reads what the driver recorded (its context, duck-typed) and the JSON the tool
wrote, as plain dicts: a field this code does not know is listed, a missing one is shown as
n/a, neither is an error.
"""

from __future__ import annotations

import io
import json
import shlex
import statistics
import subprocess
import tarfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import gpu_validate_checks as ck
from gpu_validate_checks import FAIL, PASS, SKIPPED, Run

ROOT = Path(__file__).resolve().parent.parent
FIXTURE_FILE_MAX = 3 << 20  # bytes; larger files are listed, not bundled
FIXTURE_TOTAL_MAX = 12 << 20  # a device machine returns files of at most 16 MiB
FIXTURE_KERNEL_FILES = 4  # Triton kernel files per run, the slowest first
LOG_FILE_MAX = 256 << 10  # the tail of each log
LOG_TOTAL_MAX = 12 << 20

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


# -- the report and the data ---------------------------------------------------------------


def _git() -> str:
    try:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain"], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown (no git)"
    if head.returncode != 0:
        return "unknown (not a git checkout)"
    n = len([ln for ln in dirty.stdout.splitlines() if ln.strip()])
    return head.stdout.strip() + (f" with {n} changed or untracked file(s)" if n else "")


def counts(ctx: Any) -> dict[str, int]:
    return {s: sum(c.status == s for c in ctx.checks) for s in (PASS, FAIL, SKIPPED)}


def nvml_seen(nv: Any) -> str:
    """What NVML showed the probe, a process holding a CUDA context: whether a container shows
    GPU processes at all is not known in advance."""
    if not isinstance(nv, dict):
        return "NVML: not read"
    if "error" in nv:
        return f"NVML: not readable ({nv['error']})"
    pids = nv.get("pids") or []
    own = "its own pid among them" if nv.get("own_listed") else "its own pid NOT among them"
    return (f"NVML {nv.get('version')}: the probe (pid {nv.get('own_pid')}) saw {len(pids)} compute "
            f"process(es) on the GPU ({', '.join(map(str, pids)) or 'none'}), {own}")


def markdown(ctx: Any) -> str:
    i = ctx.info
    n = counts(ctx)
    if ctx.dry:
        device = f"none: dry run on CPU ({i.get('python')}, torch {i.get('torch')})"
    else:
        device = (
            f"{i.get('device_name')} (compute capability {i.get('capability')}, {i.get('sm_count')} SMs, "
            f"{i.get('memory_gib')} GiB, {i.get('device_count')} device(s)); "
            f"nvidia-smi: {i.get('nvidia_smi')}; {nvml_seen(i.get('nvml'))}"
        )
    mods = i.get("modules", {})
    which = f", part {ctx.a.part}" if ctx.a.part is not None else ""
    out = ["# GPU validation of inductor-bench" + which + (" — DRY RUN (CPU)" if ctx.dry else ""), ""]
    if ctx.dry:
        out += [
            "A dry run checks the script's own plumbing on CPU: the same steps with `--device cpu` and tiny "
            "iteration counts; GPU-only checks are SKIPPED with the reason. Its figures are CPU figures of a "
            "shared machine, not GPU results.",
            "",
        ]
    out += [
        table(
            ["", ""],
            [
                ["date (UTC)", ctx.started.strftime("%Y-%m-%d %H:%M:%S")],
                ["device", device],
                ["torch", f"{i.get('torch')} (CUDA {i.get('cuda_version')})"],
                ["triton", mods.get("triton", i.get("missing", {}).get("triton", "n/a"))],
                ["python", f"{i.get('python')} ({i.get('executable')})"],
                [
                    "packages",
                    ", ".join(
                        f"{k} {v}" for k, v in mods.items() if k not in ("triton", "inductor_bench.cli")
                    )
                    + ("; missing: " + ", ".join(i.get("missing", {})) if i.get("missing") else ""),
                ],
                ["wheels", i.get("wheels") or "none needed"],
                ["inductor-bench", f"commit {_git()}"],
                ["command", "scripts/gpu_validate.sh " + shlex.join(ctx.a.argv)],
                [
                    "budget",
                    f"{ctx.a.budget:.0f} s; elapsed {ctx.budget.elapsed():.0f} s"
                    + (f"; ABORTED: {ctx.aborted}" if ctx.aborted else ""),
                ],
                ["result", f"{n[PASS]} PASS · {n[FAIL]} FAIL · {n[SKIPPED]} SKIPPED"],
                ["work directory", str(ctx.work)],
            ],
        ),
        "",
        "## Checks",
        "",
        table(["result", "check", "numbers"], [[c.status, c.name, c.numbers] for c in ctx.checks])
        if ctx.checks
        else "No check has run yet.",
        "",
        "## Steps",
        "",
        table(
            ["step", "what", "status", "seconds", "granted s", "note"],
            [
                [
                    s.key,
                    s.title.replace("MAIN", ctx.a.main_model),
                    s.status,
                    f"{s.seconds:.0f}",
                    f"{s.granted_s:.0f}" if s.granted_s is not None else "-",
                    s.note,
                ]
                for s in ctx.steps
            ],
        ),
        "",
        "## Figures",
        "",
    ]
    for s in ctx.steps:
        out += [fig + "\n" for fig in s.figures]
    out += ["## Fixtures (fixtures.tar.gz)", ""]
    if ctx.fixture_files:
        total = sum(sz for _, sz in ctx.fixture_files)
        out += [
            f"{len(ctx.fixture_files)} files, {total / 1024:.0f} KiB before compression; unpack with "
            "`tar -xzf fixtures.tar.gz -C tests/fixtures/`.",
            "",
            table(["file", "KiB"], [[p, f"{sz / 1024:.1f}"] for p, sz in ctx.fixture_files]),
        ]
        if ctx.fixture_left_out:
            out += ["", "Left out: " + "; ".join(ctx.fixture_left_out)]
    else:
        out += ["Bundled at the end of the run."]
    out += [
        "",
        "## Tolerances",
        "",
        table(
            ["comparison", "tolerance"],
            [
                ["graph kernel time, tool vs plain profiler", str(ck.GRAPH_TIME)],
                ["kernel in its graph (per launch) vs do_bench", str(ck.KERNEL_IN_GRAPH)],
                ["`inductor-bench kernel` vs do_bench", str(ck.KERNEL_COMMAND)],
                ["step time, tool vs CUDA events", str(ck.STEP_TIME)],
                ["busy", "≤ 100% (and union ≤ sum of kernel times)"],
            ],
        ),
        "",
        "Why these: docs/gpu-validation-method.md.",
        "",
    ]
    return "\n".join(out)


def data(ctx: Any) -> dict[str, Any]:
    return {
        "schema": "inductor-bench/gpu-validate",
        "version": 1,
        "dry_run": ctx.dry,
        "info": ctx.info,
        "started": ctx.started.isoformat(timespec="seconds"),
        "elapsed_s": round(ctx.budget.elapsed(), 1),
        "budget_s": ctx.a.budget,
        "aborted": ctx.aborted,
        "argv": ctx.a.argv,
        "counts": counts(ctx),
        "checks": [asdict(c) for c in ctx.checks],
        "steps": [{k: v for k, v in asdict(s).items() if k != "figures"} for s in ctx.steps],
        "runs": {
            k: {
                "dir": str(r.dir),
                "rc": r.rc,
                "seconds": r.seconds,
                "status": (r.bd or {}).get("status"),
                "cli_error": r.cli_error,
            }
            for k, r in ctx.runs.items()
        },
        "pytest": ctx.pytest,
        "fixtures": {"files": ctx.fixture_files, "left_out": ctx.fixture_left_out},
    }


# -- bundles -------------------------------------------------------------------------------


def fixture_items(ctx: Any, top: str) -> list[tuple[Path, str]]:
    """(file, name in the archive) in priority order: the size caps drop the last ones."""
    items: list[tuple[Path, str]] = []
    main = [r for r in ctx.runs.values() if r.label in ctx.main_labels]
    for run in sorted(main, key=lambda r: (r.mode != "default", ctx.main_labels.index(r.label))):
        base = f"{top}/{run.label}"
        for name in ("breakdown.json", "meta.json", "report.txt"):
            items.append((run.dir / name, f"{base}/{name}"))
        for g in ck.graphs(run.bd):
            gdir = f"graphs/{g.get('id')}"
            for name in ("module.py", "trace.json.gz", "pipelined.json.gz", "launch.json.gz"):
                items.append((run.dir / gdir / name, f"{base}/{gdir}/{name}"))
        for _, k in ck.triton_kernels(run.bd)[:FIXTURE_KERNEL_FILES]:
            items.append((run.dir / k["file"], f"{base}/{k['file']}"))
    items.append((ctx.runs_dir / "compare" / "compare.json", f"{top}/compare/compare.json"))
    for run in ctx.runs.values():  # the load readings of a run measured beside another process
        if run.label.endswith("-disturbed"):
            for name in ("breakdown.json", "report.txt"):
                items.append((run.dir / name, f"{top}/{run.label}/{name}"))
    for p in sorted(ctx.cli.glob("*")):
        items.append((p, f"{top}/cli/{p.name}"))
    return [(p, a) for p, a in items if p.is_file()]


def bundle_fixtures(ctx: Any) -> None:
    top = "cpu_validate_dryrun" if ctx.dry else "cuda_validate"
    kept, left, total = [], [], 0
    for p, arc in fixture_items(ctx, top):
        size = p.stat().st_size
        if size > FIXTURE_FILE_MAX or total + size > FIXTURE_TOTAL_MAX:
            left.append(f"{arc} ({size / 1024:.0f} KiB)")
            continue
        kept.append((p, arc))
        total += size
    readme = fixture_readme(ctx, top, kept, left).encode()
    ctx.fixture_files = [(f"{top}/README.md", len(readme))] + [(a, p.stat().st_size) for p, a in kept]
    ctx.fixture_left_out = left
    tmp = ctx.out / "fixtures.tar.gz.tmp"
    with tarfile.open(tmp, "w:gz") as tar:
        _add_bytes(tar, f"{top}/README.md", readme)
        for p, arc in kept:
            tar.add(p, arcname=arc, recursive=False)
    tmp.replace(ctx.out / "fixtures.tar.gz")


def fixture_readme(ctx: Any, top: str, kept: list[tuple[Path, str]], left: list[str]) -> str:
    i = ctx.info
    where = "CPU (dry run of the plumbing, not GPU data)" if ctx.dry else f"{i.get('device_name')}"
    lines = [
        f"# {top}",
        "",
        f"Recorded {ctx.started.date().isoformat()} on {where} with torch {i.get('torch')}, triton "
        f"{i.get('modules', {}).get('triton')}, Python {i.get('python')}, by `scripts/gpu_validate.sh"
        f"{' --dry-run' if ctx.dry else ''}` (commit {_git()}). Real output of the tool, not synthetic.",
        "",
        "- `<model>-train-<mode>/`: a breakdown run directory, reduced to `breakdown.json`, `meta.json`, "
        "`report.txt`, each graph's `module.py` and traces, and the slowest Triton kernel files (paths in "
        "breakdown.json that point to files not kept here dangle on purpose);",
        "- `compare/compare.json`: `compare --modes default,reduce-overhead`;",
        "- `cli/`: what the commands printed (`breakdown`, `report`, `kernel`, `compare`, `pytest -m gpu`).",
        "",
        "Files:",
        "",
    ]
    lines += [f"- `{a[len(top) + 1 :]}` ({p.stat().st_size / 1024:.1f} KiB)" for p, a in kept]
    if left:
        lines += ["", "Left out for size: " + "; ".join(left)]
    return "\n".join(lines) + "\n"


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mtime = len(data), int(time.time())
    tar.addfile(info, io.BytesIO(data))


def bundle_logs(ctx: Any) -> None:
    files = sorted(p for p in ctx.logs.rglob("*") if p.is_file())
    files += sorted(p for p in (ctx.work / "measure").glob("*.json"))
    files += sorted(p for p in ctx.runs_dir.rglob("logs/*") if p.is_file())
    total = 0
    tmp = ctx.out / "logs.tar.gz.tmp"
    with tarfile.open(tmp, "w:gz") as tar:
        for p in files:
            size = p.stat().st_size
            with open(p, "rb") as fh:
                if size > LOG_FILE_MAX:
                    fh.seek(size - LOG_FILE_MAX)
                blob = fh.read()
            if total + len(blob) > LOG_TOTAL_MAX:
                break
            total += len(blob)
            _add_bytes(tar, str(p.relative_to(ctx.work)), blob)
    tmp.replace(ctx.out / "logs.tar.gz")
