"""Reports on an 80-column terminal (``render/table_fit.py``): the roofline, ``analyze``'s step
tables and ``--autotune-top``'s kernel-by-kernel table fit it, keeping the figures that matter;
titles and progress lines wider than it break at spaces. Checked on recorded runs and traces."""

from __future__ import annotations

import io
import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from inductor_bench.cli import main
from inductor_bench.commands import progress
from inductor_bench.render.doc import new_doc

from .test_table_fit import _columns
from .test_table_fit import _terminal_report as _shown

FIXTURES = Path(__file__).parent / "fixtures"
ROOFLINE = FIXTURES / "results" / "cpu_mlp_train_roofline"


def _table(text: str, first_header: str, last_header: str = "") -> str:
    """The text table whose header line starts with ``first_header`` (and ends with
    ``last_header``), with its notes."""
    return next(b for b in text.split("\n\n")
                if b.startswith(first_header) and b.splitlines()[0].rstrip().endswith(last_header))


def test_the_roofline_fits_80_columns_with_its_figures_and_verdicts(capsys, monkeypatch):
    whole = _shown(capsys, monkeypatch, ["report", str(ROOFLINE)], None)
    assert "memory (in cache: above the DRAM ceiling)" in whole and "memory (in cache)  " not in whole
    shown = _shown(capsys, monkeypatch, ["report", str(ROOFLINE)], 80)
    table = _table(shown, "graph       kernel  ", "bound")
    assert max(len(ln) for ln in table.splitlines()) <= 80
    cols = _columns(table)
    assert list(cols) == ["graph", "kernel", "ms", "GB/s", "TFLOP/s", "% peak", "bound"]
    assert "(counted from, FLOP/B, bytes, FLOPs: left out to fit 80 columns" in table
    # cpp_fused_sum_2: its bytes over its time, against the measured bandwidth
    d = json.loads((ROOFLINE / "breakdown.json").read_text())
    (k,) = [k for g in d["graphs"] if g["id"] == "0-backward" for k in g["kernels"] if k["name"] == "cpp_fused_sum_2"]
    gbps = k["bytes"] / (k["ms"] * 1e-3) / 1e9
    pct = 100 * gbps / d["extras"]["roofline"]["measured"]["gbps"]
    i = cols["kernel"].index("cpp_fused_sum_2")
    assert [cols[c][i] for c in ("ms", "GB/s", "% peak", "bound")] == [
        "0.012", f"{gbps:.3g}", f"{pct:.1f}%", "memory (in cache)"]
    assert f"{pct:.1f}%" == "220.7%"
    assert cols["bound"].count("compute") == 4 and cols["bound"].count("memory") == 4
    # the GEMMs above the low ceiling: "compute (ceiling low: ...)", cut to fit
    assert sum(c.startswith("compute (") for c in cols["bound"]) == 4


STEP_TRACES = {
    "cpu": (FIXTURES / "cpu_loop" / "torch-2.13.0.json.gz",
            ["step", "thread", "wall ms", "busy", "other steps' work", "between ops", "after last op"], "ops ms"),
    "cuda": (FIXTURES / "cuda_h200_stack_loop" / "stack-loop.pt.trace.json.gz",
             ["step", "device", "wall ms", "busy", "other steps' work", "waiting on CPU", "queued", "nothing launched"],
             "kernel ms"),
}


@pytest.mark.parametrize("trace,headers,summed", STEP_TRACES.values(), ids=list(STEP_TRACES))
def test_analyzes_step_table_fits_80_columns_leaving_out_busy_and_kernel_ms(capsys, monkeypatch, trace, headers,
                                                                              summed):
    whole = _columns(_table(_shown(capsys, monkeypatch, ["analyze", str(trace)], None), "step  "))
    table = _table(_shown(capsys, monkeypatch, ["analyze", str(trace)], 80), "step  ")
    assert max(len(ln) for ln in table.splitlines()) <= 80
    cols = _columns(table)
    assert list(cols) == headers
    assert f"(busy ms, {summed}: left out to fit 80 columns" in table
    assert all(cols[h] == whole[h] for h in headers)  # every figure kept whole
    # busy ms and kernel ms read from wall and busy %: one stream, kernel ms = busy ms
    for wall, pct, busy in zip(whole["wall ms"], whole["busy"], whole["busy ms"], strict=True):
        assert abs(float(wall) * float(pct[:-1]) / 100 - float(busy)) <= 0.0006 * float(wall) + 0.0005


