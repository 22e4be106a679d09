"""`sweep --baseline` gives, model by model, the warnings `diff` gives for that model's two
compares (torch settings, compile caches, freezing that differ; a side measured disturbed),
after the model's name. The sweeps are hand-built: the recorded CPU compare of
tests/fixtures/results/cpu_mlp_compare in every cell, mlp's edited on each side (synthetic)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from inductor_bench.core.rundir import load_compare
from inductor_bench.core.sweep_table import build_table, gate
from inductor_bench.render.sweep import render_sweep
from inductor_bench.runner.sweep_run import load_sweep

from .test_sweep_cli import _argv, _cli, _done_sweep

SETUP_WARNINGS = [
    "warning: mlp against the baseline: freezing differs: base without it, head --freezing (with --freezing "
    "the weights are constants: Inductor compiles other code for them)",
    "warning: mlp against the baseline: compile caches differ: base compiled cold (a fresh cache per mode), "
    "head compiled in the warm cache (--warm-cache); the compile time rows compare the caches as much as the "
    "compiles",
    "warning: mlp against the baseline: torch settings differ: float32_matmul_precision: base highest, head "
    "high; num_threads: base 2, head 4 (read after the first step: they choose the kernels a matmul, a "
    "convolution or attention runs)",
]
BUSY = {"others_cores": 1.5, "steal_pct": 0.0, "cores": 2}  # other processes kept 1.5 of 2 cores busy


def _set_up(d: Path, precision: str, threads: int, warm: bool, freezing: bool) -> None:
    """mlp's compare in the sweep ``d`` as run with these settings (synthetic)."""
    path = d / "mlp" / "compare.json"
    data = json.loads(path.read_text())
    data["freezing"] = freezing
    for m in (m for m in data["modes"] if m["breakdown"] is not None):  # eager has none
        m["breakdown"]["freezing"] = freezing
        m["breakdown"]["extras"]["torch_settings"] = {
            "values": {"float32_matmul_precision": precision, "num_threads": threads}}
        m["breakdown"]["extras"]["compile_cache"] = {"dir": f"{d}/cache", "shared": warm}
    path.write_text(json.dumps(data))


def _busy_steps(d: Path, mode: str) -> None:
    """mlp's ``mode`` column in the sweep ``d`` timed its steps on a busy machine (synthetic)."""
    path = d / "mlp" / "compare.json"
    data = json.loads(path.read_text())
    next(m for m in data["modes"] if m["mode"] == mode)["step_load"] = BUSY
    path.write_text(json.dumps(data))


def _diff_warnings(base: Path, head: Path) -> list[str]:
    r = subprocess.run([sys.executable, "-m", "inductor_bench", "diff", str(base), str(head)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return [ln for ln in r.stdout.splitlines() if ln.startswith("warning: ")]


def test_the_baseline_gives_each_models_setup_warnings_as_diff_does(tmp_path):
    old, new = _done_sweep(tmp_path / "old"), _done_sweep(tmp_path / "new")
    _set_up(old, "highest", 2, warm=False, freezing=False)
    _set_up(new, "high", 4, warm=True, freezing=True)
    r = _cli(*_argv(new, "--baseline", str(old)), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    said = [ln for ln in r.stdout.splitlines() if ln.startswith("warning: ")]
    assert said == SETUP_WARNINGS  # transformer_block, the same on both sides, has none
    # the lines diff prints for mlp's pair, after the model's name
    assert said == [w.replace("warning: ", "warning: mlp against the baseline: ", 1)
                    for w in _diff_warnings(old / "mlp", new / "mlp")]
    gated = _cli(*_argv(new, "--baseline", str(old), "--fail-on-regression", "60", "--format", "json"),
                 cwd=tmp_path)
    assert gated.returncode == 0, gated.stderr
    assert json.loads(gated.stdout)["gate"]["warnings"] == {
        "mlp": [w.removeprefix("warning: mlp against the baseline: ") for w in SETUP_WARNINGS]}
    alone = _cli(*_argv(new), cwd=tmp_path)  # no baseline: no pair, no such warning
    assert alone.returncode == 0 and "against the baseline" not in alone.stdout


def test_a_disturbed_side_is_said_once(tmp_path):
    """The baseline's disturbed step is diff's "base: ..." line; this sweep's, already in the
    notes as the sweep's own warning, is not said again as diff's "head: ..." line."""
    old, new = _done_sweep(tmp_path / "old"), _done_sweep(tmp_path / "new")
    _busy_steps(old, "default")
    _busy_steps(new, "max-autotune")
    diff = _diff_warnings(old / "mlp", new / "mlp")
    busy = "steps timed while other processes kept 1.5 of 2 cores busy: its step time may be inflated"
    assert diff == [f"warning: base: default: {busy}", f"warning: head: max-autotune: {busy}"]
    sweep = load_sweep(new)
    results = {c.model: load_compare(new / c.model / "compare.json") for c in sweep.cells}
    table = build_table(sweep, results)
    table.gate = gate({m: load_compare(old / m / "compare.json") for m in results}, results, None)
    said = [ln for ln in render_sweep(table).splitlines() if ln.startswith("warning: ")]
    assert said == [f"warning: mlp: max-autotune: {busy}",
                    f"warning: mlp against the baseline: base: default: {busy}"]
