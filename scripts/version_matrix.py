"""Run `inductor-bench breakdown` under one installed torch and check what it found.

    python scripts/version_matrix.py --python VENV/bin/python --out-dir DIR [--compact]
    python scripts/version_matrix.py --table DIR...          # the markdown table of finished runs

``scripts/version_matrix.sh`` builds one virtual environment per torch version and calls this
once per environment. Each call runs, with that environment's Python and this checkout first on
``PYTHONPATH``, two breakdowns on CPU:

- ``models/mlp.py --train``: a forward and a backward graph;
- ``models/graph_break_script.py``: a script whose compiled function has a graph break.

Then ``report`` and ``diff`` of the first run (and, but with ``--compact``, ``compare`` of eager
and default on models/mlp.py). It checks each ``breakdown.json`` as plain JSON (this file imports nothing of
``inductor_bench``, so a check never rests on the code it checks): exit status 0, run status
``ok``, the expected graphs each ``ok``, kernels found, categories summing to the kernel time,
the categories a CPU run must have (C++ kernels; the GEMM for mlp), busy % within [0, 100], the
graph-break script's break reported at its line, with a reason that names the call. It
prints one line per version and writes ``DIR/summary.json``; ``--table`` turns summaries into the
markdown table of ``docs/version-matrix.md``. Exit status: 0 every check passed, 1 a check failed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# Relative tolerance for "categories sum to kernel time" (float sums in another order).
SUM_REL = 1e-6


@dataclass
class Case:
    """One breakdown to run: its label, model and options, and the graphs it must find."""

    label: str
    model: str
    args: list[str]
    roles: tuple[str, ...]  # graph roles that must be among the graphs found
    min_graphs: int
    categories: tuple[str, ...]  # each must be non-zero
    break_at: str | None = None  # the text of the model file's line a graph break must be reported at
    break_why: str | None = None  # a word that break's reason must hold (torch's words, not its place)


CASES = [
    Case("mlp --train", "models/mlp.py", ["--train"], ("forward", "backward"), 2,
         ("extern_gemm", "cpp_pointwise")),
    Case("graph breaks", "models/graph_break_script.py", [], (), 2, ("cpp_reduction",),
         'print("graph break here")', "print"),
]


@dataclass
class Outcome:
    """What one case found, and the checks that failed (empty: passed)."""

    label: str
    seconds: float
    failures: list[str] = field(default_factory=list)
    graphs: list[dict[str, Any]] = field(default_factory=list)  # id, busy_pct, kernel_ms
    categories_ms: dict[str, float] = field(default_factory=dict)  # summed over graphs
    run_dir: str = ""


def graph_summary(g: dict[str, Any]) -> dict[str, Any]:
    wall, busy = g.get("wall_ms"), g.get("busy_ms")
    pct = 100.0 * busy / wall if wall and busy is not None else None
    loads, w = g.get("window_load") or [], g.get("window")
    kept = loads[w] if isinstance(w, int) and w < len(loads) and loads[w] else {}
    return {"id": g.get("id"), "status": g.get("status"), "busy_pct": pct, "kernel_ms": g.get("kernel_ms"),
            "others_cores": kept.get("others_cores")}


def check_graph(g: dict[str, Any], case: Case) -> list[str]:
    """The checks on one graph of a breakdown.json."""
    gid = g.get("id")
    if g.get("status") != "ok":
        return [f"{gid}: status {g.get('status')} ({g.get('error')})"]
    out = []
    cats, kernel = g.get("categories") or {}, g.get("kernel_ms") or 0.0
    if not g.get("kernels"):
        out.append(f"{gid}: no kernels")
    if abs(sum(cats.values()) - kernel) > SUM_REL * max(kernel, 1e-9):
        out.append(f"{gid}: categories sum to {sum(cats.values()):.6f} ms, kernel time {kernel:.6f} ms")
    pct = graph_summary(g)["busy_pct"]
    if pct is None or not 0.0 <= pct <= 100.0:
        out.append(f"{gid}: busy {pct} % outside [0, 100]")
    return out


def check_breakdown(bd: dict[str, Any], case: Case) -> tuple[list[str], dict[str, float]]:
    """Every check of one case's breakdown.json; the categories summed over its graphs."""
    failures = [] if bd.get("status") == "ok" else [f"run status {bd.get('status')}: {bd.get('errors')}"]
    graphs = bd.get("graphs") or []
    if len(graphs) < case.min_graphs:
        failures.append(f"{len(graphs)} graphs, expected at least {case.min_graphs}")
    roles = {g.get("role") for g in graphs}
    failures += [f"no {r} graph" for r in case.roles if r not in roles]
    cats: dict[str, float] = {}
    for g in graphs:
        failures += check_graph(g, case)
        for k, v in (g.get("categories") or {}).items():
            cats[k] = cats.get(k, 0.0) + v
    failures += [f"no {c} time" for c in case.categories if not cats.get(c)]
    return failures + check_break(bd, case), cats