def test_the_ranks_tables_fit_80_columns(capsys, monkeypatch):
    shown = _shown(capsys, monkeypatch, ["analyze", str(FIXTURES / "ranks")], 80)
    steps, stragglers = _table(shown, "step            rank"), _table(shown, "step            straggler")
    assert max(len(ln) for t in (steps, stragglers) for ln in t.splitlines()) <= 80
    assert "(comm overlapped, overlap ms, busy ms: left out to fit 80 columns" in steps
    assert list(_columns(stragglers)) == ["step", "straggler", "wall ms", "median rank", "excess ms",
                                          "compute", "exposed comm", "idle"]
    assert _columns(stragglers)["excess ms"][:2] == ["+55.611", "+78.901"]


def test_the_autotune_kernel_table_fits_80_columns_its_headers_never_cut(capsys, monkeypatch):
    run = FIXTURES / "results" / "cpu_mlp_train_autotune"
    table = _table(_shown(capsys, monkeypatch, ["report", str(run)], 80), "graph       default kernel")
    assert max(len(ln) for ln in table.splitlines()) <= 80
    head = table.splitlines()[:2]  # "max-autotune kernel" over two lines, at its space
    assert head[1].split() == ["kernel", "ms", "ms"] and "…" not in "".join(head)
    cols = _columns(table)
    assert list(cols) == ["graph", "default kernel", "max-autotune kernel", "default ms", "max-autotune ms",
                          "verdict"]
    assert cols["default ms"][0] == "0.1984" and cols["verdict"][:3] == ["removed", "added", "added"]
    # the names: their start and their end, each told apart from the others
    assert cols["default kernel"][0] == "cpp_fuse…rd_sum_1"
    assert cols["max-autotune kernel"][1:3] == ["cpp_fuse…ckward_1", "cpp_fuse…rd_sum_2"]


def test_a_header_without_a_space_is_never_cut_its_column_no_narrower():
    rows = [["x" * 40 + str(i), "y" * 40 + str(i)] for i in range(2)]
    doc = new_doc(width=50)
    doc.table(rows, ["first-column-named-at-length", "second"])
    cols = _columns(doc.render())
    assert list(cols) == ["first-column-named-at-length", "second"]
    assert [len(c) for c in cols["first-column-named-at-length"]] == [28, 28]
    assert cols["second"] == ["y" * 10 + "…" + "y" * 8 + str(i) for i in range(2)]  # 50 - 28 - 2


def _summary(text: str) -> str:
    """A diff's summary table, under its mode's ``== default ==``."""
    return next(b for b in text.split("\n\n") if b.startswith("== default ==")).split("\n", 1)[1]


def test_a_diffs_summary_at_80_columns_keeps_figure_and_spread_leaving_out_sample_counts(capsys, monkeypatch):
    base, head = FIXTURES / "results" / "cpu_mlp_train_quiet", FIXTURES / "results" / "cpu_mlp_train_roofline"
    argv = ["diff", str(base), str(head)]
    piped = _columns(_summary(_shown(capsys, monkeypatch, argv, None)))
    table = _summary(_shown(capsys, monkeypatch, argv, 80))
    assert max(len(ln) for ln in table.splitlines()) <= 80
    cols = _columns(table)
    for side, run in (("base", base), ("head", head)):
        d = json.loads((run / "breakdown.json").read_text())
        n = min(len(g["wall_samples_ms"]) - len(g["left_out"]) for g in d["graphs"])  # the steady calls
        wall, kernel = (f"{d['totals'][k]:.3f}" for k in ("wall_ms", "kernel_ms"))
        assert [c.split(" ")[0] for c in cols[side][:2]] == [wall, kernel]
        assert [c + f" (n={n})" for c in cols[side][:2]] == piped[side][:2]  # (n=…) gone whole
    assert cols["base"][:2] == ["1.954 ±2.4%", "1.850 ±2.0%"]
    assert cols["head"][:2] == ["11.414 ±36.0%", "10.523 ±38.6%"]
    assert piped["head"][0] == "11.414 ±36.0% (n=19)"
    assert "(n=…: sample counts left out to fit 80 columns" in table


