"""report and analyze end a write that failed as every other command does
(``commands/exit_status.failure_first``): Ctrl-C as --json or --html is written exits 130 with
the line of the others ("interrupted as the report was written"; it was a bare "interrupted"),
a full disk on --html still leaves the text report on stdout (exit 74), and a closed stdout is
one line (exit 74). The run is the recorded cpu_mlp_train_quiet breakdown, the trace
tests/fixtures/hta's alexnet one; the full disk is a rename that raises ENOSPC, the stop a
rename that raises KeyboardInterrupt."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from .conftest import FIXTURES, ROOT
from .test_exit_precedence import NO_SPACE, refused  # noqa: F401  (refused: the fixture)
from .test_output_paths_first import RESULTS, _run

RUN = RESULTS / "cpu_mlp_train_quiet"
TRACE = FIXTURES / "hta" / "critical_path_alexnet_benchmark_result_2869224_1695835535_trace.json.gz"
STOPPED = "inductor-bench: error: interrupted as the report was written"


@pytest.mark.parametrize("command", [["report", str(RUN)], ["analyze", str(TRACE)]], ids=["report", "analyze"])
def test_ctrl_c_as_the_page_is_written_exits_130_as_every_command_says_it(capsys, tmp_path, refused,  # noqa: F811
                                                                             command):
    refused["as"] = KeyboardInterrupt()
    page = tmp_path / "gate.html"
    code, _, err = _run(capsys, *command, "--html", str(page))
    assert (code, err.splitlines()[-1]) == (130, STOPPED)
    assert not page.exists() and not list(tmp_path.glob("*gate.html*"))


def test_ctrl_c_as_analyzes_json_is_written_exits_130_as_every_command_says_it(capsys, tmp_path,
                                                                               refused):  # noqa: F811
    refused["as"] = KeyboardInterrupt()
    out = tmp_path / "gate.json"
    code, stdout, err = _run(capsys, "analyze", str(TRACE), "--json", str(out))
    assert (code, stdout, err) == (130, "", STOPPED + "\n")
    assert not out.exists() and not list(tmp_path.glob("*gate.json*"))


@pytest.mark.parametrize("command,title", [(["report", str(RUN)], "inductor-bench breakdown: mlp\n"),
                                           (["analyze", str(TRACE)], f"inductor-bench analyze: {TRACE.name}\n")],
                         ids=["report", "analyze"])
def test_a_full_disk_on_the_page_after_the_text_exits_74_the_text_on_stdout(capsys, tmp_path, refused,  # noqa: F811
                                                                            command, title):
    page = tmp_path / "gate.html"
    code, stdout, err = _run(capsys, *command, "--html", str(page))
    _, text, _ = _run(capsys, *command)
    assert (code, err.splitlines()[-1]) == (74, f"inductor-bench: error: {page}: cannot write ({NO_SPACE})")
    assert stdout == text and text.startswith(title)


def test_analyze_on_a_closed_stdout_is_one_line_and_exit_74():
    p = subprocess.run([sys.executable, "-m", "inductor_bench.cli", "analyze", str(TRACE)], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=120, preexec_fn=lambda: os.close(1))
    assert (p.returncode, p.stderr) == (74, "inductor-bench: error: stdout: cannot write the report (stdout is closed)\n")
