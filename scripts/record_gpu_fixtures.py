"""Record small real CUDA fixtures for the CPU test suite (run on a CUDA machine).

For each example model: `breakdown --train --device cuda --iterations 3`, then copy each
graph's module.py and trace.json.gz (and breakdown.json) into
tests/fixtures/cuda_<model>/, with a README saying where, when and on what they were recorded.

    python scripts/record_gpu_fixtures.py [--models mlp,transformer_block]
"""

from __future__ import annotations

import argparse
import datetime
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"


def record(model: str, dest_root: Path) -> Path:
    with tempfile.TemporaryDirectory(prefix="gpu-fixture-") as tmp:
        run = Path(tmp) / "run"
        cmd = [sys.executable, "-m", "inductor_bench.cli", "breakdown", str(ROOT / "models" / f"{model}.py"),
               "--train", "--device", "cuda", "--iterations", "3", "--out", str(run)]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        result = json.loads((run / "breakdown.json").read_text())
        dest = dest_root / f"cuda_{model}"
        if dest.exists():
            shutil.rmtree(dest)
        for g in result["graphs"]:
            gdir = dest / g["id"]
            gdir.mkdir(parents=True)
            shutil.copyfile(run / g["module"], gdir / "module.py")
            shutil.copyfile(run / g["trace"], gdir / "trace.json.gz")
        shutil.copyfile(run / "breakdown.json", dest / "breakdown.json")
        when = datetime.date.today().isoformat()
        (dest / "README.md").write_text(
            f"# cuda_{model}\n\nRecorded {when} on {result['device_name']} with torch "
            f"{result['versions'].get('torch')}, triton {result['versions'].get('triton')}, by "
            f"`scripts/record_gpu_fixtures.py` (`breakdown models/{model}.py --train --device cuda "
            "--iterations 3`). Real traces and compiled modules, not synthetic.\n"
        )
        return dest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="mlp,transformer_block")
    ap.add_argument("--dest", type=Path, default=FIXTURES)
    a = ap.parse_args()
    for m in a.models.split(","):
        print(record(m.strip(), a.dest))


if __name__ == "__main__":
    main()
