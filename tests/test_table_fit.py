"""Tables on a terminal narrower than them (``render/table_fit.py``): they fit it, long names
cut in the middle stay distinct, the optional columns go in their order with a line that names
them; a file, a pipe and markdown keep every column and every name whole. Checked on a table
of long Inductor names and on every recorded breakdown (tests/fixtures/runs,
tests/fixtures/results)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from tabulate import tabulate

from inductor_bench.cli import main
from inductor_bench.commands import output
from inductor_bench.commands.output import render_result
from inductor_bench.core.rundir import load_any
from inductor_bench.render.doc import for_terminal, new_doc
from inductor_bench.render.table_fit import distinct_cut
from inductor_bench.render.views import TOP_OPTIONAL

FIXTURES = Path(__file__).parent / "fixtures"
BREAKDOWNS = sorted(p for d in ("runs", "results") for p in (FIXTURES / d).iterdir()
                    if (p / "breakdown.json").exists())

# A ResNet's backward: names alike at both ends, told apart in their middle or their last digit.
STEM = "triton_per_fused__native_batch_norm_legit_functional_{}convolution_backward_native_batch_norm_backward_threshold_backward_{}"
RULE = re.compile(r"-+( +-+)+")  # a text table's rule under its headers
NAMES = [STEM.format("", 0), STEM.format("", 1), STEM.format("add_", 0), STEM.format("add_", 1),
         STEM.format("add_mul_", 0), "triton_poi_fused_relu_2", "aten::convolution_backward #3"]
HEADERS = ["#", "graph", "kernel", "category", "calls", "ms", "% kernel", "max gain", "% peak", "source"]
ALIGN = ("right", "left", "left", "left", "right", "right", "right", "right", "right", "left")


def _rows() -> list[list[str]]:
    return [[str(i), "0-backward", n, "Triton persistent reduction", "1", f"0.{9 - i}12", f"{20 - i}.0%",
             f"{10 - i}.5%", f"{40 + i}%", f"layer{i}.0.bn1, layer{i}.0.conv1 · torchvision/models/resnet.py:92,93"]
            for i, n in enumerate(NAMES, 1)]


def _columns(table: str) -> dict[str, list[str]]:
    """A text table's cells by header, cut where its rule of dashes says (headers on two lines
    joined by a space)."""
    lines = table.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("--"))
    spans, x = [], 0
    for part in lines[at].split("  "):
        if part:
            spans.append((x, x + len(part)))
        x += len(part) + 2
    head = [" ".join(ln[a:b].strip() for ln in lines[:at]).strip() for a, b in spans]
    body = _body(lines[at + 1:])
    return {h: [ln[a:b].strip() for ln in body] for h, (a, b) in zip(head, spans, strict=True)}


def _body(lines: list[str]) -> list[str]:
    """A table's rows: its lines up to the note of the columns it left out."""
    end = next((i for i, ln in enumerate(lines) if ln.startswith("(")), len(lines))
    return lines[:end]


def test_a_cut_keeps_names_apart_that_differ_only_in_their_middle():
    cut = distinct_cut(NAMES, 24)
    assert all(len(c) <= 24 for c in cut)
    assert len(set(cut)) == len(NAMES)
    # the plain middle cut would show the first two (and the next two) alike
    assert NAMES[0][:11] + "…" + NAMES[0][-12:] == NAMES[2][:11] + "…" + NAMES[2][-12:]
    assert distinct_cut(["a" * 30, "a" * 30, "b"], 20) == ["a" * 10 + "…" + "a" * 9] * 2 + ["b"]


def test_at_100_columns_a_kernel_table_fits_its_names_stay_distinct_and_says_what_it_left_out():
    doc = new_doc(width=100)
    doc.table(_rows(), HEADERS, ALIGN, optional=TOP_OPTIONAL)
    out = doc.render()
    assert max(len(ln) for ln in out.splitlines()) <= 100
    cols = _columns(out)
    # "% kernel", "calls" and "#" go (in that order), then "category"; the rest stays
    assert list(cols) == ["graph", "kernel", "ms", "max gain", "% peak", "source"]
    assert "(% kernel, calls, #, category: left out to fit 100 columns" in out
    kernels = cols["kernel"]
    assert len(set(kernels)) == len(NAMES)
    assert kernels[-2:] == ["triton_poi_fused_relu_2", "aten::convolution_backward #3"]  # short names whole
    assert all(k[:7] == n[:7] and k[-2:] == n[-2:] for k, n in zip(kernels, NAMES, strict=True))  # both ends
    assert cols["ms"] == [f"0.{9 - i}12" for i in range(1, 8)]  # numbers never cut


