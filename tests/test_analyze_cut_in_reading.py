"""A trace cut right after one of its events' own ``}`` ends in a ``}`` as a whole trace does:
it passes the look at its last bytes and is found cut only as it is read. Among several
traces (ranks, one process's cycles, ranks' cycles) it is left out and named as the other cut
ones are (stderr, the report, the JSON's ``cut_short``); alone, or every one so, one line and
exit 2. A ranks' cycles refused for a rank short of a cycle names the traces left out as cut.
The traces are cut here from ``tests/fixtures/ranks`` (synthetic ranks made from a real A100
trace), ``tests/fixtures/cpu_loop`` and ``tests/fixtures/ranks/cpu_gloo_cycles`` (recorded,
torch 2.13.0 CPU), and from synthetic handler cycles (``test_analyze_cycles.handler_file``)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from inductor_bench.core.cut_short import cut_short

from .conftest import FIXTURES
from .test_analyze import run_cli
from .test_analyze_cut_short import CUT_GZIP, CUT_PLAIN, RANKS, _cut_gzip, _step_walls
from .test_analyze_cycles import CYCLE_A, CYCLE_B, EXIT_CYCLE, handler_file

GLOO = FIXTURES / "ranks" / "cpu_gloo_cycles"
RANK_1_SECOND_CYCLE = "vm_12142.1796275478224774524.pt.trace.json.gz"  # rank 1, ProfilerStep#6-#7


def _text(src: Path) -> bytes:
    data = src.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def _cut_after_an_event(src: Path, dst: Path) -> Path:
    """``src``'s JSON cut halfway, right after a ``}`` (gzipped where ``dst`` is): a cut the
    file's last bytes do not show."""
    text = _text(src)
    data = text[: text.rfind(b"}", 0, len(text) // 2) + 1]
    dst.write_bytes(gzip.compress(data) if dst.name.endswith(".gz") else data)
    with pytest.raises(json.JSONDecodeError):
        json.loads(data)
    assert cut_short(dst) is None  # the look at its end passes it
    return dst


@pytest.mark.parametrize("name", ["rank-2.json", "rank-2.json.gz"])
def test_ranks_beside_a_trace_found_cut_as_it_is_read(capsys, tmp_path, name):
    for rank in (0, 1):
        shutil.copy(RANKS / f"rank-{rank}.json.gz", tmp_path)
    cut = _cut_after_an_event(RANKS / "rank-2.json.gz", tmp_path / name)
    code, out, err = run_cli(capsys, str(tmp_path), "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["cut_short"] == {str(cut): CUT_PLAIN}
    assert err == f"inductor-bench: {cut}: left out, {CUT_PLAIN}\n"
    assert [r["rank"] for r in doc["ranks"]] == [0, 1]
    for r in doc["ranks"]:
        walls = _step_walls(RANKS / f"rank-{r['rank']}.json.gz")
        assert {s["step"]: s["wall_ms"] for s in r["steps"]} == pytest.approx(walls, abs=1e-6)
    code, out, _ = run_cli(capsys, str(tmp_path))
    assert code == 0 and f"\n{name}: left out, {CUT_PLAIN}\n" in out and "2 ranks" in out


def test_two_traces_one_found_cut_reads_as_the_other_alone(capsys, tmp_path):
    good = shutil.copy(FIXTURES / "cpu_loop" / "torch-2.13.0.json.gz", tmp_path / "a.json.gz")
    cut = _cut_after_an_event(FIXTURES / "cpu_loop" / "torch-2.5.1.json.gz", tmp_path / "b.json")
    code, out, err = run_cli(capsys, str(tmp_path), "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    _, alone, _ = run_cli(capsys, str(good), "--format", "json")
    assert doc["schema"] == "inductor-bench/analyze" and doc["cut_short"] == {str(cut): CUT_PLAIN}
    assert doc["steps"] == json.loads(alone)["steps"]


def test_cycles_beside_one_found_cut_as_it_is_read(capsys, tmp_path):
    """Synthetic handler cycles: the one cut is left out, the two whole ones analysed, the
    exit's empty one skipped as before."""
    a = handler_file(tmp_path, 7, 20_000, CYCLE_A)
    b = handler_file(tmp_path, 7, 3_000, CYCLE_B)
    exit_cycle = handler_file(tmp_path, 7, 9_000, EXIT_CYCLE)
    whole = handler_file(tmp_path, 7, 40_000, CYCLE_A + [dict(e, pid=7) for e in CYCLE_B])
    cut = _cut_after_an_event(whole, whole)
    code, out, err = run_cli(capsys, str(tmp_path), "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["schema"] == "inductor-bench/analyze-cycles" and [c["trace"] for c in doc["cycles"]] == [str(b), str(a)]
    assert doc["cut_short"] == {str(cut): CUT_PLAIN} and doc["skipped"] == [str(exit_cycle)]
    assert f"{cut}: left out, {CUT_PLAIN}" in err


@pytest.mark.parametrize(("cut", "why"), [(_cut_after_an_event, "as read"), (_cut_gzip, "before")])
def test_ranks_cycles_short_of_a_cut_cycle_name_it(capsys, tmp_path, cut, why):
    """Rank 1's second cycle cut (found as it is read, or before by its gzip stream): the
    refusal for the ranks' uneven cycles names it."""
    for p in GLOO.glob("*.pt.trace.json.gz"):
        if p.name != RANK_1_SECOND_CYCLE:
            shutil.copy(p, tmp_path)
    cut_path = tmp_path / RANK_1_SECOND_CYCLE
    cut(GLOO / RANK_1_SECOND_CYCLE, cut_path)
    code, out, err = run_cli(capsys, str(tmp_path))
    assert code == 2 and not out
    assert err.endswith(
        "inductor-bench: error: the ranks hold different numbers of profiler cycles (rank 0 2, rank 1 1; "
        f"traces with nothing profiled left out, and cut short: {cut_path}): give the traces "
        "of whole cycles, or one cycle's\n")


def test_every_trace_found_cut_or_one_alone_is_one_line_exit_2(capsys, tmp_path):
    for rank in (0, 1):
        _cut_after_an_event(RANKS / f"rank-{rank}.json.gz", tmp_path / f"rank-{rank}.json")
    code, out, err = run_cli(capsys, str(tmp_path))
    assert code == 2 and not out and err.count("\n") == 1 and "Traceback" not in err
    assert "every trace given is cut short or empty" in err and "rank-0.json, " in err
    code, out, err = run_cli(capsys, str(tmp_path / "rank-0.json"))
    assert code == 2 and not out and err == (
        f"inductor-bench: error: {tmp_path / 'rank-0.json'}: not a valid JSON trace: bad or truncated "
        "traceEvents (the file ends inside the list)\n")


def test_markdown_names_the_traces_left_out_as_code(capsys, tmp_path):
    """Names with markdown's own characters (``_``, a backtick) read as they are, in code spans."""
    for rank in (0, 1):
        shutil.copy(RANKS / f"rank-{rank}.json.gz", tmp_path)
    _cut_gzip(RANKS / "rank-2.json.gz", tmp_path / "rank_2_.json.gz")
    _cut_after_an_event(RANKS / "rank-2.json.gz", tmp_path / "rank`3.json")
    (tmp_path / "my_config.json").write_text('{"lr": 0.1}')
    code, out, _ = run_cli(capsys, str(tmp_path), "--format", "markdown")
    assert code == 0
    assert f"\n- `rank_2_.json.gz`: left out, {CUT_GZIP}\n" in out
    assert f"\n- ``rank`3.json``: left out, {CUT_PLAIN}\n" in out
    assert "\n- `my_config.json`: skipped, not a profiler trace (no traceEvents)\n" in out


def test_markdown_names_a_cycle_with_nothing_profiled_as_code(capsys, tmp_path):
    handler_file(tmp_path, 7, 20_000, CYCLE_A)
    handler_file(tmp_path, 7, 3_000, CYCLE_B)
    handler_file(tmp_path, 7, 9_000, EXIT_CYCLE)
    code, out, _ = run_cli(capsys, str(tmp_path), "--format", "markdown")
    assert code == 0 and "\n- `box_7.9000.pt.trace.json`: skipped, nothing profiled in it" in out
