"""A script that reads its standard input with ``input()``: a worker has none (it runs in a
session of its own, where a terminal cannot be read), so ``input()`` meets its end as under
``python script.py < /dev/null``. The one error line says so, and where, instead of a bare
``EOFError: EOF when reading a line`` the user never typed."""

from __future__ import annotations

import io
import pickle
import subprocess
import sys

import pytest

from inductor_bench.core import errors
from inductor_bench.core.workload import WorkloadOptions
from inductor_bench.runner.compile_run import COMPILE_WORKER
from inductor_bench.runner.failures import describe
from inductor_bench.runner.worker import run_worker
from inductor_bench.runner.workload import run_model_file

ASKS = "import sys\nprint('starting', file=sys.stderr)\nsteps = int(input('steps? '))\n"
HINT = ("(input() at asks.py:3 read standard input, which inductor-bench gives none, as `< /dev/null` would: "
        "pass what it asks for as an argument after --)")


def test_input_at_the_end_of_no_input_says_why_and_where(tmp_path, monkeypatch):
    script = tmp_path / "asks.py"
    script.write_text(ASKS)
    python = subprocess.run([sys.executable, str(script)], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            timeout=60)
    assert python.stderr.strip().splitlines()[-1] == "EOFError: EOF when reading a line"
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    monkeypatch.setattr(sys, "path", list(sys.path))
    with pytest.raises(EOFError) as err:
        run_model_file(str(script), "__main__")
    assert describe(err.value, "the script", str(script)) == (
        f"the script raised: EOFError: EOF when reading a line {HINT}")


def test_another_eof_error_gets_no_such_hint():
    with pytest.raises(EOFError) as err:
        pickle.loads(b"")
    assert describe(err.value, "the script") == "the script raised: EOFError: Ran out of input"


def test_the_compile_worker_gives_a_script_no_input(tmp_path):
    script = tmp_path / "asks.py"
    script.write_text(ASKS)
    request = {"options": WorkloadOptions(str(script)).to_dict(), "modules_log": str(tmp_path / "modules.jsonl"),
               "log": str(tmp_path / "compile.log")}
    with pytest.raises(errors.WorkloadError) as err:
        run_worker(COMPILE_WORKER, request, timeout=300, log_path=tmp_path / "compile.log")
    assert str(err.value) == (f"the script raised: EOFError: EOF when reading a line {HINT} "
                              f"(log: {tmp_path / 'compile.log'})")
