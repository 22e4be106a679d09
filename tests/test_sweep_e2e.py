"""`inductor-bench sweep` end to end with the real compare on the CPU: on the ``local`` and the
``ray`` executor (Ray started by the command), the same command again skips the finished cell,
and the sweep's HTML page opened in Chromium. Each sweep compiles models/mlp.py once (default
mode, eager beside it), with few calls, so that it stays a test of the plumbing."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from inductor_bench.core.compare import judge, too_disturbed
from inductor_bench.core.rundir import load_compare
from inductor_bench.core.sweep_table import build_table
from inductor_bench.render.compare import render_compare
from inductor_bench.render.format import speedup_x
from inductor_bench.render.sweep_html import cell_colour
from inductor_bench.runner.sweep_run import load_results, load_sweep

from .processes import as_in_a_terminal
from .test_html_browser import FOUND, Browser, needs_browser

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[1]
QUICK = ["--modes", "default", "--device", "cpu", "--repeat", "5", "--windows", "1", "--iterations", "10"]


def _sweep(out: Path, *more: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-m", "inductor_bench", "sweep", "models/mlp.py", *QUICK, "--out", str(out), *more],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )


@pytest.fixture(scope="session")
def local_sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep") / "local"
    return out, _sweep(out)


def _check_swept(out: Path, r: subprocess.CompletedProcess, executor: str) -> None:
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("sweep: ")]  # not Ray's own notes
    assert lines[0] == f"sweep: 1 model x 1 mode, 0 done before, 1 to run on the {executor} executor"
    assert lines[1] == "sweep: mlp started; 0/1 done"
    assert lines[-1].startswith("sweep: mlp done in ") and lines[-1].endswith(" s; 1/1 done")
    cell = json.loads((out / "sweep.json").read_text())["cells"][0]
    assert (cell["status"], cell["run_dir"], cell["exit_code"]) == ("done", "mlp", 0)
    result = load_compare(out / "mlp")
    ch = judge(result, result.mode("eager"), result.mode("default"))
    if (why := too_disturbed(result, result.mode("eager"), result.mode("default"))) is not None:
        # beside other work most rounds may be disturbed: no figure, the reason in its place
        assert re.search(rf"mlp +default +n/m +- +{re.escape(why)}", r.stdout), r.stdout
        assert (out / "report.txt").read_text() == r.stdout
        return
    # at 2 decimals, more beside a verdict's floor (0.907x, not 0.91x, under a 10% floor)
    shown = speedup_x(ch)
    assert re.fullmatch(r"\d\.\d{2,6}x", shown) and abs(float(shown[:-1]) - ch.speedup) < 0.005
    assert f"mlp      default  {shown}" in r.stdout
    assert shown in render_compare(result)  # compare's own report says the same
    assert (out / "report.txt").read_text() == r.stdout
    assert (out / "mlp" / "index.html").exists() and (out / "logs" / "mlp.log").exists()


@pytest.mark.slow  # a whole compare of a model in a sweep, twice (about 60 s)
def test_local_sweep_end_to_end_then_resumed(local_sweep):
    out, r = local_sweep
    _check_swept(out, r, "local")
    again = _sweep(out)
    assert again.returncode == 0
    assert again.stderr == "sweep: 1 model x 1 mode, 1 done before, 0 to run on the local executor\n"
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == [
        "index.html",
        "logs",
        "mlp",
        "report.txt",
        "sweep.json",
    ]


@pytest.mark.slow
def test_ray_sweep_end_to_end(tmp_path):
    pytest.importorskip("ray")
    out = tmp_path / "ray"
    r = _sweep(out, "--executor", "ray")
    _check_swept(out, r, "ray")


def _rgba(css: str) -> tuple[float, ...]:
    """``rgb(r,g,b)`` or ``rgba(r,g,b,a)`` as four numbers, alpha 1 where none is written."""
    found = re.fullmatch(r"rgba?\(([^)]*)\)", css.replace(" ", ""))
    assert found, css
    parts = [float(x) for x in found.group(1).split(",")]
    return tuple(parts + [1.0] * (4 - len(parts)))


def test_rgba_reads_both_spellings_of_an_alpha():
    assert _rgba("rgba(215, 58, 73, 0.3)") == _rgba("rgba(215,58,73,0.30)") == (215, 58, 73, 0.3)
    assert _rgba("rgb(1, 2, 3)") == (1, 2, 3, 1.0)


@pytest.mark.slow
@needs_browser
def test_the_sweep_page_opens_clean_with_its_heatmap(local_sweep, tmp_path):
    out, _ = local_sweep
    b = Browser(*FOUND)
    try:
        load = b.open(out / "index.html")
        assert load.errors == [] and load.requests == [load.url]
        cells = b.driver.execute_script(
            "return Array.from(document.querySelectorAll('.heat td.h[data-speedup]')).map("
            "function (c) { return [c.textContent, getComputedStyle(c).backgroundColor]; });"
        )
        result = load_compare(out / "mlp")
        shown = speedup_x(judge(result, result.mode("eager"), result.mode("default")))
        assert len(cells) == 1 and cells[0][0].startswith(shown)
        sweep = load_sweep(out)
        figures = build_table(sweep, load_results(out, sweep)).rows["mlp"]["default"]
        # green, red, the grey of noise, or none (too few samples); a browser writes the alpha its
        # own way (0.30 as 0.3) and may keep it in 8 bits, so the channels are compared as numbers
        drawn = _rgba(cells[0][1])
        meant = _rgba(cell_colour(figures) or "rgba(0,0,0,0)")
        assert drawn[:3] == meant[:3] and abs(drawn[3] - meant[3]) <= 1 / 255
        charts = b.charts()
        assert len(charts) == 1 and charts[0]["bars"] == 1 and charts[0]["width"] > 100
        shot = tmp_path / "sweep.png"
        b.screenshot(shot)
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    finally:
        b.quit()


def test_ctrl_c_stops_the_running_compare_and_saves_the_sweep(tmp_path):
    out = tmp_path / "stopped"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "inductor_bench",
            "sweep",
            "models/mlp.py",
            "models/transformer_block.py",
            *QUICK,
            "--out",
            str(out),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=as_in_a_terminal,  # a background job of a non-interactive shell ignores SIGINT
    )
    deadline = time.monotonic() + 300
    while not (out / "mlp" / "eager").is_dir() and time.monotonic() < deadline:  # compare is running
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert err.splitlines()[-1] == (
        f"inductor-bench: error: sweep stopped (0/2 done, 1 interrupted, 1 pending); what was measured is saved in "
        f"{out}, and the same command resumes it"
    )
    measured = [m for m in json.loads((out / "mlp" / "compare.json").read_text())["modes"] if m["status"] == "ok"]
    saved = f"; what was measured is saved in {out / 'mlp'}" if measured else ""
    assert re.fullmatch(
        r"sweep: mlp interrupted: stopped by SIGINT after \d+\.\d\d s" + re.escape(saved) + "; 0/2 done, 1 interrupted",
        err.splitlines()[-2],
    ), err
    cells = json.loads((out / "sweep.json").read_text())["cells"]
    assert [(c["status"], c["exit_code"]) for c in cells] == [("interrupted", 130), ("pending", None)]
    assert "interrupted" in json.loads((out / "mlp" / "compare.json").read_text())["errors"]
    assert "2 models x 1 mode," in (out / "report.txt").read_text()
