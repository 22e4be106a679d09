"""The report, the results data and the two bundles of ``scripts/gpu_validate.py``.

Everything here reads what the driver recorded (its context, duck-typed) and the JSON the tool
wrote, as plain dicts: a field this code does not know is listed, a missing one is shown as
n/a, neither is an error.
"""

from __future__ import annotations

import shlex
from dataclasses import asdict
from typing import Any

import gpu_validate_checks as ck
from gpu_validate_bundles import (  # noqa: F401
    FIXTURE_FILE_MAX,
    FIXTURE_KERNEL_FILES,
    FIXTURE_TOTAL_MAX,
    LOG_FILE_MAX,
    LOG_TOTAL_MAX,
    ROOT,
    _git,
    bundle_fixtures,
    bundle_logs,
    fixture_items,
    fixture_readme,
)
from gpu_validate_checks import FAIL, PASS, SKIPPED, Run  # noqa: F401
from gpu_validate_figures import breakdown_figures, f, matrix_figures, run_row, short, table  # noqa: F401
from gpu_validate_figures_commands import compare_figures, kernel_figures, pytest_figures  # noqa: F401


# -- the report and the data ---------------------------------------------------------------
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