def check_break(bd: dict[str, Any], case: Case) -> list[str]:
    """The graph break is reported at its place, the model file's line that holds ``break_at``,
    with a reason that holds ``break_why``."""
    if case.break_at is None:
        return []
    lines = (ROOT / case.model).read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if case.break_at in text)
    breaks = (bd.get("extras") or {}).get("graph_breaks", [])
    want = (Path(case.model).name, line)
    there = [b for b in breaks if (Path(b.get("file") or "").name, b.get("line")) == want]
    if not there:
        places = [(Path(b.get("file") or "").name, b.get("line")) for b in breaks]
        return [f"no graph break reported at {want[0]}:{line} (breaks at: {places})"]
    reasons = [str(b.get("reason", "")) for b in there]
    if case.break_why and not any(case.break_why in r for r in reasons):
        return [f"the graph break at {want[0]}:{line} does not say {case.break_why!r} "
                f"(its reason: {reasons[0]!r})"]
    return []


def run_case(python: str, case: Case, out_dir: Path, compact: bool) -> Outcome:
    run_dir = out_dir / case.label.replace(" ", "_").replace("--", "")
    args = ["breakdown", str(ROOT / case.model), *case.args, "--device", "cpu", "--out", str(run_dir),
            "--summary"]
    if compact:
        args += ["--iterations", "10", "--windows", "2"]
    t0 = time.monotonic()
    log = out_dir / f"{run_dir.name}.log"
    rc, _ = run_tool(python, args, log)
    o = Outcome(case.label, time.monotonic() - t0, run_dir=str(run_dir))
    if rc != 0:
        o.failures.append(f"exit {rc}: {last_line(log)}")
    path = run_dir / "breakdown.json"
    if not path.is_file():
        o.failures.append("no breakdown.json")
        return o
    bd = json.loads(path.read_text())
    fails, o.categories_ms = check_breakdown(bd, case)
    o.failures += fails
    o.graphs = [graph_summary(g) for g in bd.get("graphs") or []]
    return o


