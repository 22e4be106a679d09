"""diff's "Toward the limit" moves: an extern op called at several places as each of its calls,
paired by index, as the report shows each; one row with a note where the calls differ."""

from __future__ import annotations

import copy
import json

from inductor_bench import cli

from .conftest import FIXTURES

RUN = FIXTURES / "results" / "cpu_mlp_train_roofline" / "breakdown.json"


def run_diff(capsys, *args: str) -> str:
    try:
        cli.main(["diff", *args])
    except SystemExit as e:
        assert not e.code
    return capsys.readouterr().out


def call_pct(data: dict, graph: str, index: int) -> float:
    """A call's % of its limit from the raw figures: its FLOPs over its time against the
    roofline at its intensity, with the run's measured ceilings."""
    g = next(g for g in data["graphs"] if g["id"] == graph)
    site = next(s for s in g["sites"] if s["index"] == index)
    moved, flops = g["site_counts"][index]
    peak = data["extras"]["roofline"]["measured"]
    roof = min(peak["tflops"]["fp32"], flops / moved * peak["gbps"] / 1e3)
    return 100.0 * flops / (site["ms"] / 1e3) / 1e12 / roof


def shown_pct(pct: float) -> str:
    """A call's % peak cell as diff shows it: every call of this run is compute-bound, so one above
    100% of the compute ceiling is marked ``!`` (held against a ceiling measured low)."""
    return ("!" if pct > 100.0 else "") + f"{pct:.1f}%"


def halve_call(data: dict, graph: str, index: int) -> dict:
    """The run with one extern call taking half its time (its op row's time less as much)."""
    out = copy.deepcopy(data)
    g = next(g for g in out["graphs"] if g["id"] == graph)
    site = next(s for s in g["sites"] if s["index"] == index)
    op = next(k for k in g["kernels"] if k["name"] == site["kernel"])
    op["ms"] -= site["ms"] / 2
    op["samples_ms"] = [o - s / 2 for o, s in zip(op["samples_ms"], site["samples_ms"], strict=True)]
    site["ms"] /= 2
    site["samples_ms"] = [s / 2 for s in site["samples_ms"]]
    return out


def test_each_extern_call_moves_on_its_own(tmp_path, capsys):
    data = json.loads(RUN.read_text())
    head = tmp_path / "head.json"
    head.write_text(json.dumps(halve_call(data, "0-backward", 2)))
    before = call_pct(data, "0-backward", 2)
    assert round(before, 1) == 41.5
    out = run_diff(capsys, str(RUN), str(head))
    rows = {" ".join(line.split()[:3]): line.split()[-5:] for line in out.splitlines()
            if line.startswith("0-")}
    # the call moved twice as near its limit; its neighbours stayed; as the report names them
    assert rows["0-backward aten::mm #2"][1:3] == [f"{before:.1f}%", f"{2 * before:.1f}%"]
    assert rows["0-backward aten::mm #3"][1:3] == [f"{call_pct(data, '0-backward', 3):.1f}%"] * 2
    assert not [line for line in out.splitlines() if line.split()[:2] == ["0-backward", "aten::mm"]
                and not line.split()[2].startswith("#")]  # no row of the op's calls together
    d = json.loads(run_diff(capsys, str(RUN), str(head), "--format", "json"))
    k = next(k for s in d["sections"] for k in s["kernels"] if k["name"] == "aten::mm")
    calls = {c["name"]: c for c in k["calls"]}
    assert list(calls) == [f"aten::mm #{i}" for i in range(5)]
    assert abs(calls["aten::mm #2"]["base_pct"] - before) < 1e-9
    assert abs(calls["aten::mm #2"]["head_pct"] - 2 * before) < 1e-9
    assert abs(calls["aten::mm #2"]["head_ms"] - data["graphs"][1]["sites"][2]["ms"] / 2) < 1e-9
    assert "calls_unpaired" not in k


def test_calls_that_differ_stay_one_row_with_a_note(tmp_path, capsys):
    data = json.loads(RUN.read_text())
    other = copy.deepcopy(data)
    g = next(g for g in other["graphs"] if g["id"] == "0-backward")
    g["sites"] = [s for s in g["sites"] if s["index"] != 4]  # head's sites no longer cover the op
    head = tmp_path / "head.json"
    head.write_text(json.dumps(other))
    out = run_diff(capsys, str(RUN), str(head))
    assert "0-backward  aten::mm   " in out and "aten::mm #2" not in out
    assert ("these are one row, the op's calls together, as their calls differ: 0-backward aten::mm "
            "(5 call(s) (#0, #1, #2, #3, #4) in base, one row in head)") in out
    assert "aten::addmm #1" in out  # the forward's calls, alike on both sides, still paired
    d = json.loads(run_diff(capsys, str(RUN), str(head), "--format", "json"))
    k = next(k for s in d["sections"] for k in s["kernels"] if k["name"] == "aten::mm")
    assert k["calls_unpaired"] == "5 call(s) (#0, #1, #2, #3, #4) in base, one row in head"
    assert "calls" not in k
