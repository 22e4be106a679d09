"""The two bundles of ``scripts/gpu_validate.py``: fixtures.tar.gz (small real fixtures for the
CPU suite) and logs.tar.gz (the tail of every log)."""

from __future__ import annotations

import io
import subprocess
import tarfile
import time
from pathlib import Path
from typing import Any

import gpu_validate_checks as ck

ROOT = Path(__file__).resolve().parent.parent
FIXTURE_FILE_MAX = 3 << 20  # bytes; larger files are listed, not bundled
FIXTURE_TOTAL_MAX = 12 << 20  # a device machine returns files of at most 16 MiB
FIXTURE_KERNEL_FILES = 4  # Triton kernel files per run, the slowest first
LOG_FILE_MAX = 256 << 10  # the tail of each log
LOG_TOTAL_MAX = 12 << 20

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
    for p in sorted(ctx.gpu_test_traces.glob("*")):  # what the GPU tests recorded (pytest -m gpu)
        items.append((p, f"{top}/gpu_tests/{p.name}"))
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
        "- `cli/`: what the commands printed (`breakdown`, `report`, `kernel`, `compare`, `pytest -m gpu`);",
        "- `gpu_tests/`: traces the GPU tests recorded, with what `analyze` made of them.",
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
