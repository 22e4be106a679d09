"""diff's "Toward the limit" pairs an extern op's calls by where the model made them (the same op,
module and source line, the n-th such call), not by their index in the compiled module: a call
added before them shifts the indices, a hidden size changes the shapes, and the calls still pair."""

from __future__ import annotations

import copy
import json

from .conftest import FIXTURES
from .test_diff_roofline_calls import RUN, call_pct, run_diff, shown_pct


def site(data: dict, graph: str, index: int) -> dict:
    g = next(g for g in data["graphs"] if g["id"] == graph)
    return next(s for s in g["sites"] if s["index"] == index)


def widen_call(data: dict, graph: str, index: int, shapes: list[str], work: float, time: float) -> dict:
    """The run with one extern call at other sizes: its shapes, ``work`` times its bytes and
    FLOPs, ``time`` times its time (its op row's as much more)."""
    out = copy.deepcopy(data)
    g = next(g for g in out["graphs"] if g["id"] == graph)
    s = site(out, graph, index)
    op = next(k for k in g["kernels"] if k["name"] == s["kernel"])
    moved, flops = g["site_counts"][index]
    g["site_counts"][index] = [work * moved, work * flops]
    op["bytes"] += (work - 1) * moved
    op["flops"] += (work - 1) * flops
    op["ms"] += (time - 1) * s["ms"]
    op["samples_ms"] = [o + (time - 1) * x for o, x in zip(op["samples_ms"], s["samples_ms"], strict=True)]
    s.update(shapes=shapes, ms=time * s["ms"], samples_ms=[time * x for x in s["samples_ms"]])
    return out


def add_call_first(data: dict, graph: str, module: str, code: str, time: float = 1.0) -> dict:
    """The run with a new call of the graph's first extern op made first (a copy of its first
    call from another module and line): every extern call's index after it one more; the call
    then first at index 1 takes ``time`` times its time."""
    out = copy.deepcopy(data)
    g = next(g for g in out["graphs"] if g["id"] == graph)
    new = copy.deepcopy(g["sites"][0])
    new["origin"]["lines"][0].update(line=99, code=code)
    new["origin"]["modules"] = [module]
    for s in g["sites"]:
        s["index"] += 1
    g["sites"].insert(0, new)
    g["site_counts"].insert(0, list(g["site_counts"][0]))
    op = next(k for k in g["kernels"] if k["name"] == new["kernel"])
    op["ms"] += new["ms"]
    op["samples_ms"] = [o + x for o, x in zip(op["samples_ms"], new["samples_ms"], strict=True)]
    op["bytes"] += g["site_counts"][0][0]
    op["flops"] += g["site_counts"][0][1]
    moved = g["sites"][1]
    op["ms"] += (time - 1) * moved["ms"]
    op["samples_ms"] = [o + (time - 1) * x for o, x in zip(op["samples_ms"], moved["samples_ms"], strict=True)]
    moved.update(ms=time * moved["ms"], samples_ms=[time * x for x in moved["samples_ms"]])
    return out


def add_call_at(data: dict, graph: str, at: int, shapes: list[str]) -> dict:
    """The run with a new call made from the same place as the graph's extern call ``at``,
    just before it, at other shapes (as much time and work): the indices from ``at`` one more."""
    out = copy.deepcopy(data)
    g = next(g for g in out["graphs"] if g["id"] == graph)
    new = copy.deepcopy(site(out, graph, at))
    new["shapes"] = shapes
    for s in g["sites"]:
        s["index"] += s["index"] >= at
    g["sites"].insert(at, new)
    g["site_counts"].insert(at, list(g["site_counts"][at]))
    op = next(k for k in g["kernels"] if k["name"] == new["kernel"])
    op["ms"] += new["ms"]
    op["samples_ms"] = [o + x for o, x in zip(op["samples_ms"], new["samples_ms"], strict=True)]
    op["bytes"] += g["site_counts"][at][0]
    op["flops"] += g["site_counts"][at][1]
    return out


def rows(out: str) -> dict[str, list[str]]:
    """The moves table's rows by graph and kernel cell: [base %, head %, moved]."""
    table = out.split("Toward the limit")[1].split("\n\n")[0]
    return {line[:74].strip(): line[74:].split()[1:] for line in table.splitlines() if line.startswith("0-")}


