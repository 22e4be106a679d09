"""The JSON carries, per graph, why its iterations were left out: the counts the report's steady
note prints, every part by name (the note names three), recounted here from the saved samples."""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter

from inductor_bench.cli import main

from .conftest import ROOT
from .steady_rule import limit_of_repeats

STALLED = ROOT / "tests/fixtures/runs/cpu_mlp_train_stalled"
NOTE = re.compile(r"(\S+) (\d+) of (\d+) \((\d+) over the wall limit [^;)]*"
                  r"(?:; (\d+) more slow by the worker's clock)?"
                  r"(?:; (\d+) more by one kernel or idle gap \(([^)]*)\))?")


def _recount(g: dict) -> dict:
    """The causes written out again from the saved samples: the wall over its limit, else the
    worker's clock over its own, else the part (a kernel, a call of an op called at several
    places, the idle time) furthest over its own median among those over their limit by more
    than 5% of the median wall; a call rather than its op where both are over."""
    walls, n = g["wall_samples_ms"], len(g["wall_samples_ms"])
    wall = {i for i in g["left_out"] if walls[i] > limit_of_repeats(walls)}
    clock_xs = g["clock_samples_ms"]
    clock = {i for i in g["left_out"] if clock_xs[i] > limit_of_repeats(clock_xs)} - wall
    parts: dict[str, tuple[list[float], str | None]] = {k["name"]: (k["samples_ms"], None) for k in g["kernels"]}
    per_op = Counter(s["kernel"] for s in g["sites"])
    for s in g["sites"]:
        if per_op[s["kernel"]] > 1:
            parts[f"{s['kernel']} #{s['index']}"] = (s["samples_ms"], s["kernel"])
    parts["idle"] = ([w - b for w, b in zip(walls, g["busy_samples_ms"], strict=True)], None)
    floor = 0.02 * statistics.median(walls)
    blamed = Counter()
    rest = set(g["left_out"]) - wall - clock
    for i in rest:
        over = {name: xs[i] - statistics.median(xs) for name, (xs, _) in parts.items()
                if len(xs) == n and xs[i] > limit_of_repeats(xs) and xs[i] - statistics.median(xs) > floor}
        top = max(over, key=over.get)
        calls = {c: e for c, e in over.items() if parts[c][1] == top}
        blamed[max(calls, key=calls.get) if calls else top] += 1
    return {"over_wall_limit": len(wall), "slow_by_clock": len(clock), "by_parts": len(rest), "parts": dict(blamed)}


def test_the_json_carries_the_left_out_counts_by_part_the_report_prints(capsys):
    main(["report", str(STALLED)])
    text = " ".join(capsys.readouterr().out.split())
    main(["report", str(STALLED), "--format", "json"])
    graphs = {g["id"]: g for g in json.loads(capsys.readouterr().out)["graphs"]}
    saved = {g["id"]: g for g in json.loads((STALLED / "breakdown.json").read_text())["graphs"]}
    printed = {m[1]: m for m in NOTE.finditer(text)}
    assert sorted(printed) == sorted(graphs) == ["0-backward", "0-forward"]
    for gid, m in printed.items():
        why = graphs[gid]["left_out_why"]
        named = dict((p.rsplit(" ", 1)[0], int(p.rsplit(" ", 1)[1])) for p in m[7].split(", "))
        assert why == _recount(saved[gid])
        assert (why["over_wall_limit"], why["slow_by_clock"], why["by_parts"]) == (
            int(m[4]), int(m[5] or 0), int(m[6] or 0))
        assert why["parts"] == named
        assert why["over_wall_limit"] + why["slow_by_clock"] + why["by_parts"] == int(m[2])
    # the figures as the recorded run's report prints them
    assert graphs["0-forward"]["left_out_why"] == {
        "over_wall_limit": 14, "slow_by_clock": 0, "by_parts": 2, "parts": {"cpp_fused_gelu_1": 1, "aten::addmm #1": 1}}
    assert graphs["0-backward"]["left_out_why"] == {
        "over_wall_limit": 26, "slow_by_clock": 0, "by_parts": 2, "parts": {"aten::mm #0": 1, "aten::mm #2": 1}}
