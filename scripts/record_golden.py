"""Re-record the golden reports of ``tests/test_golden.py`` from the saved results.

Run it only when a change alters a report on purpose, and commit the new goldens with that
change: the diff of ``tests/fixtures/golden/`` then shows exactly what a user will see
differently. Usage: ``python scripts/record_golden.py`` from the repository root.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.chdir(ROOT)  # the goldens name the results by paths relative to the checkout

from inductor_bench.cli import main  # noqa: E402
from inductor_bench.commands import kernel as kernel_cmd  # noqa: E402
from tests.test_golden import CASES, GOLDEN, KERNEL_CASES, RESULTS, in_checkout  # noqa: E402


def run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(argv)
        except SystemExit as e:
            code = e.code or 0
    return code, in_checkout(out.getvalue())


def main_() -> None:
    responses = json.loads((RESULTS / "synthetic_kernel_responses.json").read_text())
    changed = 0
    for golden, argv, expected_code in CASES:
        if argv[0] == "kernel":
            key = KERNEL_CASES[golden.rsplit(".", 1)[0]][0]
            kernel_cmd.run_kernel_bench = lambda kf, _key=key, **kw: responses[_key]
        code, out = run(argv)
        if code != expected_code:
            raise SystemExit(f"{golden}: exit {code}, expected {expected_code}")
        path = GOLDEN / golden
        if not path.exists() or path.read_text() != out:
            path.write_text(out)
            changed += 1
            print(f"re-recorded {golden}")
    print(f"{changed} of {len(CASES)} golden files changed")


if __name__ == "__main__":
    main_()