def kernel(d: dict, name: str) -> dict:
    return next(k for s in d["sections"] for k in s["kernels"] if k["name"] == name)


def test_a_call_at_other_sizes_pairs_and_says_its_shapes_changed(tmp_path, capsys):
    data = json.loads(RUN.read_text())
    wide = ["1024", "64x512", "512x1024"]
    head_data = widen_call(data, "0-forward", 1, wide, work=2.0, time=1.5)
    head = tmp_path / "head.json"
    head.write_text(json.dumps(head_data))
    before, after = call_pct(data, "0-forward", 1), call_pct(head_data, "0-forward", 1)
    assert round(before, 1) == 160.1 and round(after, 1) == round(before * 2 / 1.5, 1) == 213.4
    out = run_diff(capsys, str(RUN), str(head))
    assert rows(out)["0-forward   aten::addmm #1 (shapes changed)"] == [
        f"!{before:.1f}%", f"!{after:.1f}%", f"+{213.4 - 160.1:.1f}", "pp"]  # both above the ceiling; the move of the figures shown
    assert ("its time is not the same work's: 0-forward aten::addmm #1: (512, 64x512, 512x512) in base, "
            "(1024, 64x512, 512x1024) in head") in out
    d = json.loads(run_diff(capsys, str(RUN), str(head), "--format", "json"))
    k = kernel(d, "aten::addmm")
    call = next(c for c in k["calls"] if c["name"] == "aten::addmm #1")
    assert call["base_shapes"] == ["512", "64x512", "512x512"] and call["head_shapes"] == wide
    assert abs(call["head_pct"] - after) < 1e-9 and abs(call["base_pct"] - before) < 1e-9
    assert call["above_ceiling"] == ["base", "head"]  # as breakdown's JSON flags a kernel's %
    assert abs(call["head_ms"] - 1.5 * site(data, "0-forward", 1)["ms"]) < 1e-12
    assert "base_shapes" not in next(c for c in k["calls"] if c["name"] == "aten::addmm #0")
    assert "calls_unpaired" not in k and "calls_one_side" not in k
    page = run_diff(capsys, str(RUN), str(head), "--format", "html")
    assert "aten::addmm #1</code> (shapes changed)</td>" in page


def test_a_call_added_first_shifts_the_indices_and_the_calls_still_pair(tmp_path, capsys):
    data = json.loads(RUN.read_text())
    # a new mm first in the backward; base's #2 (fc2's, now #3) takes half its time
    head_data = add_call_first(data, "0-backward", "fc4", "return self.fc4(x)")
    head_data = widen_call(head_data, "0-backward", 3, site(head_data, "0-backward", 3)["shapes"], 1.0, 0.5)
    head = tmp_path / "head.json"
    head.write_text(json.dumps(head_data))
    out = run_diff(capsys, str(RUN), str(head))
    got = rows(out)
    for i in range(5):
        b, h = call_pct(data, "0-backward", i), call_pct(head_data, "0-backward", i + 1)
        assert got[f"0-backward  aten::mm #{i + 1} (#{i} in base)"][:2] == [shown_pct(b), shown_pct(h)]
    assert round(call_pct(head_data, "0-backward", 3), 1) == 2 * 41.5  # the move went to fc2's call
    assert "0-backward  aten::mm #0" not in got
    assert ("Calls on one side only (made from a module and source line the other side called the op "
            "from fewer times, or never), not in the table: 0-backward aten::mm #0 in head only") in out
    d = json.loads(run_diff(capsys, str(RUN), str(head), "--format", "json"))
    k = kernel(d, "aten::mm")
    assert [(c["name"], c.get("base_name")) for c in k["calls"]] == [
        (f"aten::mm #{i + 1}", f"aten::mm #{i}") for i in range(5)]
    assert k["calls_one_side"] == "#0 in head only" and "calls_unpaired" not in k