@pytest.mark.parametrize("width", [100, 120])
def test_a_file_and_markdown_keep_every_column_and_name(width):
    rows = _rows()
    doc = new_doc()
    doc.table(rows, HEADERS, ALIGN, optional=TOP_OPTIONAL)
    assert doc.render() == tabulate(rows, HEADERS, "simple", disable_numparse=True, colalign=ALIGN) + "\n"
    md_plain, md_term = new_doc("markdown"), new_doc("markdown", width=width)
    for d in (md_plain, md_term):
        d.table(rows, HEADERS, ALIGN, optional=TOP_OPTIONAL)
    assert md_term.render() == md_plain.render()
    assert all(n.replace("_", "\\_") in md_term.render() or n in md_term.render() for n in NAMES)


def test_a_table_that_fits_is_drawn_as_for_a_file():
    rows = [r[:3] for r in _rows()[5:]]
    doc, plain = new_doc(width=100), new_doc()
    for d in (doc, plain):
        d.table(rows, HEADERS[:3], ALIGN[:3], optional=("#",))
    assert doc.render() == plain.render()


def _kernel_cells(text: str) -> list[list[str]]:
    """Each text table's cells under a header ``kernel`` (on either line of headers on two; the
    line above a one-line header may be a caption), in order."""
    out = []
    for block in text.split("\n\n"):
        lines = block.splitlines()
        rule = next((i for i, ln in enumerate(lines) if i and RULE.fullmatch(ln)), None)
        if rule is None:
            continue
        spans = [m.span() for m in re.finditer(r"-+", lines[rule])]
        for a, b in spans:
            last, above = lines[rule - 1][a:b].strip(), lines[rule - 2][a:b].strip() if rule > 1 else ""
            if (last, above) in (("kernel", ""), ("", "kernel")) or (last == "kernel" and rule == 2):
                out.append([ln[a:b].strip() for ln in _body(lines[rule + 1:])])
    return out


def _widest(text: str) -> int:
    """The widest line that could have been broken: a path longer than the terminal (a run's
    directory in a deep checkout) stands alone on its line, whole, to be copied."""
    return max(len(ln) for ln in text.splitlines() if len(ln.split()) > 1)


@pytest.mark.parametrize("run", BREAKDOWNS, ids=[p.name for p in BREAKDOWNS])
@pytest.mark.parametrize("width", [100, 120])
def test_every_recorded_breakdown_fits_a_terminal_its_kernels_told_apart(run, width):
    loaded = load_any(run)
    result = loaded[0] if isinstance(loaded, tuple) else loaded
    whole = render_result(result)
    with for_terminal(width):
        shown = render_result(result)
    assert _widest(shown) <= width < _widest(whole)
    fitted, full = _kernel_cells(shown), _kernel_cells(whole)
    assert len(fitted) == len(full) > 0
    for cut, names in zip(fitted, full, strict=True):
        assert len(cut) == len(names) and len(set(cut)) == len(set(names))
        assert all(c == n or "…" in c for c, n in zip(cut, names, strict=True))


def test_a_cell_that_leads_with_a_figure_loses_whole_words_from_its_end():
    changes = ["+85.7% [+72.4%..+100.6%]", "+185.0% [+175.4%..+195.1%]", "0.90x [0.86x-0.94x] (of the base)", "new"]
    rows = [[f"category {i} with a name long enough to be cut", "0.7749", "2.208", c, "significant"]
            for i, c in enumerate(changes)]
    headers = ["category", "base ms", "head ms", "change", "verdict"]
    doc = new_doc(width=60)
    doc.table(rows, headers)
    out = doc.render()
    assert max(len(ln) for ln in out.splitlines()) <= 60
    cut = _columns(out)["change"]
    assert cut != changes
    for c, whole in zip(cut, changes, strict=True):  # a figure is never cut through
        assert c == whole or (c.endswith(" …") and whole.startswith(c[:-2]) and whole[len(c) - 2] == " ")
    assert _columns(out)["base ms"] == ["0.7749"] * 4


