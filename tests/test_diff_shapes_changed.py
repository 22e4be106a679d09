"""diff of an extern op whose calls changed shapes between base and head (a hidden size of 512
made 1024): its own row says ``shapes changed`` in every format, as the moves toward the limit
do, so that its time is not read as a regression of the same work; the gate still counts the
step; and the note of ops that stay one row names only rows of the moves table."""

from __future__ import annotations

import copy
import json

from inductor_bench import cli

from .test_diff_call_pairs import site, widen_call
from .test_diff_roofline_calls import RUN

WIDE = ["1024", "64x512", "512x1024"]


def diff(capsys, *args: str) -> tuple[int, str, str]:
    try:
        cli.main(["diff", *args])
        code = 0
    except SystemExit as e:
        code = e.code or 0
    got = capsys.readouterr()
    return code, got.out, got.err


def widened(data: dict, time: float) -> dict:
    """The run with fc2's forward addmm (call #1) at twice the width, taking ``time`` times
    as long; its graph's wall and busy iterations as much longer, so that the step moves too."""
    out = widen_call(data, "0-forward", 1, WIDE, work=2.0, time=time)
    g, s = out["graphs"][0], site(data, "0-forward", 1)
    for key in ("wall_samples_ms", "busy_samples_ms"):
        g[key] = [w + (time - 1) * x for w, x in zip(g[key], s["samples_ms"], strict=True)]
    return out


def write(tmp_path, name: str, data: dict) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


def kernel_row(out: str, title: str, name: str) -> list[str]:
    """The cells of a kernel table's row (text: cells apart by two spaces or more)."""
    table = out.split(title)[1].split("\n\n")[0]
    line = next(ln for ln in table.splitlines() if f" {name} " in ln)
    return [c.strip() for c in line.split("  ") if c.strip()]


def test_an_op_whose_calls_changed_shapes_says_so_in_its_row_and_the_gate_still_counts(tmp_path, capsys):
    data = json.loads(RUN.read_text())
    base = write(tmp_path, "base.json", data)
    head = write(tmp_path, "head.json", widened(data, 10.0))
    assert site(data, "0-forward", 1)["shapes"] == ["512", "64x512", "512x512"]
    code, out, err = diff(capsys, base, head, "--fail-on-regression", "10")
    # the step did more work: the gate fails, and its line says the work changed
    assert code == 1
    assert err.strip().endswith("(shapes changed, not the same work: 0-forward aten::addmm #1)")
    first = out.splitlines()[0]
    assert first.startswith("REGRESSION above the 10% gate")
    assert "kernels responsible: aten::addmm " in first
    assert "; shapes changed, not the same work: 0-forward aten::addmm #1" in first
    row = kernel_row(out, "Slower kernels, significant", "aten::addmm")
    assert row[0] == "0-forward" and row[-1] == "shapes changed: #1"
    assert "its change is not one of the same work" in out
    md = diff(capsys, base, head, "--format", "markdown")[1]
    assert "| shapes changed: #1 |" in md
    page = diff(capsys, base, head, "--format", "html")[1]
    assert "shapes changed: #1</td>" in page
    d = json.loads(diff(capsys, base, head, "--format", "json")[1])
    k = next(k for s in d["sections"] for k in s["kernels"] if k["name"] == "aten::addmm")
    assert k["status"] == "slower" and k["shapes_changed"] == ["aten::addmm #1"]
    assert all("shapes_changed" not in x for s in d["sections"] for x in s["kernels"] if x is not k)


def test_the_same_slowdown_at_the_same_shapes_says_nothing_of_shapes(tmp_path, capsys):
    data = json.loads(RUN.read_text())
    slow = widened(data, 10.0)
    site(slow, "0-forward", 1)["shapes"] = site(data, "0-forward", 1)["shapes"]
    code, out, err = diff(capsys, write(tmp_path, "b.json", data), write(tmp_path, "h.json", slow),
                          "--fail-on-regression", "10")
    assert code == 1 and "shapes changed" not in out + err
    assert kernel_row(out, "Slower kernels, significant", "aten::addmm")[-1] == "aten.t, aten.addmm"


def test_shapes_changed_without_ceilings_on_either_side(tmp_path, capsys):
    """Runs without ceilings have no moves toward the limit; the op's row still says which of
    its calls changed shapes."""
    data = json.loads(RUN.read_text())
    head_data = widened(data, 10.0)
    for d in (data, head_data):
        d["extras"].pop("roofline")
    d = json.loads(diff(capsys, write(tmp_path, "b.json", data), write(tmp_path, "h.json", head_data),
                        "--format", "json")[1])
    k = next(k for s in d["sections"] for k in s["kernels"] if k["name"] == "aten::addmm")
    assert k["shapes_changed"] == ["aten::addmm #1"] and "calls" not in k and "base_pct" not in k


def test_an_op_of_one_row_in_cache_is_not_named_as_a_row_of_the_moves_table(tmp_path, capsys):
    """The backward's mm stays one row (head lost the site of call #4) and head's mm is served
    from a cache (three times the DRAM ceiling): it is not in the table, so the note of ops that
    are one row does not name it; the line under the table counts it."""
    data = json.loads(RUN.read_text())
    head_data = copy.deepcopy(data)
    g = next(g for g in head_data["graphs"] if g["id"] == "0-backward")
    g["sites"] = [s for s in g["sites"] if s["index"] != 4]
    op = next(k for k in g["kernels"] if k["name"] == "aten::mm")
    gbps = data["extras"]["roofline"]["measured"]["gbps"]
    op["bytes"] = 3 * gbps * 1e9 * op["ms"] / 1e3
    op["flops"] = op["bytes"] / 100  # 0.01 FLOP/byte: memory-bound
    base, head = write(tmp_path, "b.json", data), write(tmp_path, "h.json", head_data)
    d = json.loads(diff(capsys, base, head, "--format", "json")[1])
    k = next(k for s in d["sections"] for k in s["kernels"] if k["name"] == "aten::mm")
    assert round(k["head_pct"], 6) == 300.0 and k["no_distance"] == "in cache in head"
    assert k["calls_unpaired"] == "5 call(s) (#0, #1, #2, #3, #4) in base, one row in head"
    out = diff(capsys, base, head)[1]
    moves = out.split("Toward the limit")[1].split("\n\n")[0]
    assert "aten::mm" not in moves
    assert "these are one row" not in out
    # cpp_fused_sum_2 in cache on both sides, and the mm in head
    assert ("2 kernel(s) with a % of peak on both sides are not moves toward a limit (2 in cache in head, "
            "1 in cache in base)") in out