def test_calls_from_other_places_at_other_sizes_stay_the_ops_row(tmp_path, capsys):
    """A call whose line and shapes both changed is no longer known as the same call: where no
    call pairs, the op is one row, and the line says why."""
    data = json.loads(RUN.read_text())
    head_data = widen_call(data, "0-forward", 0, ["1024", "64x256", "256x1024"], 2.0, 2.0)
    for s in next(g for g in head_data["graphs"] if g["id"] == "0-forward")["sites"]:
        s["origin"]["lines"][0]["code"] += "  # edited"
        if s["index"]:
            s["shapes"] = [*s["shapes"][:-1], "1x1"]
    head = tmp_path / "head.json"
    head.write_text(json.dumps(head_data))
    d = json.loads(run_diff(capsys, str(RUN), str(head), "--format", "json"))
    k = kernel(d, "aten::addmm")
    assert "calls" not in k
    assert k["calls_unpaired"] == ("3 call(s) (#0, #1, #2) in base, 3 call(s) (#0, #1, #2) in head, none "
                                   "made from the same module and source line on both sides")


def test_an_edited_line_at_the_same_index_and_sizes_is_the_same_call(tmp_path, capsys):
    data = json.loads(RUN.read_text())
    head_data = copy.deepcopy(data)
    site(head_data, "0-forward", 2)["origin"]["lines"][0]["code"] = "return self.fc3(x).float()"
    head = tmp_path / "head.json"
    head.write_text(json.dumps(head_data))
    d = json.loads(run_diff(capsys, str(RUN), str(head), "--format", "json"))
    k = kernel(d, "aten::addmm")
    assert [c["name"] for c in k["calls"]] == [f"aten::addmm #{i}" for i in range(3)]
    assert abs(k["calls"][2]["head_pct"] - call_pct(data, "0-forward", 2)) < 1e-9


def step_pct(data: dict, gbps: float, tflops: float) -> float:
    """The step's time-weighted % of peak from the raw figures: each extern call and kernel
    against the roofline at its intensity, those latency-bound (under 10 us at the ceilings, and
    under twice that plus their ideal time at their fastest) or above the bandwidth (in cache)
    left out."""
    num = den = 0.0
    for g in data["graphs"]:
        counts = {s["index"]: s for s in g["sites"]}
        items = [(s["ms"], s["samples_ms"], *g["site_counts"][i]) for i, s in counts.items()]
        items += [(k["ms"], k["samples_ms"], k["bytes"], k.get("flops")) for k in g["kernels"]
                  if not k["name"].startswith("aten::")]
        for ms, samples, moved, flops in items:
            roof = min(tflops * 1e12, flops / moved * gbps * 1e9) if flops else gbps * 1e9
            rate = (flops if flops else moved) / (ms / 1e3)
            ideal = max(moved / (gbps * 1e9), (flops or 0) / (tflops * 1e12)) * 1e6
            if ideal < 10 and min(samples) * 1e3 < 2 * (10 + ideal) or not flops and rate > roof:
                continue
            num, den = num + 100 * rate / roof * ms, den + ms
    return num / den


def test_the_step_percent_against_shared_ceilings_says_so(capsys, tmp_path):
    """Two runs of one device that measured its ceilings apart: the summary's % of peak is
    each side's against the higher of each figure, not each against its own ceilings, and
    its label says so. The base was recorded before graphs' calls were counted; its copy here
    is given the quiet run's count (one call a step each, as its harness ran them), so both
    sides weigh their graphs alike and the move is judged (without counts it reads '-')."""
    quiet = FIXTURES / "results" / "cpu_mlp_train_quiet" / "breakdown.json"
    base, head = json.loads(RUN.read_text()), json.loads(quiet.read_text())
    assert all("calls" not in g for g in base["graphs"]) and {g["calls"] for g in head["graphs"]} == {1.0}
    counted = tmp_path / "breakdown.json"
    counted.write_text(json.dumps({**base, "graphs": [{**g, "calls": 1.0} for g in base["graphs"]]}))
    peaks = [d["extras"]["roofline"]["measured"] for d in (base, head)]
    gbps, tflops = max(p["gbps"] for p in peaks), max(p["tflops"]["fp32"] for p in peaks)
    b, h = step_pct(base, gbps, tflops), step_pct(head, gbps, tflops)
    own = step_pct(base, peaks[0]["gbps"], peaks[0]["tflops"]["fp32"])
    assert (round(b, 1), round(h, 1), round(own, 1)) == (14.0, 80.3, 57.7)
    out = run_diff(capsys, str(counted), str(quiet))
    row = next(r for r in out.splitlines() if r.startswith("% of peak"))
    assert row.split() == ["%", "of", "peak", "(time-weighted,", "shared", "ceilings)", f"{b:.1f}%",
                           f"{h:.1f}%", f"+{h - b:.1f}", "pp"]
    uncounted = next(r for r in run_diff(capsys, str(RUN), str(quiet)).splitlines() if r.startswith("% of peak"))
    assert uncounted.split()[6:] == [f"{b:.1f}%", f"{h:.1f}%", "-"]
    d = json.loads(run_diff(capsys, str(RUN), str(quiet), "--format", "json"))
    assert [round(x, 9) for x in d["sections"][0]["roofline_pct"]] == [round(b, 9), round(h, 9)]
    alone = run_diff(capsys, str(RUN), str(RUN))  # one set of ceilings, measured under load
    assert "% of peak (time-weighted; ceilings measured under load: may read high)  " in alone and "shared ceilings" not in alone


