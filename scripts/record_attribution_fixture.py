"""Record a source-attribution fixture (``tests/fixtures/attribution/<name>/``) from a breakdown
run directory: for each graph, its ``module.py`` and ``sources.json`` copied unchanged, and a
trace of N iterations in the profiling worker's markers.

The trace is taken here rather than by the profiling worker so that torch versions whose
compiled modules have no ``get_args()`` (2.5: the harness builds its arguments inside
``benchmark_compiled_module``) can be recorded too: the harness is run with
``print_performance`` replaced by a function that keeps the callable it is given.

Usage (with the torch to record): ``python scripts/record_attribution_fixture.py RUN_DIR OUT_DIR [N]``
"""

from __future__ import annotations

import gzip
import importlib.util
import shutil
import sys
from pathlib import Path

MARKER = "inductor_bench::iteration"


def harness(module_path: Path):
    """A no-argument callable running the module's ``call()`` once on its harness's inputs."""
    spec = importlib.util.spec_from_file_location("recorded_module", module_path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if hasattr(mod, "get_args"):
        args = mod.get_args()
        return lambda: mod.call(list(args))
    import torch._inductor.utils as utils

    kept = []
    original = utils.print_performance
    utils.print_performance = lambda fn, *a, **kw: kept.append(fn)
    try:
        mod.benchmark_compiled_module()
    finally:
        utils.print_performance = original
    return kept[0]


def main(run_dir: Path, out: Path, iterations: int) -> None:
    from torch.profiler import ProfilerActivity, profile, record_function

    for gdir in sorted((run_dir / "graphs").iterdir()):
        dst = out / gdir.name
        dst.mkdir(parents=True, exist_ok=True)
        for name in ("module.py", "sources.json"):
            shutil.copyfile(gdir / name, dst / name)
        fn = harness(gdir / "module.py")
        for _ in range(3):
            fn()
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(iterations):
                with record_function(MARKER):
                    fn()
        raw = dst / "trace.json"
        prof.export_chrome_trace(str(raw))
        with open(raw, "rb") as src, gzip.open(dst / "trace.json.gz", "wb") as f:
            shutil.copyfileobj(src, f)
        raw.unlink()
        print(f"{dst}: {iterations} iterations")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 5)
