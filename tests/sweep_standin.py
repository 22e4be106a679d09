"""A stand-in for a sweep's compare job (``python -m tests.sweep_standin ACTION ... --out DIR``),
to test the executors' mechanism without compiling: it records where it ran, then acts.

ACTION:
  ok FIXTURE          copy FIXTURE (a compare.json) into --out, exit 0
  fail                print compare's kind of error line, exit 3
  hang                sleep until killed (or stopped: a KeyboardInterrupt exits 130, as compare)
  deaf                sleep, ignoring SIGINT, until killed
  vanish              kill itself with SIGKILL before making --out
Options before ACTION: --meet DIR N (write a file in DIR and wait until N jobs wrote one:
proves they ran at once), --started DIR (write this process's pid to DIR/<name>.pid), --hold S
(sleep S seconds first). ``where.json`` in --out: CUDA_VISIBLE_DEVICES, pid, start and end
(time.time()).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

START = time.time()


def _record(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    where = {"CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES"), "pid": os.getpid(),
             "start": START, "end": time.time()}
    (out / "where.json").write_text(json.dumps(where))


def _meet(folder: Path, n: int, name: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("here")
    deadline = time.monotonic() + 60
    while len(list(folder.iterdir())) < n and time.monotonic() < deadline:
        time.sleep(0.05)


def main(argv: list[str]) -> int:
    out = Path(argv[argv.index("--out") + 1])
    args = argv[: argv.index("--out")]
    name = out.name
    if args == ["vanish"]:  # killed before compare claimed its run directory (as torch loads)
        os.kill(os.getpid(), 9)
    out.mkdir(parents=True, exist_ok=True)  # compare claims its run directory first
    while args[0].startswith("--"):
        if args[0] == "--meet":
            _meet(Path(args[1]), int(args[2]), name)
            args = args[3:]
        elif args[0] == "--started":
            Path(args[1]).mkdir(parents=True, exist_ok=True)
            (Path(args[1]) / f"{name}.pid").write_text(str(os.getpid()))
            args = args[2:]
        elif args[0] == "--hold":
            time.sleep(float(args[1]))
            args = args[2:]
    action = args[0]
    print(f"stand-in {action} for {name}", flush=True)
    if action == "fail":
        print("inductor-bench: error: the stand-in model raised", flush=True)
        return 3
    if action == "deaf":  # ignores Ctrl-C
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)
        while True:
            time.sleep(1)
    if action == "hang":  # Ctrl-C as Python takes it, as compare does: exit 130
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            return 130
    _record(out)
    shutil.copy(args[-1], out / "compare.json")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
