"""A trace file with data after its top-level JSON object (two traces written into one file)
is refused in one line, as Python's json refuses it ("Extra data"), not read as its first
trace alone. Synthetic traces."""

from __future__ import annotations

import gzip
import json

import pytest

from inductor_bench.core.analyze import analyze_file
from inductor_bench.core.errors import TraceError
from inductor_bench.core.trace import load_trace

from .test_analyze import run_cli

ONE = json.dumps({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2, "pid": 0, "tid": 1},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 4, "pid": 1, "tid": 1},
]})
EXTRA = "extra data after its top-level object (two traces written into one file?)"


@pytest.mark.parametrize("tail", [ONE, "\n" + ONE + "\n", " garbage", "{}", "\x00"])
def test_data_after_the_object_is_refused(tmp_path, tail):
    path = tmp_path / "t.json"
    path.write_text(ONE + tail)
    with pytest.raises(json.JSONDecodeError, match="Extra data"):  # as Python's json reads it
        json.loads(path.read_text())
    with pytest.raises(TraceError, match=r"not a valid JSON trace: extra data after its top-level"):
        load_trace(path)
    with pytest.raises(TraceError, match="extra data"):
        analyze_file(path)


def test_two_gzipped_traces_read_in_small_chunks_are_refused(tmp_path):
    """Two gzip members (``cat a.json.gz b.json.gz``), the second past the first chunk."""
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(ONE.encode()) + gzip.compress(ONE.encode()))
    with pytest.raises(TraceError, match="extra data"):
        load_trace(path, chunk_chars=16)


def test_whitespace_after_the_object_is_read(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(ONE + " \n\t\r\n")
    assert [e.name for e in load_trace(path).events] == ["k", "aten::mm"]


def test_the_command_says_so_in_one_line(tmp_path, capsys):
    path = tmp_path / "t.json"
    path.write_text(ONE + ONE)
    code, out, err = run_cli(capsys, str(path))
    assert code == 2 and out == ""
    assert err == f"inductor-bench: error: {path}: not a valid JSON trace: {EXTRA}\n"