def test_a_status_cut_keeps_its_word_and_loses_its_end(capsys, monkeypatch):
    argv = ["report", str(FIXTURES / "results" / "synthetic_cuda_breakdown")]
    whole = _shown(capsys, monkeypatch, argv, None)
    shown = _shown(capsys, monkeypatch, argv, 80)
    graphs, tuned = _table(shown, "graph       role"), _table(shown, "graph      kernel", "model time")
    assert max(len(ln) for t in (graphs, tuned) for ln in t.splitlines()) <= 80
    timeout = "timeout: profile worker exceeded --timeout 900s and was killed"
    assert _columns(_table(whole, "graph       role"))["status"][1] == timeout
    assert _columns(graphs)["status"] == ["ok", "timeout: profile…", ""]
    assert _columns(tuned)["verdict"] == ["faster", "failed: kerne…"]


@pytest.mark.parametrize("width,kept", [(74, False), (80, True)])
def test_the_note_under_a_view_explains_its_kernels_column_only_where_shown(capsys, monkeypatch, width, kept):
    argv = ["report", str(FIXTURES / "results" / "attr_net_train"), "--by", "line"]
    assert "kernels = kernels and extern calls" in _shown(capsys, monkeypatch, argv, None)
    shown = _shown(capsys, monkeypatch, argv, width)
    table = _table(shown, "    #  ")
    assert ("kernels" in _columns(table)) is kept
    note = shown.split(table)[1].split("\n\n")[1].replace("\n", " ")
    assert note.startswith("A kernel that fuses operations of several lines")
    assert ("kernels = kernels and extern calls in the group." in note) is kept


@pytest.mark.parametrize("trace,summed", [(t, s) for t, _, s in STEP_TRACES.values()], ids=list(STEP_TRACES))
def test_analyzes_step_notes_leave_out_kernel_ms_with_its_column(capsys, monkeypatch, trace, summed):
    assert f"{summed} sums them" in _shown(capsys, monkeypatch, ["analyze", str(trace)], None)
    shown = _shown(capsys, monkeypatch, ["analyze", str(trace)], 80)
    assert f"(busy ms, {summed}: left out to fit 80 columns" in shown
    assert f"{summed} sums" not in shown.replace("\n", " ")
    assert "(never above wall)." in shown.replace("\n", " ") or "not inside another)." in shown.replace("\n", " ")


def test_a_title_wider_than_the_terminal_breaks_at_a_space_a_file_name_whole(capsys, monkeypatch):
    trace = FIXTURES / "hta" / "critical_path_alexnet_benchmark_result_2869224_1695835535_trace.json.gz"
    piped = _shown(capsys, monkeypatch, ["analyze", str(trace)], None)
    assert piped.splitlines()[:2] == [f"inductor-bench analyze: {trace.name}", "=" * (24 + len(trace.name))]
    shown = _shown(capsys, monkeypatch, ["analyze", str(trace)], 80)
    assert shown.splitlines()[:3] == ["inductor-bench analyze:", trace.name, "=" * len(trace.name)]
    assert max(len(ln) for ln in shown.splitlines()) <= 80


def test_a_progress_line_breaks_at_spaces_on_a_narrow_terminal_and_stays_whole_in_a_log(monkeypatch):
    monkeypatch.setattr(progress.shutil, "get_terminal_size", lambda *a, **k: os.terminal_size((40, 24)))
    msg = "profiling graph 0-inference [1/1], again in fresh process 2"
    line = f"{msg}: 5 x 100 iterations in 2 processes /tmp/a/very/long/path/to/a/run/directory"
    tty = io.StringIO()
    tty.isatty = lambda: True  # type: ignore[method-assign]
    progress.TerminalProgress(tty).note(line)
    lines = tty.getvalue().splitlines()
    assert lines[0] == "profiling graph 0-inference [1/1], again" and lines[-1] == "  /tmp/a/very/long/path/to/a/run/directory"
    assert all(len(ln) <= 40 and ln.startswith("  ") for ln in lines[1:-1]) and len(lines) == 4
    assert " ".join(ln.strip() for ln in lines) == line  # the path whole, on a line of its own
    log = io.StringIO()
    progress.TerminalProgress(log).note(line)
    assert log.getvalue() == line + "\n"



def _err(capsys, argv: list[str]) -> str:
    try:
        main(argv)
    except SystemExit as e:
        assert not e.code
    return capsys.readouterr().err


