"""A directory of traces one of which was cut short as it was written (a job killed while the
profiler exported: the file ends mid-JSON, or its gzip stream ends early): the others are
analysed and the cut one is named, with why, on stderr, in the report and in its JSON
(``cut_short``); where every trace is cut, one line and exit 2. The traces are
``tests/fixtures/ranks`` (synthetic ranks made from a real A100 trace) and
``tests/fixtures/cpu_loop`` (recorded, torch 2.13.0 and 2.5.1 CPU), cut here."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from .test_analyze import run_cli

FIXTURES = Path(__file__).resolve().parent / "fixtures"
RANKS = FIXTURES / "ranks"
DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
CUT_PLAIN = "cut short (it ends mid-JSON, as when a job is killed while writing it)"
CUT_GZIP = "cut short (its gzip stream ends early, as when a job is killed while writing it)"
EMPTY = "empty (nothing written in it, as when a job is killed before writing it)"


def _step_walls(path: Path) -> dict[str, float]:
    """Each ProfilerStep's wall in ms from the raw JSON: from its start to the later of its end
    and the end of the last device event that starts in it (these synthetic ranks keep no
    launches: a device event belongs to the step it starts in)."""
    events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    steps = [e for e in events if str(e.get("name", "")).startswith("ProfilerStep#")]
    device = [e for e in events if e.get("cat") in DEVICE_CATS]
    walls = {}
    for s in steps:
        start, end = s["ts"], s["ts"] + s["dur"]
        ends = [e["ts"] + e["dur"] for e in device if start <= e["ts"] < end]
        walls[s["name"]] = (max([end, *ends]) - start) / 1000
    return walls


def _cut_plain(src: Path, dst: Path) -> None:
    text = gzip.decompress(src.read_bytes())
    dst.write_bytes(text[: len(text) // 2])


def _cut_gzip(src: Path, dst: Path) -> None:
    data = src.read_bytes()
    dst.write_bytes(data[: len(data) // 2])


@pytest.mark.parametrize(("cut", "name", "why"), [(_cut_plain, "rank-2.json", CUT_PLAIN),
                                                   (_cut_gzip, "rank-2.json.gz", CUT_GZIP)])
def test_ranks_directory_with_a_cut_trace(capsys, tmp_path, cut, name, why):
    for rank in (0, 1):
        shutil.copy(RANKS / f"rank-{rank}.json.gz", tmp_path)
    cut(RANKS / "rank-2.json.gz", tmp_path / name)
    code, out, err = run_cli(capsys, str(tmp_path), "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["cut_short"] == {str(tmp_path / name): why}
    assert f"{tmp_path / name}: left out, {why}" in err
    assert [r["rank"] for r in doc["ranks"]] == [0, 1]
    for r in doc["ranks"]:
        walls = _step_walls(RANKS / f"rank-{r['rank']}.json.gz")
        assert {s["step"]: s["wall_ms"] for s in r["steps"]} == pytest.approx(walls, abs=1e-6)
    for fmt, shown in (("text", name), ("markdown", f"`{name}`"), ("html", f"<code>{name}</code>")):
        code, out, _ = run_cli(capsys, str(tmp_path), "--format", fmt)
        assert code == 0 and f"{shown}: left out, {why}" in out


def test_two_traces_one_cut_reads_as_the_other_alone(capsys, tmp_path):
    """Left with one trace, the report is that trace's, naming the one left out."""
    good = FIXTURES / "cpu_loop" / "torch-2.13.0.json.gz"
    shutil.copy(good, tmp_path / "a.json.gz")
    _cut_gzip(FIXTURES / "cpu_loop" / "torch-2.5.1.json.gz", tmp_path / "b.json.gz")
    code, out, err = run_cli(capsys, str(tmp_path), "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["schema"] == "inductor-bench/analyze"
    assert doc["cut_short"] == {str(tmp_path / "b.json.gz"): CUT_GZIP}
    events = json.loads(gzip.decompress(good.read_bytes()))["traceEvents"]
    steps = sorted((e["ts"], e["name"]) for e in events if str(e.get("name", "")).startswith("ProfilerStep#"))
    assert [s["name"] for s in doc["steps"]] == [name for _, name in steps]
    code, out, _ = run_cli(capsys, str(tmp_path))
    assert code == 0 and f"b.json.gz: left out, {CUT_GZIP}" in out


def test_every_trace_cut_is_one_line_and_exit_2(capsys, tmp_path):
    _cut_plain(RANKS / "rank-0.json.gz", tmp_path / "rank-0.json")
    _cut_gzip(RANKS / "rank-1.json.gz", tmp_path / "rank-1.json.gz")
    code, out, err = run_cli(capsys, str(tmp_path))
    assert code == 2 and not out
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "every trace given is cut short or empty" in err and "rank-0.json" in err and "rank-1.json.gz" in err


@pytest.mark.parametrize("name", ["rank-2.json", "rank-2.json.gz"])
def test_an_empty_trace_is_left_out_as_empty(capsys, tmp_path, name):
    """A file the job never wrote into: empty, not 'not a profiler trace'."""
    for rank in (0, 1):
        shutil.copy(RANKS / f"rank-{rank}.json.gz", tmp_path)
    (tmp_path / name).write_bytes(b"")
    code, out, err = run_cli(capsys, str(tmp_path), "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["cut_short"] == {str(tmp_path / name): EMPTY} and doc["not_traces"] == []
    assert [r["rank"] for r in doc["ranks"]] == [0, 1]


def test_two_empty_traces_are_no_copies(capsys, tmp_path):
    """Two empty files have the same bytes; they are empty, not copies of one trace."""
    (tmp_path / "a.json").write_bytes(b"")
    (tmp_path / "b.json.gz").write_bytes(b"")
    code, out, err = run_cli(capsys, str(tmp_path))
    assert code == 2 and err.count("\n") == 1
    assert "every trace given is cut short or empty" in err and "copy" not in err


def test_whole_traces_are_not_cut(capsys, tmp_path):
    """Every recorded trace, gzipped or not, ends as a whole trace: none is left out."""
    for rank in (0, 1):
        shutil.copy(RANKS / f"rank-{rank}.json.gz", tmp_path)
    (tmp_path / "rank-2.json").write_bytes(gzip.decompress((RANKS / "rank-2.json.gz").read_bytes()))
    code, out, err = run_cli(capsys, str(tmp_path), "--format", "json")
    assert code == 0 and not err
    doc = json.loads(out)
    assert doc["cut_short"] == {} and [r["rank"] for r in doc["ranks"]] == [0, 1, 2]
