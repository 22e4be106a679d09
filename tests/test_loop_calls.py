"""A ``while_loop``'s calls onto the events they made (core/loop_calls.py, core/site_events.py):
a kernel or op called both before a loop and in its body gets, call by call, the time of its
own events, at the line it was called from. Recorded (tests/fixtures/subgraphs/README.md,
torch 2.13.0+cpu, 2026-12-07): a ``torch.cond`` whose branch runs ``(x * 1.01 + 0.5).sin() @ w``
and then a ``while_loop`` whose body runs the same (one C++ kernel, ``cpp_fused_add_gt_mul_sin_1``,
and an ``aten::mm`` in both places), of 3 trips and of none."""

from __future__ import annotations

import gzip
import json

import pytest

from inductor_bench.core.attribution import attribute
from inductor_bench.core.breakdown import analyze_graph
from inductor_bench.core.callsites import Call, parse_calls
from inductor_bench.core.loop_calls import UNPLACED, Branch, Place, order, places, trips, while_loops
from inductor_bench.core.modparse import parse_module
from inductor_bench.core.results import GraphResult
from inductor_bench.core.site_events import match_sites
from inductor_bench.core.trace import load_trace
from inductor_bench.core.views import by_line, units

from .conftest import FIXTURES

HERE = FIXTURES / "subgraphs"
KERNEL = "cpp_fused_add_gt_mul_sin_1"  # the branch's and the body's sin, one code
COND, BODY = "true_graph_0_while_loop_cond_graph_0", "true_graph_0_while_loop_body_graph_0"


def model_line(stem: str, text: str) -> int:
    """The line number of the model's line holding ``text``."""
    lines = (HERE / f"{stem}_model.py").read_text().splitlines()
    (n,) = [i for i, ln in enumerate(lines, 1) if text in ln]
    return n


def analysed(stem: str) -> GraphResult:
    text = (HERE / f"{stem}_inference.py").read_text()
    record = json.loads((HERE / f"{stem}_inference.sources.json").read_text())
    module, trace = parse_module(text), load_trace(HERE / f"{stem}_inference.trace.json.gz")
    g = analyze_graph(trace, module, GraphResult(id="0-inference", role="inference", device="cpu"))
    return attribute(g, trace, module, text, record)


def raw_events(stem: str, name: str) -> list[list[float]]:
    """Durations (µs) of the ``name`` events of each iteration, in the order they ran, read
    straight from the trace file."""
    with gzip.open(HERE / f"{stem}_inference.trace.json.gz") as f:
        evs = [e for e in json.loads(f.read())["traceEvents"] if e.get("ph") == "X"]
    marks = sorted((e for e in evs if e["name"] == "inductor_bench::iteration"), key=lambda e: e["ts"])
    return [[e["dur"] for e in sorted(evs, key=lambda e: e["ts"])
             if e["name"] == name and e.get("cat") == "cpu_op" and m["ts"] <= e["ts"] < m["ts"] + m["dur"]]
            for m in marks]


def mean_ms(per_iteration: list[float], kept: tuple[int, ...]) -> float:
    return sum(per_iteration[i] for i in kept) / len(kept) / 1000


def test_a_loops_calls_are_laid_out_as_its_trips_run_them():
    text = (HERE / "cond_loop_shared_inference.py").read_text()
    calls = parse_calls(text, parse_module(text))
    (loop,) = while_loops(text.splitlines())
    assert (loop.entry, loop.trip) == ((COND,), (BODY, COND))
    where = places(text, calls)
    mine = [where[i] for i, c in enumerate(calls) if c.name == KERNEL]
    assert mine == [Branch("true_graph_0"), Place(loop, BODY)]  # the branch's call, before the loop; the body's
    assert loop.owner == "true_graph_0"  # the same branch: the loop runs where that call does
    laid = [None, Place(loop, BODY)]
    assert order(laid, 3) == [0, 1, 1, 1] and trips(laid, 4) == 3 and trips(laid, 1) == 0
    cond_and_body = [Place(loop, COND), Place(loop, BODY), None]  # a kernel of both, and one after
    assert order(cond_and_body, 2) == [0, 1, 0, 1, 0, 2]
    assert trips(cond_and_body, 6) == 2 and trips(cond_and_body, 5) is None


def test_a_kernel_before_a_loop_and_in_its_body_is_each_calls_time_at_its_line():
    """3 trips: 4 events of the kernel and of aten::mm an iteration, the first the branch's.
    Each call's time is its own events' (independently: the first event, the other three),
    at its own line; they were one row of both lines, not split."""
    stem = "cond_loop_shared"
    g = analysed(stem)
    kept = g.steady().kept
    branch, body = model_line(stem, "# in the branch, before the loop"), model_line(stem, "# the same kernel, each trip")
    assert g.attribution is None
    for name, got in ((KERNEL, [s for s in g.sites if s.kernel == KERNEL]),
                      ("aten::mm", [s for s in g.sites if s.kernel == "aten::mm"])):
        raw = raw_events(stem, name)
        assert {len(d) for d in raw} == {4}
        assert [(s.calls, [ln.line for ln in s.origin.lines]) for s in got] == [(1.0, [branch]), (3.0, [body])]
        assert got[0].ms == pytest.approx(mean_ms([d[0] for d in raw], kept), rel=1e-12)
        assert got[1].ms == pytest.approx(mean_ms([sum(d[1:]) for d in raw], kept), rel=1e-12)
    (line,) = [grp for grp in by_line(units([g], kernel_calls=True)) if [ln.line for ln in grp.lines] == [branch]]
    expected = mean_ms([d[0] for d in raw_events(stem, KERNEL)], kept) + mean_ms(
        [d[0] for d in raw_events(stem, "aten::mm")], kept)
    assert line.ms == pytest.approx(expected, rel=1e-12)