def test_a_note_on_stderr_breaks_at_spaces_on_a_narrow_terminal(capsys, monkeypatch):
    cmp = str(FIXTURES / "results" / "cpu_mlp_compare")
    note = (f"note: BASE and HEAD are one result ({cmp}): each figure is diffed against itself, so "
            "every change is zero; diff two runs, or time one model twice with compare")
    assert _err(capsys, ["diff", cmp, cmp]) == note + "\n"  # a log keeps it whole
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)  # capsys's stderr, as a terminal
    monkeypatch.setattr(progress.shutil, "get_terminal_size", lambda *a, **k: os.terminal_size((80, 24)))
    err = _err(capsys, ["diff", cmp, cmp]).splitlines()
    assert err == textwrap.wrap(note, 80, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False)
    # a path longer than the line (a deep checkout's) stands alone on its line, whole
    assert len(err) > 1 and all(len(ln) <= 80 or len(ln.split()) == 1 for ln in err)


def test_the_view_by_line_fits_80_columns_its_source_whole_where_it_can(capsys, monkeypatch):
    argv = ["report", str(FIXTURES / "results" / "attr_net_train"), "--by", "line"]
    whole = _columns(_table(_shown(capsys, monkeypatch, argv, None), "    #  "))
    table = _table(_shown(capsys, monkeypatch, argv, 80), "    #  ")
    assert max(len(ln) for ln in table.splitlines()) <= 80
    cols = _columns(table)
    assert list(cols) == ["#", "ms", "% kernel", "kernels", "line", "source"]
    assert "(kernel, fwd ms, bwd ms: left out to fit 80 columns" in table
    # the one long note loses its closing words in parentheses, which a line under the table names
    (long,) = [w for w in whole["source"] if len(w) > 60]
    assert long == "made from no FX node (it copies graph inputs into the layout the kernels use)"
    assert "made from no FX node" in cols["source"]
    note = " ".join(table[table.index("\n(it copies"):].split())  # its own parentheses, not two pairs
    assert note == ("(it copies graph inputs into the layout the kernels use): left out to fit 80 columns; a file, "
                    "a pipe or --format markdown has them")
    assert cols["ms"] == whole["ms"] and cols["line"] == whole["line"]
    assert cols["source"][:5] == ["y = self.conv1(x)", "y = self.conv2(y)", "x = self.stem(x)",
                                  "return self.head(x)", "y = torch.relu(self.bn(y))"]
    assert sum(s != w for s, w in zip(cols["source"], whole["source"], strict=True)) == 1  # the one long note


def test_a_name_shortened_before_is_cut_again_at_its_one_gap(capsys, monkeypatch):
    """A diff shows names of at most 60 characters (``softmax_backward_d...elu_gelu``): cut again
    to fit 80 columns, the cut takes in that gap, one ``…`` in the name, never ``…...``."""
    slow = FIXTURES / "results" / "cpu_mlp_slow_train"
    argv = ["diff", str(FIXTURES / "results" / "cpu_mlp_train_quiet"), str(slow)]
    shown = _shown(capsys, monkeypatch, argv, 80)
    table = next(b for b in shown.split("\n\n") if b.startswith("Added kernels")).split("\n", 1)[1]
    assert max(len(ln) for ln in table.splitlines()) <= 80
    name = "cpp_fused__softmax__softmax_backward_data_add_flip_gelu_gelu_backward_1"
    assert f'"name": "{name}"' in (slow / "breakdown.json").read_text()
    (cell,) = [c for c in _columns(table)["kernel"] if c.startswith("cpp_fused__softmax__so")]
    assert cell == "cpp_fused__softmax__softm…elu_gelu_backward_1"
    head, tail = cell.split("…")
    assert name.startswith(head) and name.endswith(tail) and "..." not in table


def test_the_views_forward_and_backward_columns_go_together(capsys, monkeypatch):
    """At every width where the view by line is too wide for both, ``fwd ms`` and ``bwd ms``
    are left out together (a table with one of them split a step's time in half)."""
    argv = ["report", str(FIXTURES / "results" / "attr_net_train"), "--by", "line"]
    full = _table(_shown(capsys, monkeypatch, argv, None), "    #  ")
    widest = max(len(ln) for ln in full.splitlines())
    seen = set()
    for width in range(81, widest + 1, 3):
        cols = list(_columns(_table(_shown(capsys, monkeypatch, argv, width), "    #  ")))
        seen.add(("fwd ms" in cols, "bwd ms" in cols))
    assert seen == {(True, True), (False, False)}
