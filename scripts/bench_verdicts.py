"""Do the step-time verdicts hold? N rounds of two scenarios, the verdicts counted.

- identical: the model against itself (two columns of the same code and mode): the goal is
  "within noise";
- slower: the model against a variant (``models/mlp_slow25.py``: about 25% slower on this
  CPU): the goal is "significant" and slower.

With ``--kind compare`` (the default) each round is one `inductor-bench compare MODEL MODEL
SLOWER --modes MODE --no-eager`: the three columns are timed in one process, interleaved, and
the two verdicts are the lines it prints, ``mlp-2 against mlp, default: 1.00x [0.98x-1.01x]
(within noise)``. With ``--kind breakdown`` (what `diff` of saved runs measures: one run per side,
the graphs' harnesses) each round is three breakdowns judged with `inductor-bench diff`.

Every verdict must print the interval it rests on. Prints a markdown table of every verdict
and a summary; exit status 0 when every goal was met in every round, 1 when one was missed,
2 when a run failed (its log is in OUT).

    python scripts/bench_verdicts.py                            # 10 rounds, compare, --train
    python scripts/bench_verdicts.py --rounds 2 --out /tmp/verdicts
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from inductor_bench.core.compare import CompareResult
from inductor_bench.core.vocab import Verdict

ROOT = Path(__file__).resolve().parent.parent
IDENTICAL, SLOWER = "identical", "slower"
GOALS = {IDENTICAL: "within noise (breakdowns: same code)", SLOWER: "significant, slower"}
# the diff's first line, per section:
# "default: all graphs 2.655 -> 3.301 ms (+24.3% [+21.0%..+27.9%], significant)" (a diff of
# compares says "step time" where a diff of breakdowns says "all graphs"); where the two
# runs compiled the same code, "(+1.2% [-0.4%..+2.9%]) between ..." (the verdict: same code)
STEP_PHRASE = (r"{mode}: (?:all graphs|step time) ([\d.]+) -> ([\d.]+) ms "
               r"\(([^ ]+) (\[[^\]]+\])(?:, ([^)]+))?\)")


class RunFailed(Exception):
    """A measurement or a diff failed; the message names its log."""


@dataclass
class Row:
    round: int
    scenario: str
    base_ms: float
    head_ms: float
    change: str  # as printed, e.g. "+24.3%" (diff) or "0.80x" (compare)
    interval: str  # as printed, e.g. "[+21.0%..+27.9%]"; "" when the line printed none
    verdict: str  # as printed
    warnings: int  # how many the diff printed (a busy machine, different model names, ...)
    met: bool


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "inductor_bench.cli", *args]


def run(cmd: list[str], log: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    log.write_text(f"$ {' '.join(cmd)}\n--- stdout\n{p.stdout}\n--- stderr\n{p.stderr}")
    if p.returncode != 0:
        raise RunFailed(f"{' '.join(cmd[3:5])} exited with {p.returncode} (log: {log})")
    return p


def measure(
    opts: argparse.Namespace, models: list[Path], out: Path, env: dict[str, str]
) -> subprocess.CompletedProcess:
    """One run of ``models`` into ``out``: a compare of them all, or a breakdown of the one."""
    common = ["--device", opts.device, "--out", str(out)] + (["--train"] if opts.train else [])
    if opts.kind == "compare":
        cmd = cli("compare", *map(str, models), "--modes", opts.mode, "--no-eager", "--warm-cache", *common)
    else:
        cmd = cli("breakdown", str(models[0]), "--mode", opts.mode, *common)
    return run(cmd + opts.args.split(), out.with_suffix(".log"), env)


def judge(
    opts: argparse.Namespace, n: int, scenario: str, base: Path, head: Path, env: dict[str, str]
) -> Row:
    """`inductor-bench diff base head` of two breakdowns: the verdict on the step, as printed."""
    name = base.parent / f"diff-{scenario}"
    out = name.with_suffix(".json")
    p = run(cli("diff", str(base), str(head), "--json", str(out)), name.with_suffix(".log"), env)
    d = json.loads(out.read_text())
    (section,) = [s for s in d["sections"] if s["mode"] == opts.mode]
    step = section["step"]
    printed = re.search(STEP_PHRASE.format(mode=re.escape(opts.mode)), p.stdout.splitlines()[0])
    if printed is None:
        raise RunFailed(f"no verdict for {opts.mode} on the diff's first line (log: {name}.log)")
    met = goal_met(scenario, step["verdict"], step["delta_ms"] > 0)
    return Row(n, scenario, step["base"]["ms"], step["head"]["ms"], printed[3], printed[4],
               printed[5] or step["verdict"], len(d["warnings"]), met)


def goal_met(scenario: str, verdict: str, slower: bool) -> bool:
    if scenario == IDENTICAL:  # two breakdowns of one model: the same code, or within noise
        return verdict in (Verdict.WITHIN_NOISE, Verdict.SAME_CODE)
    return verdict == Verdict.SIGNIFICANT and slower


# the compare's verdict line per later model:
# "mlp-2 against mlp, default: 1.00x [0.98x-1.01x] (within noise)"
MODEL_PHRASE = r"^{model} against {base}, {mode}: ([\d.]+x) (\[[^\]]+\]) \(([^),]+)(, slower|, faster)?\)$"


def compare_rows(opts: argparse.Namespace, n: int, out: Path, stdout: str) -> list[Row]:
    """The two verdicts of a round's compare of MODEL, MODEL again and SLOWER, as printed."""
    r = CompareResult.from_dict(json.loads((out / "compare.json").read_text()))
    base_name, again_name, slow_name = r.models
    # each column's step time as the compare's table shows it (the steady mean of its rounds)
    means = {m.model: r.step(m).ms if r.step_samples(m) else float("nan") for m in r.modes}
    rows = []
    for scenario, name in ((IDENTICAL, again_name), (SLOWER, slow_name)):
        phrase = MODEL_PHRASE.format(
            model=re.escape(name), base=re.escape(base_name), mode=re.escape(opts.mode)
        )
        printed = re.search(phrase, stdout, re.MULTILINE)
        if printed is None:
            raise RunFailed(f"no verdict for {name} against {base_name} in the compare (log: {out}.log)")
        verdict, slower = printed[3], printed[4] == ", slower"
        rows.append(Row(n, scenario, means[base_name], means[name], printed[1], printed[2], verdict,
                        stdout.count("warning:"), goal_met(scenario, verdict, slower)))
    return rows


