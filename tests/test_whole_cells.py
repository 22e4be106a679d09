"""The cells of names beside a kernel's (its origin ATen ops, the ops that launched it, a
record_function range's name, the device events a trace left out) whole where a report is grepped
or pasted (markdown, text to a file or a pipe), cut on a terminal, whose width they must fit
(and in HTML). Inputs: the recorded runs of tests/fixtures/results (cpu_mlp_*: torch 2.13 CPU,
2026-12-07), HTA's recorded trace (tests/fixtures/hta/README.md) and hand-built traces
(synthetic)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from inductor_bench.commands import output
from inductor_bench.core.analyze import analyze_file
from inductor_bench.core.analyze_ranks import analyze_ranks
from inductor_bench.render.analyze import render_analyze
from inductor_bench.render.analyze_facts import no_dur_fact, untimed_fact
from inductor_bench.render.doc import for_terminal, new_doc
from inductor_bench.render.ranks import render_ranks

from .conftest import FIXTURES
from .test_whole_kernel_names import LAYER_NORM, RESULTS, _out

# Inductor names a fused kernel after its origin ops: the name less its prefix and its number
LAYER_NORM_OPS = "fused: " + LAYER_NORM.removeprefix("cpp_fused_").removesuffix("_2")  # 74 characters
FBGEMM_OP = "fbgemm::split_embedding_codegen_lookup_rowwise_adagrad_function"  # 63 characters
RANGE = "model.encoder.layers.11.self_attention.scaled_dot_product_attention.forward_pass"  # 80


def test_a_diff_to_a_pipe_shows_a_kernel_s_origin_ops_whole(capsys):
    base, head = str(RESULTS / "cpu_mlp_train_autotune"), str(RESULTS / "cpu_mlp_slow_train")
    text = _out(capsys, ["diff", base, head])
    row = next(ln for ln in text.splitlines() if ln.startswith(f"0-backward  {LAYER_NORM}"))
    assert f"  {LAYER_NORM_OPS}  by origin: was " in row
    assert "native_layer_no…" not in text


def test_a_report_in_markdown_shows_them_whole_and_a_terminal_cuts_them_to_48(capsys, monkeypatch):
    run = str(RESULTS / "cpu_mlp_slow_train")
    md = _out(capsys, ["report", run, "--format", "markdown"])
    assert f"| `{LAYER_NORM}` |       1 | 0.429 |      7.5% | {LAYER_NORM_OPS} |" in md.splitlines()
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)  # capsys's stdout, as a terminal
    monkeypatch.setattr(output.shutil, "get_terminal_size", lambda *a, **k: os.terminal_size((250, 24)))
    text = _out(capsys, ["report", run])
    assert f"{LAYER_NORM_OPS[:47]}…" in text and LAYER_NORM_OPS not in text


def test_analyze_names_the_op_that_launched_a_kernel_whole_but_on_a_terminal():
    r = analyze_file(FIXTURES / "hta" / "negative_queue_length_values_check_rank0.json.gz")
    assert any(FBGEMM_OP in k.launchers[:2] for k in r.kernels)
    top = len(r.kernels)
    row = "     1   0.088        0.1%  "  # its calls, ms and % kernel time, then its launcher
    assert any(ln.endswith(row + FBGEMM_OP) for ln in render_analyze(r, top=top).splitlines())  # a file, a pipe
    assert f"|       1 |  0.088 |       0.1% | {FBGEMM_OP}  " in render_analyze(r, "markdown", top=top)
    with for_terminal(400):
        text = render_analyze(r, top=top)
    assert any(ln.endswith(row + "split_embedding_codegen_lookup_ro…adagrad_function") for ln in text.splitlines())
    assert FBGEMM_OP not in text
    # an autograd node's C++ name, past 100 characters, is shortened everywhere but JSON
    assert "fbgemm::permute_pooled_embs_auto_grad, CppNode<PermutePooledEmbsFunction<…> >" in render_analyze(r, top=top)


def _x(name: str, ts: float, dur: float, cat: str = "user_annotation", tid: int = 1, pid: int = 9, **args) -> dict:
    return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "pid": pid, "tid": tid, "args": args}


def _ranged_trace(path: Path, rank: int) -> Path:
    """Synthetic: two steps, each with one range of an 80-character name around a kernel."""
    events = []
    for i in range(2):
        t = 100 * i
        events += [_x(f"ProfilerStep#{i + 1}", t, 100), _x(RANGE, t + 10, 30 + rank),
                   _x("cudaLaunchKernel", t + 15, 1, cat="cuda_runtime", correlation=i + 1),
                   _x("k", t + 20, 5, cat="kernel", tid=7, pid=0, correlation=i + 1)]
    path.write_text(json.dumps({"traceEvents": events, "distributedInfo": {"rank": rank, "world_size": 2}}))
    return path


def test_a_range_s_name_is_whole_in_a_file_and_in_markdown_cut_to_70_on_a_terminal(tmp_path):
    r = analyze_file(_ranged_trace(tmp_path / "rank_0.json", 0))
    figures = "        1      0.030     30.0%         0.0050"  # calls, wall, % step, launched ms
    launcher = "1  0.0050      100.0%  no op, in "  # the kernel's row: launched in no op, in the range
    assert f"{RANGE}{figures}" in render_analyze(r).splitlines()
    assert render_analyze(r).splitlines()[-1].endswith(launcher + RANGE)
    md = render_analyze(r, "markdown")
    assert f"| `{RANGE}` |       1 |     0.030 |    30.0% |        0.0050 |" in md.splitlines()
    assert f"| {launcher.split('  ')[-1]}{RANGE} |" in md
    with for_terminal(400):
        text = render_analyze(r)
    assert f"{RANGE[:69]}…{figures}" in text.splitlines()
    assert text.splitlines()[-1].endswith(launcher + "model.encoder.layers.11…ion.forward_pass")


def test_a_range_s_name_across_ranks_likewise(tmp_path):
    ranks = analyze_ranks([_ranged_trace(tmp_path / f"rank_{i}.json", i) for i in range(2)], workers=1)
    figures = "        2  rank 0: 0.030     0.030  rank 1: 0.031    +0.001"
    assert f"{RANGE}{figures}" in render_ranks(ranks).splitlines()
    assert (f"| `{RANGE}` |       2 | rank 0: 0.030 |    0.030 | rank 1: 0.031 |   +0.001 |"
            in render_ranks(ranks, "markdown").splitlines())
    with for_terminal(400):
        assert f"{RANGE[:69]}…{figures}" in render_ranks(ranks).splitlines()


def test_the_device_events_left_out_are_named_as_kernels_are():
    cublas = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_kernel__5x_cublas"
    assert untimed_fact(new_doc("text"), {cublas: 2}).endswith(f": {cublas} x2")
    assert no_dur_fact(new_doc("markdown"), {cublas: 1}).endswith(f": {cublas}")
    on_terminal = no_dur_fact(new_doc("text", width=200), {cublas: 1})
    assert on_terminal.endswith(f": {cublas[:46]}…{cublas[-23:]}")  # 70 characters, cut in the middle
