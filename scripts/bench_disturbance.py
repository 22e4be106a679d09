"""Do the figures hold while other work runs? Breakdowns quiet and beside a disturber, paired.

Each round runs, for every model, a quiet breakdown and one beside each disturbance of
``scripts/disturbers.py`` (``busy``: a busy loop on one core for the whole run; ``stall``:
processes that spin on every core for 20-100 ms at random), and compares each disturbed run
with the quiet run of the same round (measured again, ``--reference-tries`` runs at most, while
the tool's own load reading says other work ran during it):

- every graph's wall time, the whole step's category shares and the quiet run's top-5
  kernels' times, each within GOAL (10%) of the quiet figure;
- the top-5 order unchanged: no kernel of either run's top 5 ahead of one that was more than
  TIE (5%) slower in the quiet run. Kernels closer than that are a tie: their order is below
  what two runs can tell apart when each figure may move by GOAL, so a swap between them is
  listed (``ties swapped``) and does not count as a change.

Each comparison is made twice over the same runs: with the figures the tool reports (the mean
over the steady iterations, ``core/steady.py``) and with the plain mean over every iteration
(what the tool reported before), computed here from the same saved samples. Prints a markdown
table; exit status 0 when every reported comparison met the goal, 1 when one did not, 2 when a
run failed (its log is in OUT).

    python scripts/bench_disturbance.py                               # mlp and densenet, 2 rounds
    OMP_NUM_THREADS=1 python scripts/bench_disturbance.py --models mlp --rounds 3
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from disturbers import disturb  # noqa: E402

from inductor_bench.core.results import BreakdownResult  # noqa: E402
from inductor_bench.core.rundir import load_breakdown  # noqa: E402
from inductor_bench.core.step import disturbed_graphs  # noqa: E402

GOAL = 0.10
TOP = 5
REFERENCE_TRIES = 3
TIE = 0.05  # kernels closer than this in the quiet run are a tie for the order
MODELS = {"mlp": "models/mlp.py", "densenet": "models/densenet.py"}


class RunFailed(Exception):
    pass


@dataclass
class Figures:
    """What a run reports, by one way of making figures from its samples."""

    graphs: dict[str, float]  # graph id -> wall ms
    shares: dict[str, float]  # category -> share of kernel time
    kernels: dict[tuple[str, str], float]  # (graph, kernel) -> ms


def figures(r: BreakdownResult, plain: bool) -> Figures:
    """The run's figures: as reported (steady means), or plain means over every iteration."""
    graphs, kernels, cats = {}, {}, {}
    for g in r.measured():
        def fig(samples: list[float], reported: float) -> float:
            return math.fsum(samples) / len(samples) if plain and samples else reported

        graphs[g.id] = fig(g.wall_samples_ms, g.wall_ms)
        for k in g.kernels:
            kernels[(g.id, k.name)] = fig(k.samples_ms, k.ms)
            cats[k.category] = cats.get(k.category, 0.0) + kernels[(g.id, k.name)]
    total = math.fsum(cats.values()) or 1.0
    return Figures(graphs, {c: v / total for c, v in cats.items()}, kernels)


def top(f: Figures) -> list[tuple[str, str]]:
    return sorted(f.kernels, key=lambda k: -f.kernels[k])[:TOP]


def off(a: float, b: float) -> float:
    return abs(b / a - 1.0) if a > 0 else (0.0 if b == 0 else math.inf)


def order(quiet: Figures, seen: Figures) -> tuple[bool, list[str]]:
    """(whether the top-5 order held, the tied pairs that swapped). A pair is ordered when one
    was more than TIE slower than the other in the quiet run; it swapped when the disturbed
    run puts it the other way round. Kernels of either top 5 count (one that enters the top 5
    past a clearly slower one changes the order too)."""
    names = list(dict.fromkeys(top(quiet) + top(seen)))
    held, ties = True, []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            qa, qb = quiet.kernels.get(a, 0.0), quiet.kernels.get(b, 0.0)
            sa, sb = seen.kernels.get(a, 0.0), seen.kernels.get(b, 0.0)
            if (qa - qb) * (sa - sb) >= 0:
                continue  # same order (or a tie in either run)
            if max(qa, qb) > min(qa, qb) * (1.0 + TIE):
                held = False
            else:
                ties.append(f"{short(a[1])}~{short(b[1])}")
    return held, ties


def short(name: str) -> str:
    return name if len(name) <= 24 else "..." + name[-21:]


def judge(quiet: Figures, seen: Figures) -> dict[str, object]:
    """The worst relative difference of each kind of figure, and whether the top-5 order held."""
    q_top = top(quiet)
    graph = max((off(v, seen.graphs.get(k, 0.0)) for k, v in quiet.graphs.items()), default=0.0)
    shares = [off(v, seen.shares.get(c, 0.0)) for c, v in quiet.shares.items() if v >= 0.02]
    share = max(shares, default=0.0)
    kern = max((off(quiet.kernels[k], seen.kernels.get(k, 0.0)) for k in q_top), default=0.0)
    held, ties = order(quiet, seen)
    met = graph <= GOAL and share <= GOAL and kern <= GOAL and held
    return {"graph": graph, "share": share, "top5": kern, "order": held, "ties": ties, "met": met}