def one_round(opts: argparse.Namespace, n: int, env: dict[str, str]) -> list[Row]:
    d = opts.out / f"round-{n:02d}"
    d.mkdir()
    if opts.kind == "compare":
        p = measure(opts, [opts.model, opts.model, opts.slower], d / "compare", env)
        return compare_rows(opts, n, d / "compare", p.stdout)
    runs = {}
    for what, model in (("base", opts.model), ("again", opts.model), ("slower", opts.slower)):
        measure(opts, [model], d / what, env)
        runs[what] = d / what
    return [judge(opts, n, IDENTICAL, runs["base"], runs["again"], env),
            judge(opts, n, SLOWER, runs["base"], runs["slower"], env)]


def table(rows: list[Row]) -> str:
    lines = [
        "| round | scenario | base ms | head ms | change or speedup [95% interval] | verdict | warnings "
        "| goal met |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r.round} | {r.scenario} | {r.base_ms:.3f} | {r.head_ms:.3f} | {r.change} "
                     f"{r.interval} | {r.verdict} | {r.warnings} | {'yes' if r.met else '**no**'} |")
    return "\n".join(lines)


def summary(rows: list[Row], rounds: int) -> tuple[str, bool]:
    lines = ["| scenario | goal | met | every verdict printed its interval |", "|---|---|---|---|"]
    ok = True
    for scenario, goal in GOALS.items():
        mine = [r for r in rows if r.scenario == scenario]
        met, shown = sum(r.met for r in mine), sum(bool(r.interval) for r in mine)
        ok = ok and met == shown == rounds
        lines.append(f"| {scenario} | {goal} | {met}/{rounds} | {shown}/{rounds} |")
    return "\n".join(lines), ok


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=10, help="rounds of both scenarios (default 10)")
    ap.add_argument("--model", type=Path, default=ROOT / "models" / "mlp.py")
    ap.add_argument("--slower", type=Path, default=ROOT / "models" / "mlp_slow25.py",
                    help="the variant that should be called slower")
    ap.add_argument("--kind", choices=("compare", "breakdown"), default="compare",
                    help="what measures the step: compare (the real model call) or breakdown "
                         "(separate breakdowns, the graphs' harnesses, judged with diff)")
    ap.add_argument("--mode", default="default", help="the compile mode of every run")
    ap.add_argument("--no-train", dest="train", action="store_false", help="inference, not a train step")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--args", default="", help="more arguments for every run, e.g. '--step-budget 2'")
    ap.add_argument("--out", type=Path, default=None, help="where the runs go (must not exist or be empty)")
    opts = ap.parse_args(argv)
    if opts.rounds < 1:
        ap.error("--rounds must be at least 1")
    for f in (opts.model, opts.slower):
        if not f.is_file():
            ap.error(f"{f}: no such model file")
    opts.out = (opts.out or ROOT / "runs" / f"bench-verdicts-{dt.datetime.now():%Y%m%d-%H%M%S}").resolve()
    if opts.out.exists() and any(opts.out.iterdir()):
        ap.error(f"--out {opts.out}: already exists and is not empty")
    opts.model, opts.slower = opts.model.resolve(), opts.slower.resolve()
    return opts


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    opts.out.mkdir(parents=True, exist_ok=True)
    # one intra-op thread, as the merge gate; a compile cache of this benchmark's own
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
           "XDG_CACHE_HOME": str(opts.out / "cache")}
    rows: list[Row] = []
    try:
        for n in range(1, opts.rounds + 1):
            rows += one_round(opts, n, env)
            print(f"round {n}/{opts.rounds}: " + "; ".join(
                f"{r.scenario} {r.change} {r.interval} {r.verdict}" for r in rows[-2:]), file=sys.stderr)
    except RunFailed as e:
        print(f"bench_verdicts: {e}", file=sys.stderr)
        return 2
    text, ok = summary(rows, opts.rounds)
    what = f"{opts.kind} {opts.model.name} vs {opts.slower.name}, mode {opts.mode}"
    what += f"{', train' if opts.train else ''}, {opts.device}, {opts.rounds} rounds (runs: {opts.out})"
    print(what + "\n")
    print(table(rows) + "\n\n" + text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
