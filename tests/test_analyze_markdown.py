"""``analyze`` in markdown, as pasted into a pull request: a step the trace names
(``ProfilerStep#4``) is a code span wherever it is written, as kernel names and paths are in
``diff`` and ``report``, so that no ``#4`` links an issue; the text report is unchanged. The
walls in the step table are recomputed here from the raw JSON of HTA's A100 NCCL trace."""

from __future__ import annotations

import gzip
import json
import re

from .conftest import FIXTURES
from .test_analyze import run_cli
from .test_analyze_left_out import _slow_step_trace

NCCL = FIXTURES / "hta" / "nccl_parser_config_nccl_data.json.gz"
ONE_STEP = FIXTURES / "hta_small" / "event_sync_trace.json.gz"
RANKS = FIXTURES / "ranks"


def _outside_code(md: str) -> str:
    return re.sub(r"(`+).+?\1", "", md)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def _walls_ms(path) -> dict[str, float]:
    """Each ProfilerStep's wall from the raw JSON: its range on the CPU, extended to the end of
    the last kernel, memcpy or memset whose launch (same correlation) it holds."""
    events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    steps = [e for e in events if e.get("ph") == "X" and re.fullmatch(r"ProfilerStep#\d+", e["name"])]
    launch = {e["args"]["correlation"]: e["ts"] for e in events
              if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    device = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    walls = {}
    for s in steps:
        end = s["ts"] + s["dur"]
        for k in device:
            t = launch.get(k["args"].get("correlation"))
            if t is not None and s["ts"] <= t <= s["ts"] + s["dur"]:
                end = max(end, k["ts"] + k["dur"])
        walls[s["name"]] = (end - s["ts"]) / 1e3
    return walls


def test_step_names_are_code_spans_in_markdown_and_plain_in_text(capsys):
    walls = _walls_ms(NCCL)
    assert sorted(walls) == ["ProfilerStep#4", "ProfilerStep#5", "ProfilerStep#6"]
    code, md, _ = run_cli(capsys, str(NCCL), "--format", "markdown")
    assert code == 0
    rows = [_cells(ln) for ln in md.splitlines() if ln.startswith("| `ProfilerStep#")]
    assert [(r[0], r[1], r[2]) for r in rows] == [
        (f"`{name}`", "0", f"{walls[name]:.3f}") for name in sorted(walls)]
    assert [r[2] for r in rows] == ["222.442", "219.727", "224.936"]
    assert not re.search(r"ProfilerStep#\d", _outside_code(md))
    assert not re.search(r"(^|[\s(|])#\d", _outside_code(md), re.M)
    code, text, _ = run_cli(capsys, str(NCCL))
    assert code == 0 and "`" not in text
    assert [ln.split()[:3] for ln in text.splitlines() if ln.startswith("ProfilerStep#")] == [
        [name, "0", f"{walls[name]:.3f}"] for name in sorted(walls)]


def test_the_steps_left_out_and_a_one_step_trace_name_their_step_as_code(tmp_path, capsys):
    """Six steps, ProfilerStep#3 five times slower and the only one to run kernel ``slow``: the
    line under the steps table and the line under the top kernels name it as code; a trace of
    one step names it as code in the headings of its typical figures."""
    code, md, _ = run_cli(capsys, str(_slow_step_trace(tmp_path)), "--format", "markdown")
    assert code == 0
    assert "docs/statistics.md): `ProfilerStep#3`</sub>" in md
    assert "so not in its figures: `slow` (`ProfilerStep#3`)" in md
    assert not re.search(r"ProfilerStep#\d", _outside_code(md))
    code, md, _ = run_cli(capsys, str(ONE_STEP), "--format", "markdown")
    assert code == 0
    assert "### Time by category, device 0 (NVIDIA A100-PG509-200) (`ProfilerStep#100`)" in md
    assert not re.search(r"ProfilerStep#\d", _outside_code(md))


def test_ranks_markdown_names_steps_and_traces_as_code(capsys):
    """The 8-rank set: rank 6 straggles in ProfilerStep#4, rank 3 in ProfilerStep#5 (how the
    set was made, tests/fixtures/ranks/README.md); each rank's trace is a code span."""
    code, md, _ = run_cli(capsys, str(RANKS), "--format", "markdown")
    assert code == 0
    assert f"- rank 0: `{RANKS / 'rank-0.json.gz'}` (device 0, 2 steps)" in md.splitlines()
    stragglers = [_cells(ln)[:2] for ln in md.splitlines() if ln.startswith("| `ProfilerStep#")][:2]
    assert stragglers == [["`ProfilerStep#4`", "rank 6"], ["`ProfilerStep#5`", "rank 3"]]
    assert not re.search(r"ProfilerStep#\d", _outside_code(md))


def test_the_json_names_each_step_as_the_text_table_does(capsys):
    """HTA's NCCL trace: the JSON's steps are named, in order, as the raw JSON's ProfilerStep#
    ranges are and as the text table's first column reads them (docs/analyze.md)."""
    walls = _walls_ms(NCCL)
    code, out, _ = run_cli(capsys, str(NCCL), "--format", "json")
    steps = json.loads(out)["steps"]
    assert code == 0 and [s["name"] for s in steps] == sorted(walls)
    assert [round(s["wall_ms"], 3) for s in steps] == [round(walls[n], 3) for n in sorted(walls)]
    assert set(steps[0]) == {"name", "wall_ms", "devices", "past_recording_ms"}
    assert set(steps[0]["devices"][0]) == {"device", "busy_ms", "kernel_ms", "other_work_ms", "waiting_on_cpu_ms",
                                           "queued_ms", "nothing_launched_ms", "events", "categories"}
    code, text, _ = run_cli(capsys, str(NCCL))
    assert [ln.split()[0] for ln in text.splitlines() if ln.startswith("ProfilerStep#")] == [s["name"] for s in steps]