def run_tool(python: str, args: list[str], log: Path) -> tuple[int, str]:
    """``python -m inductor_bench ARGS`` with this checkout first on the path: (exit, output)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run([python, "-m", "inductor_bench", *args], env=env, capture_output=True, text=True,
                       cwd=ROOT)
    log.write_text(p.stdout + p.stderr)
    return p.returncode, p.stdout


def other_commands(python: str, out_dir: Path, run: Path, compact: bool) -> Outcome:
    """``report`` and ``diff`` of a finished breakdown under this torch, and (not compact)
    ``compare`` of eager and default on models/mlp.py."""
    t0 = time.monotonic()
    o = Outcome("report, diff" + ("" if compact else ", compare"), 0.0)
    rc, text = run_tool(python, ["report", str(run)], out_dir / "report.log")
    if rc != 0 or "0-forward" not in text:
        o.failures.append(f"report: exit {rc}")
    rc, text = run_tool(python, ["diff", str(run), str(run)], out_dir / "diff.log")
    if rc != 0 or not text.startswith("SAME CODE: "):  # its modules are the same, byte for byte
        o.failures.append(f"diff of a run with itself: exit {rc}, not SAME CODE")
    if not compact:
        dest = out_dir / "compare"
        rc, _ = run_tool(python, ["compare", str(ROOT / "models/mlp.py"), "--modes", "default", "--device",
                                  "cpu", "--iterations", "10", "--windows", "2", "--out", str(dest)],
                         out_dir / "compare.log")
        modes = [m.get("mode") for m in read_json(dest / "compare.json").get("modes", [])]
        if rc != 0 or modes != ["eager", "default"]:
            o.failures.append(f"compare: exit {rc}, modes {modes}")
    o.seconds = time.monotonic() - t0
    return o


def read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def last_line(log: Path) -> str:
    lines = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    return lines[-1] if lines else "(no output)"


def versions(python: str) -> dict[str, str]:
    code = ("import json, platform, torch; print(json.dumps("
            "{'torch': torch.__version__, 'python': platform.python_version()}))")
    out = subprocess.run([python, "-c", code], capture_output=True, text=True)
    if out.returncode != 0:
        return {"torch": "unimportable", "python": "?", "error": last_nonempty(out.stderr)}
    return json.loads(out.stdout.strip().splitlines()[-1])


def last_nonempty(text: str) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def fmt_case(o: Outcome) -> str:
    if o.failures:
        return f"{o.label}: FAIL ({'; '.join(o.failures)})"
    if not o.graphs:
        return f"{o.label}: pass"
    busy = "/".join(f"{g['busy_pct']:.1f}" for g in o.graphs)
    return f"{o.label}: {len(o.graphs)} graphs, busy {busy} %"


def run_version(python: str, out_dir: Path, compact: bool) -> int:
    out_dir.mkdir(parents=True, exist_ok=True)
    v = versions(python)
    outcomes = [] if "error" in v else [run_case(python, c, out_dir, compact) for c in CASES]
    if outcomes and (Path(outcomes[0].run_dir) / "breakdown.json").is_file():
        outcomes.append(other_commands(python, out_dir, Path(outcomes[0].run_dir), compact))
    ok = "error" not in v and not any(o.failures for o in outcomes)
    summary = {"versions": v, "ok": ok, "compact": compact, "cases": [asdict(o) for o in outcomes]}
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=1))
    detail = v.get("error") or " · ".join(fmt_case(o) for o in outcomes)
    print(f"torch {v['torch']:<14} {'PASS' if ok else 'FAIL'}  {detail}", flush=True)
    return 0 if ok else 1


def table_row(s: dict[str, Any]) -> str:
    v = s["versions"]
    cells = [f"{v['torch']}", v["python"], "pass" if s["ok"] else "**fail**"]
    cases, commands = s["cases"][: len(CASES)], s["cases"][len(CASES):]
    for c in cases:
        if c["failures"]:
            cells += ["; ".join(c["failures"]), "", "", ""]
            continue
        by_time = sorted(c["categories_ms"].items(), key=lambda kv: -kv[1])
        cats = ", ".join(f"{k} {ms:.3f}" for k, ms in by_time)
        graphs = ", ".join(f"{g['id']} {g['busy_pct']:.1f}" for g in c["graphs"])
        taken = [g["others_cores"] for g in c["graphs"] if g.get("others_cores") is not None]
        cells += [graphs, cats, f"{max(taken):.1f}" if taken else "-", f"{c['seconds']:.0f}"]
    done = [f"{o['label']}: " + ("; ".join(o["failures"]) or "pass") for o in commands]
    cells.append("; ".join(done) or "not run")
    return "| " + " | ".join(cells) + " |"


def version_key(v: str) -> tuple[int, ...]:
    return tuple(int(x) if x.isdigit() else 0 for x in v.split("+")[0].split("."))


def table(dirs: list[Path]) -> str:
    head = ["torch", "Python", "result"]
    for c in CASES:
        head += [f"{c.label}: graphs, busy %", f"{c.label}: ms by category",
                 f"{c.label}: cores others took", f"{c.label}: run s"]
    head.append("other commands")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    summaries = [json.loads((d / "summary.json").read_text()) for d in dirs]
    for s in sorted(summaries, key=lambda s: version_key(s["versions"]["torch"])):
        lines.append(table_row(s))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", help="the Python of the environment under test")
    ap.add_argument("--out-dir", type=Path, help="new directory for this version's runs")
    ap.add_argument("--compact", action="store_true", help="fewer profiled iterations (CI)")
    ap.add_argument("--table", type=Path, nargs="+", help="print the markdown table of these out dirs")
    a = ap.parse_args(argv)
    if a.table:
        print(table(a.table))
        return 0
    if not a.python or not a.out_dir:
        ap.error("--python and --out-dir are required (or --table)")
    return run_version(a.python, a.out_dir, a.compact)


if __name__ == "__main__":
    sys.exit(main())