def row(j: dict[str, object]) -> str:
    """One judgement's cells: graph, share, top-5, order."""
    order = "kept" if j["order"] else "CHANGED"
    if j["ties"]:
        order += f" (ties swapped: {', '.join(j['ties'])})"
    return f"{j['graph']:.1%} | {j['share']:.1%} | {j['top5']:.1%} | {order}"


def breakdown(model: str, out: Path, kind: str, train: bool, seed: int, opts: argparse.Namespace
              ) -> BreakdownResult:
    cmd = [sys.executable, "-m", "inductor_bench.cli", "breakdown", MODELS[model], "--device", opts.device,
           "--out", str(out)] + (["--train"] if train else [])
    cmd += ["--timeout", str(opts.timeout)] if opts.timeout else []
    with disturb(kind, seed=seed):
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    log = out.parent / f"{out.name}.log"
    log.write_text(f"$ {' '.join(cmd)}\n{p.stdout}\n{p.stderr}")
    if p.returncode != 0:
        raise RunFailed(f"{model} {kind} exited with {p.returncode} (log: {log})")
    return load_breakdown(out)


def loaded(r: BreakdownResult) -> list[str]:
    """The graphs whose reported window the run's own readings call disturbed (other
    processes kept half a core busy or more, the hypervisor stole CPU time, or the machine ran
    over 10% slower than its fastest: the report's warnings, ``core/step.disturbances``)."""
    return [gid for gid, _ in disturbed_graphs(r)]


def quiet_reference(model: str, out: Path, tag: str, rnd: int, opts: argparse.Namespace
                    ) -> tuple[BreakdownResult, str]:
    """The round's quiet run, measured again (in a directory of its own) while the tool's load
    reading says other work ran during it, ``--reference-tries`` runs at most: a reference
    that was not quiet judges every run of the round against the wrong figures. Returns the
    run and, when it never was quiet, a note for its rows."""
    tries = max(1, opts.reference_tries)
    for attempt in range(tries):
        name = f"{tag}-reference" + (f"-{attempt + 1}" if attempt else "")
        run = breakdown(model, out / name, "quiet", not opts.inference, rnd, opts)
        busy = loaded(run)
        if not busy:
            return run, ""
        then = "measuring the reference again" if attempt + 1 < tries else "kept"
        print(f"{name}: other work ran during {', '.join(busy)} (the run's load reading); {then}",
              file=sys.stderr, flush=True)
    return run, " (reference loaded)"


def left_out(r: BreakdownResult) -> str:
    t = r.totals()
    return f"{t.left_out}/{t.iterations}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="mlp,densenet")
    ap.add_argument("--kinds", default="quiet,busy,stall",
                    help="quiet: a second quiet run (the machine's own run-to-run floor)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--reference-tries", type=int, default=REFERENCE_TRIES,
                    help="measure a loaded quiet reference again, this many runs at most")
    ap.add_argument("--inference", action="store_true", help="inference instead of --train")
    ap.add_argument("--out", type=Path, default=None,
                    help="a new or empty directory for the runs (default: a new one under /tmp)")
    ap.add_argument("--device", default="cpu", help="cpu, or cuda (scripts/gpu_validate.sh, part 2)")
    ap.add_argument("--timeout", type=int, default=None, help="each breakdown's --timeout, seconds")
    opts = ap.parse_args()
    if opts.out is None:  # runs are never overwritten: a fresh directory for every invocation
        opts.out = Path(tempfile.mkdtemp(prefix="inductor-bench-disturbance-"))
    opts.out.mkdir(parents=True, exist_ok=True)
    models, kinds = opts.models.split(","), opts.kinds.split(",")
    threads = os.environ.get("OMP_NUM_THREADS", "default")
    print(f"OMP_NUM_THREADS={threads}, {opts.rounds} round(s), goal: within {GOAL:.0%} of quiet, "
          f"top-{TOP} order kept (kernels within {TIE:.0%} of each other a tie)\n")
    print("| round | model | disturbance | left out | graph | share | top-5 | order | goal "
          "| plain mean: graph | share | top-5 | order |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    all_met = True
    try:
        for rnd in range(opts.rounds):
            for model in models:
                tag = f"{rnd}-{model}"
                # the kind "quiet" is a second quiet run, judged against this one
                quiet, note = quiet_reference(model, opts.out, tag, rnd, opts)
                for kind in kinds:
                    seen = breakdown(model, opts.out / f"{tag}-{kind}", kind, not opts.inference, rnd, opts)
                    new = judge(figures(quiet, False), figures(seen, False))
                    old = judge(figures(quiet, True), figures(seen, True))
                    all_met &= bool(new["met"])
                    print(f"| {rnd} | {model} | {kind}{note} | {left_out(seen)} | {row(new)} | "
                          f"{'met' if new['met'] else 'MISSED'} | {row(old)} |", flush=True)
    except RunFailed as e:
        print(f"run failed: {e}", file=sys.stderr)
        return 2
    summary = {"goal": GOAL, "all_met": all_met, "out": str(opts.out)}
    print("\n" + json.dumps(summary))
    return 0 if all_met else 1


if __name__ == "__main__":
    sys.exit(main())
