"""`analyze` of a CUDA training loop recorded with ``with_stack=True`` (Python's calls), as a
user records one: ``prof.step()`` under a schedule, a ``record_function("data")`` range in the
loop's own frame, a synchronize each step. Each step (its start restored where torch wrote
it at its end: core/range_starts.py) must hold the loop's ``train_step`` call and its
``data`` range, counted from the raw JSON; each step must have device work; the host's time
between ops must go to ``torch.cuda`` (the synchronize) among its layers. With
``INDUCTOR_BENCH_GPU_TRACES`` set (GPU validation), the trace is kept there, with what
``analyze`` made of it. Marked ``gpu``: skipped without CUDA."""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path

import pytest

from inductor_bench.core.analyze import analyze_file
from inductor_bench.core.columns import load_columns
from inductor_bench.core.host_python import LAYERS
from inductor_bench.render.analyze import render_analyze

pytestmark = [pytest.mark.gpu]
CUDA = next(layer for layer, files in LAYERS if "torch/cuda/" in files)
ACTIVE = 4  # profiled steps, after a wait and a warmup step


def _record(torch, path: Path) -> None:
    from torch.profiler import ProfilerActivity, profile, record_function, schedule

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def train_step(x):
        model(x).square().mean().backward()
        opt.step()
        opt.zero_grad()
        torch.cuda.synchronize()

    for _ in range(3):
        train_step(torch.randn(512, 1024, device="cuda"))
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], with_stack=True,
                 schedule=schedule(wait=1, warmup=1, active=ACTIVE, repeat=1),
                 on_trace_ready=lambda p: p.export_chrome_trace(str(path))) as prof:
        for _ in range(ACTIVE + 2):
            with record_function("data"):
                x = torch.randn(512, 1024, device="cuda")
            train_step(x)
            prof.step()


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    path = tmp_path_factory.mktemp("stack") / "loop.pt.trace.json"
    _record(torch, path)
    return path


def _raw(path: Path) -> list[dict]:
    with (gzip.open if path.suffix == ".gz" else open)(path, "rt") as f:
        return [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]


def test_each_step_holds_the_loops_step_and_its_data(trace):
    r, restarted = check_loop(trace)
    _keep(trace, r, restarted)


def check_loop(trace: Path):
    """The checks of this module on a recorded loop's trace; its analysis and the ranges it restored."""
    events = _raw(trace)
    calls = [(e["ts"], e["ts"] + e["dur"]) for e in events
             if e.get("cat") == "python_function" and e["name"].endswith(": train_step")]
    data = [(e["ts"], e["ts"] + e["dur"]) for e in events if e.get("cat") == "user_annotation" and e["name"] == "data"]
    c = load_columns(trace)
    windows = sorted(m[1:3] for m in c.markers)
    assert len(windows) == ACTIVE
    for start, end in windows:  # each step holds one train_step call and one data range, whole
        assert sum(start <= s and e <= end for s, e in calls) == 1, (start, end, calls)
        assert sum(start <= s and e <= end for s, e in data) == 1, (start, end, data)
    r = analyze_file(trace)
    assert [s.wall_ms > 0 and s.devices and s.devices[0].busy_ms > 0 for s in r.steps] == [True] * ACTIVE
    layers = {f.layer for step in r.host_python for f in step}
    assert CUDA in layers, layers
    return r, c.restarted_ranges


def _keep(trace: Path, r, restarted: list[str]) -> None:
    """The trace and what analyze made of it, into ``INDUCTOR_BENCH_GPU_TRACES`` when set."""
    keep = os.environ.get("INDUCTOR_BENCH_GPU_TRACES")
    if not keep:
        return
    out = Path(keep)
    out.mkdir(parents=True, exist_ok=True)
    with open(trace, "rb") as src, gzip.open(out / "stack-loop.pt.trace.json.gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    text = render_analyze(r, "text")
    (out / "stack-loop.analyze.txt").write_text(f"ranges restored: {restarted or 'none'}\n\n{text}")
