"""A trace saved with a UTF-8 byte order mark before its '{' (an editor's save on Windows; JSON's
readers may skip one, and Python's json.loads of the bytes does) reads as the same trace. Before,
it was refused as "not a kineto chrome trace (the file is not a JSON object)", and a directory
skipped it as no profiler trace."""

from __future__ import annotations

import gzip
import json

from .conftest import FIXTURES
from .test_analyze import run_cli

TRACE = FIXTURES / "hta" / "triton_example_triton_example.json.gz"
BOM = b"\xef\xbb\xbf"


def _same(doc: dict, want: dict) -> bool:
    return {k: v for k, v in doc.items() if k != "trace"} == {k: v for k, v in want.items() if k != "trace"}


def test_a_trace_with_a_byte_order_mark_reads_as_without(tmp_path, capsys):
    raw = gzip.decompress(TRACE.read_bytes())
    assert json.loads(BOM + raw) == json.loads(raw)  # what the stdlib makes of it
    plain = tmp_path / "plain.json"
    plain.write_bytes(raw)
    code, out, err = run_cli(capsys, str(plain), "--format", "json")
    assert code == 0, err
    want = json.loads(out)
    marked = tmp_path / "dir" / "marked.json"
    marked.parent.mkdir()
    marked.write_bytes(BOM + raw)
    zipped = tmp_path / "marked.json.gz"
    zipped.write_bytes(gzip.compress(BOM + raw))
    for given in (marked, zipped, marked.parent):
        code, out, err = run_cli(capsys, str(given), "--format", "json")
        assert code == 0, err
        assert _same(json.loads(out), want), given