def test_a_cell_that_leads_with_a_figure_loses_its_interval_before_its_verdict(capsys, monkeypatch):
    """The recorded compare at 120 columns: each speedup keeps its verdict, its interval goes."""
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)  # capsys's stdout, as a terminal
    monkeypatch.setattr(output.shutil, "get_terminal_size", lambda *a, **k: os.terminal_size((120, 24)))
    with pytest.raises(SystemExit) as e:
        main(["report", str(FIXTURES / "results" / "cpu_mlp_compare")])
        raise SystemExit(0)
    assert not e.value.code
    shown = capsys.readouterr().out
    assert max(len(ln) for ln in shown.splitlines()) <= 120
    (row,) = [ln for ln in shown.splitlines() if ln.startswith("speedup vs eager")]
    assert row.split()[4:] == ["0.90x", "…", "(significant)", "0.63x", "…", "(significant)", "-"]
    narrow = new_doc(width=30).table_text([["a", "0.90x [0.86x-0.94x] (significant)"], ["b", "2.5 ms"]], ["", "x"])
    assert "0.90x … (significant)" in narrow
    narrower = new_doc(width=20).table_text([["a", "0.90x [0.86x-0.94x] (significant)"], ["b", "2.5 ms"]], ["", "x"])
    assert "0.90x (sig)" in narrower and "signif" not in narrower.splitlines()[2]  # the verdict's mark


def _terminal_report(capsys, monkeypatch, argv: list[str], width: int | None) -> str:
    """What ``argv`` prints on a terminal ``width`` wide (None: a pipe)."""
    if width is not None:
        monkeypatch.setattr(sys.stdout, "isatty", lambda: True)  # capsys's stdout, as a terminal
        monkeypatch.setattr(output.shutil, "get_terminal_size", lambda *a, **k: os.terminal_size((width, 24)))
    try:
        main(argv)
    except SystemExit as e:
        assert not e.code
    return capsys.readouterr().out


@pytest.mark.parametrize("width", [80, 100])
def test_a_compare_keeps_each_speedups_verdict_at_80_and_100_columns(capsys, monkeypatch, width):
    """The recorded compare's speedups, too wide for their interval and verdict, keep the
    verdict as a mark a line under the table explains; a pipe has the whole cells."""
    argv = ["report", str(FIXTURES / "results" / "cpu_mlp_compare")]
    piped = _terminal_report(capsys, monkeypatch, argv, None)
    shown = _terminal_report(capsys, monkeypatch, argv, width)
    assert max(len(ln) for ln in shown.splitlines()) <= width
    whole = _columns(next(b for b in piped.split("\n\n") if "speedup vs eager" in b))
    assert whole["default"][4] == "0.90x [0.86x-0.94x] (significant)"
    cols = _columns(next(b for b in shown.split("\n\n") if "speedup vs eager" in b))
    assert [c[4:6] for c in cols.values()][1:] == [
        ["1.00x", "1.11x (sig)"], ["0.90x (sig)", "1.00x"], ["0.63x (sig)", "0.70x (sig)"], ["-", "-"]]
    assert (f"(sig = significant: verdicts written short, their intervals left out to fit {width} "
            "columns; a file, a pipe or --format markdown has them whole)") in " ".join(shown.split())
    assert "(sig)" not in piped


def test_each_verdict_has_its_own_mark_named_under_the_table():
    cells = ["1.02x [0.97x-1.07x] (within noise)", "1.31x (too few samples)", "0.90x [0.86x-0.94x] (significant)"]
    doc = new_doc(width=40)
    doc.table([[f"speedup vs mode {i} with a long name", c] for i, c in enumerate(cells)], ["", "x"])
    out = doc.render()
    assert max(len(ln) for ln in out.splitlines()) <= 40
    assert [ln.split("  ")[-1].strip() for ln in out.splitlines()[2:5]] == ["1.02x (noise)", "1.31x (few)", "0.90x (sig)"]
    assert "(sig = significant, noise = within noise, few = too few samples:" in " ".join(out.split())


