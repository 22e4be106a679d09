"""``diff`` and ``report`` in markdown, as pasted into a pull request: names holding ``|``,
``<``, ``_`` keep every table whole and read as written, paths are code spans, and no HTML
but what GitHub renders; on a recorded run whose names were made awkward in a copy."""

from __future__ import annotations

import json
import re

from inductor_bench.cli import main

from .conftest import FIXTURES

RUN = FIXTURES / "results" / "cpu_mlp_train_quiet" / "breakdown.json"
ODD = "cpp_fused_a|b<x>_1"  # was cpp_fused_gelu_1
ALLOWED_TAGS = {"details", "/details", "summary", "/summary", "sub", "/sub", "br"}


def _cli(capsys, *argv: str) -> tuple[int, str]:
    code = 0
    try:
        main(list(argv))
    except SystemExit as e:
        code = int(e.code or 0)
    return code, capsys.readouterr().out


def _runs(tmp_path):
    """Base and head: the recorded run, its model and one kernel renamed; head's kernel twice
    as slow in every iteration."""
    for side, scale in (("base", 1.0), ("head", 2.0)):
        d = json.loads(RUN.read_text())
        d["model"] = "my|model_<x>__init__"
        k = next(k for g in d["graphs"] for k in g["kernels"] if k["name"] == "cpp_fused_gelu_1")
        k["name"], k["samples_ms"] = ODD, [x * scale for x in k["samples_ms"]]
        (tmp_path / side).mkdir()
        (tmp_path / side / "breakdown.json").write_text(json.dumps(d))
    return tmp_path / "base", tmp_path / "head"


def _cells(line: str) -> list[str]:
    """A table row's cells, split at the pipes not escaped."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def _tables_whole(md: str) -> None:
    """Every row of every table has its header's number of cells; no tag GitHub strips."""
    width = None
    for line in md.splitlines():
        if line.startswith("|"):
            width = width or len(_cells(line))
            assert len(_cells(line)) == width, line
        else:
            width = None
        outside_code = re.sub(r"`[^`]*`", "", line)
        tags = set(re.findall(r"<(/?[a-z]+)", outside_code))
        assert tags <= ALLOWED_TAGS, line


def test_diff_markdown_keeps_tables_whole_and_paths_in_code_spans(tmp_path, capsys, monkeypatch):
    base, head = _runs(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, md = _cli(capsys, "diff", "base", "head", "--format", "markdown")
    assert code == 0
    _tables_whole(md)
    assert md.splitlines()[2] == (
        "`inductor-bench diff` my|model\\_&lt;x>\\_\\_init\\_\\_ on cpu: `base` (base) vs `head` (head)")
    row = next(ln for ln in md.splitlines() if "a\\|b" in ln)
    # the renamed kernel: 0.0217569375 ms (the recorded steady mean) against twice it; its
    # change, the difference of the two figures printed (0.0435 - 0.0218)
    assert _cells(row) == ["0-forward", "`cpp_fused_a\\|b<x>_1`", "C++ pointwise", "0.0218", "0.0435",
                           "+0.0217", "fused: gelu"]


def test_report_markdown_names_its_run_directory_and_traces_as_code(tmp_path, capsys):
    base, _ = _runs(tmp_path)
    code, md = _cli(capsys, "report", str(base), "--format", "markdown")
    assert code == 0
    _tables_whole(md)
    assert md.splitlines()[-2:] == [
        "run directory: `runs/mlp-default-20261204-215507`  ",
        "traces: `runs/mlp-default-20261204-215507/graphs/<graph>/trace.json.gz` (open in https://ui.perfetto.dev)",
    ]
    assert "| `cpp_fused_a\\|b<x>_1` |" in md


def test_a_column_of_marked_numbers_is_right_aligned_in_markdown_as_in_text(capsys):
    """``~33%`` (latency-bound) is a number: its column right-aligns though markdown escapes
    the mark (``\\~33%``)."""
    code, md = _cli(capsys, "report", str(RUN.parent), "--format", "markdown")
    assert code == 0
    lines = md.splitlines()
    at = lines.index("| kernel             |   calls |    ms |   % graph |   % peak | source                  |")
    assert lines[at + 1:at + 3] == [
        "|:-------------------|--------:|------:|----------:|---------:|:------------------------|",
        "| `cpp_fused_gelu_1` |       1 | 0.022 |      3.2% |    \\~33% | (top level) · mlp.py:21 |",
    ]


def test_a_kernel_name_is_code_so_that_its_number_links_no_issue(capsys):
    """``aten::mm #2`` as plain text in a pull request links issue 2; a code span does not."""
    code, md = _cli(capsys, "report", str(RUN.parent), "--format", "markdown")
    assert code == 0
    rows = [_cells(ln) for ln in md.splitlines() if ln.startswith("|") and "aten::mm #2" in ln]
    assert [r[:3] for r in rows] == [
        ["1", "0-backward", "`aten::mm #2`"],  # top kernels
        ["0-backward", "`aten::mm #2`", "0.370"],  # roofline
        ["`aten::mm #2`", "1", "0.370"],  # the graph's own table
    ]
    assert not re.search(r"(^|[\s(|])#\d", re.sub(r"(`+).+?\1", "", md), re.M)


def test_no_recorded_runs_markdown_links_an_issue_or_mentions_a_user(capsys):
    """Outside code spans, no ``#2`` (an issue link) nor ``@name`` (a mention) in the markdown
    report of any recorded run; the warning of a kernel above its ceiling names it as code."""
    outside = {}
    for d in sorted([*(FIXTURES / "results").iterdir(), *(FIXTURES / "runs").iterdir()]):
        if d.is_dir():
            code, md = _cli(capsys, "report", str(d), "--format", "markdown")
            assert code == 0, d
            outside[d.name] = re.sub(r"(`+).+?\1", "", md)
            assert not re.search(r"(^|[\s(|])#\d|(^|\W)@[A-Za-z]", outside[d.name], re.M), d
    _, md = _cli(capsys, "report", str(FIXTURES / "results" / "cpu_mlp_train_roofline"), "--format", "markdown")
    assert ("WARNING: 4 compute-bound kernel(s) ran above the measured compute ceiling (up to 160%: "
            "0-forward `aten::addmm #1`): the ceiling") in md
