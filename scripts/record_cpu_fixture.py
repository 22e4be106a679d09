"""Record the CPU trace fixtures used by the tests (tests/fixtures/cpu_mlp_train).

Compiles a tiny MLP for training on the CPU in a fresh Inductor cache with C++ kernel
profiling on, captures the forward and backward compiled modules through Inductor's
structured trace (logger ``torch.__trace``, record ``inductor_output_code``), runs each
module's own ``call(get_args())`` under torch.profiler for a few iterations, each inside
the ``inductor_bench::iteration`` marker, and writes per graph::

    <out>/<frame>-<role>/module.py        the compiled module's source
    <out>/<frame>-<role>/trace.json.gz    the kineto chrome trace

Usage: python scripts/record_cpu_fixture.py [--out tests/fixtures/cpu_mlp_train]
"""

from __future__ import annotations

import argparse
import gzip
import logging
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

MARKER = "inductor_bench::iteration"
ITERATIONS = 5
WARMUP = 2  # unprofiled calls first: the first call pays one-off allocations
DEFAULT_OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "cpu_mlp_train"


class ModuleCollector(logging.Handler):
    """Collects the paths of compiled modules from ``inductor_output_code`` records."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.paths: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        meta = getattr(record, "metadata", None)
        if not isinstance(meta, dict) or "inductor_output_code" not in meta:
            return
        info = meta["inductor_output_code"] or {}
        path = info.get("file_path") or info.get("filename")
        if path and path not in self.paths:
            self.paths.append(path)


def compile_mlp(collector: ModuleCollector) -> None:
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 128),
        torch.nn.GELU(),
        torch.nn.LayerNorm(128),
        torch.nn.Linear(128, 16),
    )
    x = torch.randn(32, 64)
    trace_log = logging.getLogger("torch.__trace")
    trace_log.setLevel(logging.DEBUG)
    trace_log.propagate = False
    trace_log.addHandler(collector)
    try:
        compiled = torch.compile(model)
        loss = compiled(x).relu().sum()
        loss.backward()
    finally:
        trace_log.removeHandler(collector)


def load_module(path: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"ib_fixture_{Path(path).stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def profile_module(path: str, trace_path: Path) -> None:
    from torch.profiler import ProfilerActivity, profile, record_function

    from inductor_bench.runner.harness_inputs import harness

    run = harness(load_module(path))  # get_args(), or before torch 2.11 the harness's closure
    for _ in range(WARMUP):
        run()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        run()  # unmarked: the profiler's own start-up cost lands here
        for _ in range(ITERATIONS):
            with record_function(MARKER):
                run()
    plain = trace_path.with_suffix("")  # trace.json
    prof.export_chrome_trace(str(plain))
    with open(plain, "rb") as src, gzip.open(trace_path, "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    plain.unlink()


def graph_dir_name(source: str) -> str:
    m = re.search(r"^# AOT ID: \['(\d+)_(\w+)'\]", source, re.MULTILINE)
    if not m:
        raise SystemExit("compiled module without an AOT ID line")
    return f"{m.group(1)}-{m.group(2)}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    opts = ap.parse_args()
    cache = tempfile.mkdtemp(prefix="ib-fixture-cache-")
    # Inductor reads these when it is imported: set them before torch is.
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
    os.environ["TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE"] = "1"
    # One intra-op thread: with two cores shared by other work, OpenMP barriers turn
    # microsecond kernels into scheduler quanta.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    collector = ModuleCollector()
    compile_mlp(collector)
    if not collector.paths:
        print("no compiled module was captured", file=sys.stderr)
        return 1
    for path in collector.paths:
        source = Path(path).read_text()
        gdir = opts.out / graph_dir_name(source)
        gdir.mkdir(parents=True, exist_ok=True)
        (gdir / "module.py").write_text(source)
        profile_module(path, gdir / "trace.json.gz")
        print(f"{gdir}: {(gdir / 'trace.json.gz').stat().st_size} bytes of trace")
    shutil.rmtree(cache, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