TRACES = FIXTURES / "hta" / "ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
COMMANDS = {
    "diff": ("diff", str(FIXTURES / "runs" / "cpu_mlp_train_stalled"), str(FIXTURES / "results" / "cpu_mlp_slow_train")),
    "compare": ("report", str(FIXTURES / "results" / "cpu_mlp_compare")),
    "analyze": ("analyze", str(TRACES)),
    "analyze-ranks": ("analyze", str(FIXTURES / "ranks")),
    "analyze-shapes": ("analyze", str(FIXTURES / "cpu_shapes")),
}


@pytest.mark.parametrize("argv", list(COMMANDS.values()), ids=list(COMMANDS))
def test_each_command_fits_a_100_column_terminal_and_a_pipe_keeps_it_whole(capsys, monkeypatch, argv):
    def run() -> str:
        try:
            main(list(argv))
        except SystemExit as e:
            assert not e.code
        return capsys.readouterr().out

    piped = run()
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)  # capsys's stdout, as a terminal
    monkeypatch.setattr(output.shutil, "get_terminal_size", lambda *a, **k: os.terminal_size((100, 24)))
    shown = run()
    assert _widest(shown) <= 100 < _widest(piped)
    assert "left out to fit" not in piped  # a pipe keeps every column


def test_a_sweep_table_fits_100_columns_leaving_out_compile_then_top_category():
    from inductor_bench.core.rundir import load_compare
    from inductor_bench.core.sweep_table import build_table
    from inductor_bench.render.sweep import HEADERS, render_sweep

    from .test_sweep import FIXTURE, _done, _sweep

    table = build_table(_done(_sweep(models=("/m/mlp.py",)), ["mlp"]), {"mlp": load_compare(FIXTURE)})
    whole = render_sweep(table)
    with for_terminal(100):
        shown = render_sweep(table)
    assert max(len(ln) for ln in shown.splitlines() if "  " in ln) <= 100
    cols = _columns(shown[shown.index("model  "):])
    assert list(cols) == [h for h in HEADERS if h not in ("compile", "top category")]
    assert cols["speedup"] == ["1.00x (reference)", "0.90x", "0.63x"]
    assert "(compile, top category: left out to fit 100 columns" in shown
    header = next(ln for ln in whole.splitlines() if ln.startswith("model  "))
    assert all(h in header for h in HEADERS) and "left out" not in whole  # a file keeps them


def test_a_module_path_that_starts_with_a_digit_is_a_name_cut_in_its_middle():
    """An nn.Sequential's modules are ``0``, ``1.ff``: their source cells keep their line."""
    sources = ["0.ff, 1.ff +2 · models/fftnet.py:11,12", "1.norm, 0.ff +1 · models/fftnet.py:11,12",
               "0 (Linear) · built at models/seq.py:6", "0.norm · models/fftnet.py:11"]
    rows = [[f"cpp_fused_{i}", "0.226", s] for i, s in enumerate(sources)]
    doc = new_doc(width=42)
    doc.table(rows, ["kernel", "ms", "source"])
    cut = _columns(doc.render())["source"]
    assert all(len(c) <= 28 for c in cut) and len(set(cut)) == len(sources)
    assert [c[-5:] for c in cut] == [s[-5:] for s in sources]  # the line stays


def test_the_kernel_commands_config_table_fits_80_columns_without_its_marks():
    from inductor_bench.render.kernel import render_kernel

    from .test_kernel_cli import RED, Peak, build_report, canned_response, read_kernel_file

    r = build_report(read_kernel_file(RED), canned_response(True, True), Peak(2000.0, None, "x"),
                     max_autotune=True)
    with for_terminal(80):
        shown = render_kernel(r)
    table = shown[shown.index("config  "):].split("\n\n")[0]
    assert max(len(ln) for ln in table.splitlines()) <= 80
    cols = _columns(table)
    assert list(cols) == ["config", "time", "spread", "GB/s", "% peak BW", "regs", "spills"]
    assert [c.split(", ")[0] for c in cols["config"]] == ["XBLOCK=8", "XBLOCK=1"]
    assert cols["time"] == ["12.00 µs", "20.00 µs"]
    assert "(mark, shared B: left out to fit 80 columns" in table
    assert "fastest, autotuner's pick" in render_kernel(r)  # a file keeps the marks


