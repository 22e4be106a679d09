"""``scripts/bench_disturbance.py`` end to end: the quiet reference and a second quiet run
(the kind ``quiet``, the machine's own run-to-run floor) are two runs in two directories, and
the table's graph column is what the two saved results say (computed here from their JSON).

The GPU validation's part 2 runs this script with ``--kinds quiet,busy,stall``: a second quiet
run that collides with the reference stops the benchmark after its first breakdown (exit 2).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT

SCRIPT = ROOT / "scripts" / "bench_disturbance.py"


def _walls(run_dir) -> dict[str, float]:
    data = json.loads((run_dir / "breakdown.json").read_text())
    return {g["id"]: g["wall_ms"] for g in data["graphs"] if g["status"] == "ok"}


@pytest.mark.slow
@pytest.mark.e2e
def test_a_second_quiet_run_is_judged_against_its_own_reference(tmp_path):
    out = tmp_path / "bench"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, str(SCRIPT), "--models", "mlp", "--rounds", "1", "--kinds", "quiet",
           "--reference-tries", "1", "--out", str(out)]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert p.returncode in (0, 1), p.stdout + p.stderr  # 2: a run failed
    reference, second = out / "0-mlp-reference", out / "0-mlp-quiet"
    assert (reference / "breakdown.json").is_file() and (second / "breakdown.json").is_file()
    # on a loaded machine the row says its reference was loaded: "quiet (reference loaded)"
    [line] = [ln for ln in p.stdout.splitlines() if ln.startswith("| 0 | mlp | quiet")]
    graph_cell = line.split("|")[5].strip()
    q, s = _walls(reference), _walls(second)
    assert set(q) == set(s) == {"0-forward", "0-backward"}
    worst = max(abs(s[g] / q[g] - 1.0) for g in q)
    assert graph_cell == f"{worst:.1%}"
    summary = json.loads(p.stdout.strip().splitlines()[-1])
    assert summary["out"] == str(out) and summary["all_met"] == (p.returncode == 0)


def test_without_out_every_invocation_gets_a_directory_of_its_own():
    """Runs are never overwritten: the default is a new directory each time, not a fixed path
    that the second invocation would find full."""
    outs = []
    for _ in range(2):
        p = subprocess.run([sys.executable, str(SCRIPT), "--rounds", "0"], capture_output=True, text=True,
                           cwd=ROOT, timeout=120)
        assert p.returncode == 0, p.stderr
        outs.append(json.loads(p.stdout.strip().splitlines()[-1])["out"])
    assert outs[0] != outs[1]
    for out in outs:
        d = Path(out)
        assert d.is_dir() and not any(d.iterdir())
        d.rmdir()


def _bench():
    sys.path.insert(0, str(ROOT / "scripts"))
    import bench_disturbance

    return bench_disturbance


def _figures(kernels: dict[str, float]):
    return _bench().Figures({}, {}, {("0-backward", k): v for k, v in kernels.items()})


QUIET = {"mm": 1.00, "addmm": 0.60, "ln": 0.137, "bwd_5": 0.0857, "bwd_8": 0.0839, "gelu": 0.040}


@pytest.mark.parametrize("seen, held, ties", [
    (QUIET, True, []),
    # 0.0857 against 0.0839 (2.1% apart): a tie; their swap is listed, the order held
    ({**QUIET, "bwd_5": 0.0811, "bwd_8": 0.0812}, True, ["bwd_5~bwd_8"]),
    # 0.137 against 0.0857 (60% apart) the other way round: the order changed
    ({**QUIET, "ln": 0.08}, False, []),
    # a kernel from below the top 5 enters it ahead of one clearly faster in the quiet run
    ({**QUIET, "gelu": 0.10}, False, []),
    # ... or ahead of a tie only (0.040 against 0.0839 is not a tie: the order changed)
    ({**QUIET, "gelu": 0.084}, False, []),
])
def test_the_order_is_judged_between_kernels_more_than_tie_apart(seen, held, ties):
    """Synthetic figures: swaps within TIE (5%) of the quiet figures are ties, listed; any
    other swap among either run's top 5 changes the order."""
    got_held, got_ties = _bench().order(_figures(QUIET), _figures(seen))
    assert (got_held, got_ties) == (held, ties)


def test_a_reference_is_loaded_when_the_runs_own_reading_of_its_reported_window_says_so():
    """Synthetic runs: the reading of the window the figures come from decides, not the others'."""
    from inductor_bench.core.load import Load
    from inductor_bench.core.results import BreakdownResult, GraphResult

    quiet, busy = Load(others_cores=0.1, steal_pct=0.0, cores=2), Load(others_cores=0.9, steal_pct=0.0, cores=2)
    fwd = GraphResult(id="0-forward", role="forward", window=1, window_load=[busy, quiet])
    bwd = GraphResult(id="0-backward", role="backward", window=0, window_load=[busy, quiet])
    run = BreakdownResult(model="mlp", graphs=[fwd, bwd])
    assert _bench().loaded(run) == ["0-backward"]
    bwd.window = 1
    assert _bench().loaded(run) == []
    fwd.window_speed = [1.0, 0.62]  # the machine ran slow during the forward's reported window
    assert _bench().loaded(run) == ["0-forward"]