def test_a_kernel_before_a_loop_of_no_trips_names_only_the_line_that_ran():
    """No trips: one event of the kernel and of aten::mm an iteration, the branch's; the
    body's line, which never ran, is named nowhere (it was, in both rows)."""
    stem = "cond_loop_shared_no_trips"
    g = analysed(stem)
    branch = model_line(stem, "# in the branch, before the loop")
    assert g.attribution == ("aten::mm: its 1 call in a while_loop ran none (no trips); "
                             f"{KERNEL}: its 1 call in a while_loop ran none (no trips)")
    for name in (KERNEL, "aten::mm"):
        raw = raw_events(stem, name)
        assert {len(d) for d in raw} == {1}
        (site,) = [s for s in g.sites if s.kernel == name]
        (row,) = [k for k in g.kernels if k.name == name]
        assert (site.calls, [ln.line for ln in site.origin.lines]) == (1.0, [branch])
        assert [ln.line for ln in row.origin.lines] == [branch]
        assert site.ms == row.ms == pytest.approx(mean_ms([d[0] for d in raw], g.steady().kept), rel=1e-12)


SYNTHETIC = """\
def true_graph_0(args):
    k_sin(a, b)
    return (b, )
def inner_graph_0(args):
    k_cos(a, b)
    return (b, )
def while_loop_cond_graph_0(args):
    k_lt(a, b)
    return (b, )
def while_loop_body_graph_0(args):
    k_sin(a, b)
    k_cos(a, b)
    (buf9,) = inner_graph_0(inner_graph_0_args)
    return (b, c)
class Runner:
    def call(self, args):
        if buf0.item():
            buf1 = true_graph_0(true_graph_0_args)
        (buf2_cond_result,) = while_loop_cond_graph_0(while_loop_cond_graph_0_args)
        should_loop = buf2_cond_result
        while should_loop:
            (buf2[0], buf2[1]) = while_loop_body_graph_0(while_loop_body_graph_0_args)
            (buf2_cond_result,) = while_loop_cond_graph_0(while_loop_cond_graph_0_args)
            should_loop = buf2_cond_result
        return (buf2[1], )
"""


def test_a_loops_call_beside_one_that_may_not_run_is_not_split():
    """Synthetic: ``k_sin`` in a ``cond``'s branch (run or not) and in a loop's body, 3 events
    an iteration: the branch and 2 trips, or 3 trips alone; ``k_cos`` in the body and in a
    function the body calls (its runs per trip unknown). Neither is split: any split could put
    time on a call that never ran."""
    lines = SYNTHETIC.splitlines()
    at = {ln.strip(): [i for i, x in enumerate(lines) if x.strip() == ln.strip()] for ln in lines}
    branch, body_sin = at["k_sin(a, b)"]
    body_cos, inner = at["k_cos(a, b)"][1], at["k_cos(a, b)"][0]
    calls = [Call("k_sin", False, -1, [], None, "buf1", branch), Call("k_sin", False, -1, [], None, "buf2", body_sin),
             Call("k_cos", False, -1, [], None, "buf2", body_cos), Call("k_cos", False, -1, [], None, "buf2", inner)]
    (loop,) = while_loops(lines)
    where = places(SYNTHETIC, calls)
    assert where == [Branch("true_graph_0"), Place(loop, "while_loop_body_graph_0"),
                     Place(loop, "while_loop_body_graph_0"), UNPLACED]
    graph = GraphResult(id="0-inference", role="inference", device="cpu", wall_samples_ms=[1.0, 1.0])

    def fields(key, j, i, c):
        return {"kernel": key, "index": -1, "callee": key, "occurrence": j}

    keyed = {"k_sin": [(0, calls[0]), (1, calls[1])], "k_cos": [(2, calls[2]), (3, calls[3])]}
    events = {"k_sin": [[1.0, 2.0, 3.0]] * 2, "k_cos": [[1.0, 2.0]] * 2}
    sites, notes = match_sites(keyed, events, graph, 2, fields, where)
    assert sites == [] and notes == [
        f"{k}: {n} events per iteration for 2 calls (some in subgraph functions, a torch.cond's branches or a "
        "loop's body, which run as the model's values decide), not split by call site" for k, n in (("k_sin", 3),
                                                                                                    ("k_cos", 2))]