def test_a_place_that_makes_one_call_more_pairs_the_calls_most_alike_in_shape(tmp_path, capsys):
    """fc1's backward made one mm (its weight's gradient, 512x64 @ 64x256); with a layer before it
    that needs its input's gradient, it makes that one first (64x512 @ 512x256): base's call
    pairs with the weight's, at its shapes, not with the first call from that line."""
    data = json.loads(RUN.read_text())
    assert site(data, "0-backward", 4)["shapes"] == ["512x64", "64x256"]
    head_data = add_call_at(data, "0-backward", 4, ["64x512", "512x256"])
    head_data = widen_call(head_data, "0-backward", 5, ["512x64", "64x256"], 1.0, 2.0)
    head = tmp_path / "head.json"
    head.write_text(json.dumps(head_data))
    b, h = call_pct(data, "0-backward", 4), call_pct(head_data, "0-backward", 5)
    assert round(h, 1) == round(b / 2, 1) == 72.5
    out = run_diff(capsys, str(RUN), str(head))
    assert rows(out)["0-backward  aten::mm #5 (#4 in base)"] == [f"!{b:.1f}%", f"{h:.1f}%", f"{h - b:.1f}", "pp"]
    assert "0-backward aten::mm #4 in head only" in out
    d = json.loads(run_diff(capsys, str(RUN), str(head), "--format", "json"))
    k = kernel(d, "aten::mm")
    assert [(c["name"], c.get("base_name")) for c in k["calls"]] == [
        *((f"aten::mm #{i}", None) for i in range(4)), ("aten::mm #5", "aten::mm #4")]
    assert k["calls_one_side"] == "#4 in head only"


def test_calls_without_origins_pair_by_their_position_among_the_ops_calls(tmp_path, capsys):
    """Runs without source lines: an op's calls pair by position; head's extra last call (a copy
    of its first, from no known place) has none to pair."""
    data = json.loads(RUN.read_text())
    for g in data["graphs"]:
        for s in g["sites"]:
            s.pop("origin", None)
    head_data = copy.deepcopy(data)
    g = next(g for g in head_data["graphs"] if g["id"] == "0-backward")
    extra = {**copy.deepcopy(g["sites"][0]), "index": 5}
    g["sites"].append(extra)
    g["site_counts"].append(list(g["site_counts"][0]))
    op = next(k for k in g["kernels"] if k["name"] == "aten::mm")
    op["ms"] += extra["ms"]
    op["samples_ms"] = [o + x for o, x in zip(op["samples_ms"], extra["samples_ms"], strict=True)]
    base, head = tmp_path / "base.json", tmp_path / "head.json"
    base.write_text(json.dumps(data))
    head.write_text(json.dumps(head_data))
    d = json.loads(run_diff(capsys, str(base), str(head), "--format", "json"))
    k = kernel(d, "aten::mm")
    assert [(c["name"], c.get("base_name")) for c in k["calls"]] == [(f"aten::mm #{i}", None) for i in range(5)]
    assert [round(c["base_pct"], 9) for c in k["calls"]] == [round(call_pct(data, "0-backward", i), 9)
                                                          for i in range(5)]
    assert k["calls_one_side"] == "#5 in head only"