def test_a_label_loses_its_closing_words_in_parentheses_whole_and_a_line_names_them():
    """A row label cut in its middle read ``all graphs,…ness calls)``: it loses its closing
    words in parentheses whole, and a ``- (not measured)`` cell reads ``-``."""
    rows = [["all graphs, ms (their harness calls)", "5.667 ±7.0%", "19.467 ±2.2%", "-", "not comparable"],
            ["kernel time, ms", "4.948 ±7.7%", "17.872 ±3.0%", "-", "not comparable"],
            ["% of peak (time-weighted)", "- (not measured)", "68.8%", "", ""]]
    headers = ["", "base", "head", "change", "verdict"]
    wide = new_doc(width=None).table_text(rows, headers)
    assert "all graphs, ms (their harness calls)" in wide and "- (not measured)" in wide
    out = new_doc(width=66).table_text(rows, headers)
    assert max(len(ln) for ln in out.splitlines()) <= 66
    cols = _columns(out.split("\n(")[0])
    assert cols[""] == ["all graphs, ms", "kernel time, ms", "% of peak"]
    assert cols["base"] == ["5.667 ±7.0%", "4.948 ±7.7%", "-"]
    note = " ".join(out[out.index("\n(not measured)"):].split())  # each its own parentheses, not two pairs
    assert note == ("(not measured), (their harness calls), (time-weighted): left out to fit 66 columns; a file, "
                    "a pipe or --format markdown has them")
    roomy = new_doc(width=75).table_text(rows, headers)  # only the label that must be cut loses its words
    assert _columns(roomy.split("\n(")[0])["base"][2] == "- (not measured)"
    assert "(not measured)," not in " ".join(roomy.split())


@pytest.mark.parametrize("width", [80, 100])
def test_a_figure_with_words_in_parentheses_loses_them_and_the_table_fits(width):
    """A view's % peak (``73.7% (over 4% of kernel time)``: right-aligned, a figure) reads ``73.7%``
    where the table is too wide with it, a line under the table naming what it left out; the
    recorded fft run's by-line view was 85 columns wide at 80."""
    loaded = load_any(FIXTURES / "runs" / "cpu_fft_inference")
    result = loaded[0] if isinstance(loaded, tuple) else loaded
    heading = "Time by source line"
    whole = render_result(result, by="line").split(heading)[1].split("\n\n")[1]
    with for_terminal(width):
        shown = render_result(result, by="line").split(heading)[1].split("\n\n")[1]
    assert max(len(ln) for ln in shown.splitlines()) <= width < max(len(ln) for ln in whole.splitlines())
    assert _columns(whole)["% peak"] == ["73.7% (over 4% of kernel time)", "68.8%", "64.4%", "", "-",
                                         "68.1% (over 41% of kernel time)"]
    assert _columns(shown)["% peak"] == ["73.7%", "68.8%", "64.4%", "", "-", "68.1%"]
    note = " ".join(shown[shown.index("\n(over 4%"):].split())  # each its own parentheses, not two pairs
    assert note == (f"(over 4% of kernel time), (over 41% of kernel time): left out to fit {width} columns; "
                    "a file, a pipe or --format markdown has them")
    assert "((" not in shown


SIZES = re.compile(r"\d+(?:x\d+)*")  # a number, or a shape's sizes


@pytest.mark.parametrize("width", [80, 100])
def test_a_cut_never_splits_a_number_or_a_shapes_sizes(width):
    """Cut in their middle, the recorded CPU loop's shapes (``128x256 @ 256x1024 (strides 1x256)``)
    show whole sizes or none: ``256x10…`` would read as a size the op never had."""
    from inductor_bench.core.analyze import analyze_file
    from inductor_bench.render.analyze import render_analyze

    r = analyze_file(FIXTURES / "cpu_memory" / "train-torch-2.13.0.json.gz")
    whole = _columns(render_analyze(r).split("by shape: record_shapes")[1].split("\n\n")[1])["shapes"]
    with for_terminal(width):
        shown = _columns(render_analyze(r).split("by shape: record_shapes")[1].split("\n\n")[1])["shapes"]
    assert any("…" in c for c in shown) and len(set(shown)) == len(set(whole))
    for cut, full in zip(shown, whole, strict=True):
        assert set(SIZES.findall(cut)) <= set(SIZES.findall(full)), (cut, full)
    assert distinct_cut(["128x256 @ 256x1024 (strides 1x256)"], 32) == ["128x256 @ …(strides 1x256)"]
    assert distinct_cut(["triton_poi_fused_relu_12"], 12) == ["triton…lu_12"]
