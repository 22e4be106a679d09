"""Forward work a backward graph does again (activation checkpointing, or ops AOTAutograd's
partitioner recomputes rather than saves): the compile worker marks such nodes of the lowering
record (``recomputed``: in the backward graph, tagged as traced for the forward); a kernel or
extern call made only of them is marked "(recomputed)", and the report says how much of each
backward graph they take (core/views.recomputed). On the real run of
tests/fixtures/runs/cpu_checkpoint_train (two MLP blocks under torch.utils.checkpoint),
hand-built origins, and, end to end, a fresh compile of the same model."""

from __future__ import annotations

import json
import shutil

import pytest

from inductor_bench.core.analysis import reanalyze
from inductor_bench.core.attribution import origin_of
from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat
from inductor_bench.core.source_store import RECOMPUTE_MARKED, RECOMPUTED
from inductor_bench.core.sources import Origin, SourceLine, merge
from inductor_bench.core.views import recomputed, recomputes_known, units
from inductor_bench.render.breakdown import render_breakdown
from inductor_bench.render.execution import recomputed_line
from inductor_bench.render.views import where

from .conftest import FIXTURES, torch_minor

RUN = FIXTURES / "runs" / "cpu_checkpoint_train"


def _torch_tags_forward() -> bool:
    """Whether the installed torch's AOTAutograd tags the forward's nodes (from 2.10, read in
    each wheel's ``graph_capture_wrappers.py``)."""
    return torch_minor() >= (2, 10)


def _record(graph: str) -> dict:
    return json.loads((RUN / "graphs" / graph / "sources.json").read_text())


def test_the_record_marks_the_forward_ops_the_backward_runs_again():
    """Each checkpointed block's layer norm, up projection and GELU are recomputed (its down
    projection is not: the backward needs its input, not its output); no gradient op is, and
    nothing in the forward graph is."""
    nodes = _record("0-backward")["nodes"]
    again = {n: r["op"] for n, r in nodes.items() if r.get(RECOMPUTED)}
    ops = sorted(set(again.values()))
    assert [again[n] for n in ("addmm", "addmm_2")] == ["aten.addmm.default"] * 2
    assert {"aten.var_mean.correction", "aten.erf.default", "aten.addmm.default"} <= set(ops)
    assert not [n for n, r in nodes.items() if r["op"] == "aten.mm.default" and r.get(RECOMPUTED)]
    assert not any(r.get(RECOMPUTED) for r in _record("0-forward")["nodes"].values())
    # the backward's record could mark them (its nodes say which are the backward's)
    assert _record("0-backward")[RECOMPUTE_MARKED] is True


def test_the_worker_marks_forward_tagged_nodes_of_a_backward_graph(monkeypatch):
    """The compile worker's marks on hand-built nodes (synthetic), tagged as torch tags them: in
    a backward graph a node traced for the forward is recomputed, whether or not it also carries
    ``autograd_backward`` (torch 2.13 sets it on the recomputed copies, 2.12 does not); a
    backward node and an untagged one (a pass's) are not. A forward graph marks nothing, though
    it holds a node tagged backward (a nested region's forward subgraph does), nor a lowering
    that does not say it is a backward one; below torch 2.10, which tags no forward node, the
    marks are not known."""
    torch = pytest.importorskip("torch")
    from types import SimpleNamespace

    from inductor_bench.runner.sources import _recompute_marks

    metas = [{"partitioner_tag": "is_forward"},  # 2.10 to 2.12's recomputed copy
             {"partitioner_tag": "is_forward", "autograd_backward": True},  # 2.13's
             {"partitioner_tag": "is_backward", "autograd_backward": True}, {}]

    def marks(is_backward, version):
        monkeypatch.setattr(torch, "__version__", version)
        fx_nodes = [SimpleNamespace(name=f"n{i}", meta=m) for i, m in enumerate(metas)]
        graph = SimpleNamespace(module=SimpleNamespace(graph=SimpleNamespace(nodes=fx_nodes)))
        if is_backward is not None:
            graph.is_backward = is_backward
        nodes = {n.name: {} for n in fx_nodes}
        known = _recompute_marks(graph, nodes)[RECOMPUTE_MARKED]
        return known, [n for n, rec in nodes.items() if rec.get(RECOMPUTED)]

    assert marks(True, "2.11.0+cu130") == (True, ["n0", "n1"])
    assert marks(True, "2.9.1") == (False, ["n0", "n1"])
    assert marks(False, "2.13.0") == (False, [])  # a forward graph
    assert marks(None, "2.13.0") == (False, [])


def test_a_saved_run_analysed_again_marks_the_two_recomputed_gemms(tmp_path):
    """Of the backward's calls, the two up projections are made only of recomputed nodes; the
    kernels that fuse the recomputed layer norms and GELUs with gradients are not counted. The
    line's figures are those of the two sites."""
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    result, done = reanalyze(run)
    assert done == ["0-forward", "0-backward"]
    fwd, bwd = result.graphs
    assert bwd.recompute_marked and recomputes_known(result)
    marked = [u for u in units([fwd, bwd]) if u.origin is not None and u.origin.recomputed]
    assert sorted((u.graph.id, u.kernel.name, u.origin.modules[0]) for u in marked) == [
        ("0-backward", "aten::addmm", "blocks.0.up"), ("0-backward", "aten::addmm", "blocks.1.up")]
    (found,) = recomputed(result)
    assert found.graph is bwd and found.count == 2
    assert found.ms == pytest.approx(sum(u.ms for u in marked))
    line = recomputed_line(result)
    assert line.startswith(f"recomputed in the backward: 0-backward 2 calls, {found.ms:.3f} ms (")
    text = render_breakdown(result)
    assert line in text and text.count("ckpt.py:15 (recomputed)") >= 2


def test_an_origin_is_recomputed_only_when_all_its_nodes_are():
    nodes = {"a": {"op": "aten.addmm.default", RECOMPUTED: True, "frame": ["m.py", 3, "f", "x"]},
             "b": {"op": "aten.mm.default", "frame": ["m.py", 3, "f", "x"]}}
    assert origin_of(["a"], nodes).recomputed
    assert not origin_of(["a", "b"], nodes).recomputed
    assert not origin_of(["b"], nodes).recomputed and not origin_of([], nodes).recomputed
    line = SourceLine("m.py", 3, "f", "x")
    again, not_again = Origin(["a"], [line], ["up"], recomputed=True), Origin(["b"], [line], ["up"])
    assert merge([again, again]).recomputed and not merge([again, not_again]).recomputed
    assert where(again) == "up · m.py:3 (recomputed)" and where(not_again) == "up · m.py:3"
    assert Origin.from_dict({"nodes": ["a"], "recomputed": True}).recomputed
    assert not Origin.from_dict({"nodes": ["a"]}).recomputed  # a result saved before the mark


def test_no_line_without_recomputed_work():
    """Synthetic: a training step whose backward recomputes nothing says nothing of it."""
    k = KernelStat("aten::mm", "extern_gemm", 1.0, 2.0, origin=Origin(["mm"], modules=["up"]))
    g = GraphResult("0-backward", "backward", kernels=[k], iterations=1, kernel_ms=2.0,
                    recompute_marked=True)
    r = BreakdownResult("m", graphs=[g])
    assert recomputed(r) == [] and recomputed_line(r) is None
    k.origin = Origin(["addmm"], modules=["up"], recomputed=True)
    (found,) = recomputed(r)
    assert (found.count, found.ms) == (1, 2.0)
    assert "0-backward 1 call, 2.000 ms (100.0% of its kernel time)" in recomputed_line(r)


def _training(again_ms: float | None, marked: bool = True) -> BreakdownResult:
    """Synthetic: a training step of one forward and one backward GEMM, the backward's up
    projection recomputed (``again_ms``) or not (None)."""
    fwd = GraphResult("0-forward", "forward", iterations=1, kernel_ms=2.0, kernels=[
        KernelStat("aten::addmm", "extern_gemm", 1.0, 2.0, origin=Origin(["addmm"], modules=["up"]))])
    ks = [KernelStat("aten::mm", "extern_gemm", 1.0, 3.0, origin=Origin(["mm"], modules=["up"]))]
    if again_ms is not None:
        ks.append(KernelStat("aten::addmm", "extern_gemm", 1.0, again_ms,
                             origin=Origin(["addmm"], modules=["up"], recomputed=True)))
    bwd = GraphResult("0-backward", "backward", iterations=1, kernels=ks, recompute_marked=marked,
                      kernel_ms=sum(k.ms for k in ks))
    return BreakdownResult("m", graphs=[fwd, bwd])


def test_diff_says_how_much_recomputation_a_change_added():
    """Turning on checkpointing (head) adds 2 ms of recomputed work to the backward: the diff's
    summary has a row for it. Against a run whose record could not mark recomputed work (saved
    before the marks, or torch 2.5), its 0 would be unknown, not measured: no row."""
    from inductor_bench.core.diff import diff_results
    from inductor_bench.render.diff import render_diff

    section = diff_results(_training(None), _training(2.0)).sections[0]
    assert section.recomputed_ms == (0.0, pytest.approx(2.0))
    (row,) = [ln for ln in render_diff(diff_results(_training(None), _training(2.0))).splitlines()
              if ln.startswith("recomputed in the backward, ms")]
    assert row.split()[-3:] == ["0.000", "2.000", "+2.000"]
    assert diff_results(_training(None, marked=False), _training(2.0)).sections[0].recomputed_ms is None
    assert diff_results(_training(None), _training(None)).sections[0].recomputed_ms is None
    assert not recomputes_known(_training(None, marked=False)) and recomputed(_training(2.0, marked=False)) == []


@pytest.mark.e2e
@pytest.mark.slow
def test_a_fresh_compile_records_and_reports_the_recomputed_work(tmp_path_factory):
    """`breakdown ckpt_model.py --train --device cpu --fresh-cache` on the installed torch."""
    from inductor_bench.commands.output import write_report
    from inductor_bench.core.workload import WorkloadOptions
    from inductor_bench.runner.pipeline import run_breakdown
    from inductor_bench.runner.settings import RunSettings

    opts = WorkloadOptions(path=str(RUN / "ckpt_model.py"), device="cpu", train=True)
    settings = RunSettings(timeout=600, on_saved=write_report, fresh_cache=True, windows=1, iterations=5)
    result, run_dir, err = run_breakdown(opts, settings, root=tmp_path_factory.mktemp("ckpt"))
    assert err is None
    if not recomputes_known(result):  # AOTAutograd tags the forward's nodes from torch 2.10
        assert not _torch_tags_forward() and recomputed(result) == []
        assert "recomputed in the backward" not in (run_dir / "report.txt").read_text()
        return
    (found,) = recomputed(result)
    assert found.graph.role == "backward" and found.count >= 2
    assert "recomputed in the backward: 0-backward" in (run_dir / "report.txt").read_text()


def test_a_cache_hit_keeps_the_mark():
    """A module from Inductor's cache takes its record from the store, its lines carried over to
    the compile that hit it (core/source_store.carry_over): the mark stays with its node."""
    from inductor_bench.core.source_store import carry_over

    stored = {"nodes": {"addmm": {"op": "aten.addmm.default", RECOMPUTED: True,
                                  "frame": ["/a/m.py", 3, "forward", "x = self.up(x)"]}},
              "ops": [], "dynamo": {}, RECOMPUTE_MARKED: True}
    carried = carry_over(stored, {})
    assert carried["nodes"]["addmm"][RECOMPUTED] is True and carried[RECOMPUTE_MARKED] is True
    assert RECOMPUTE_MARKED not in carry_over({**stored, RECOMPUTE_MARKED: False}, {})
    assert origin_of(["addmm"], carried["nodes"]).recomputed


def test_the_views_say_a_kernel_called_at_several_places_counts_once_per_place():
    """The recorded run calls two C++ kernels at two places each: the module view's kernels
    column counts each call site (the rows' kernels add up to its total), and the note says so."""
    from inductor_bench.core.results import BreakdownResult
    from inductor_bench.render.breakdown import render_breakdown

    r = BreakdownResult.from_dict(json.loads((RUN / "breakdown.json").read_text()))
    places = sum(1 for g in r.measured() for s in g.sites if not s.extern)
    assert places == 4
    text = render_breakdown(r, by="module")
    view = text.split("Time by module")[1].split("\n\n")[1]
    rows = [ln for ln in view.splitlines() if ln.strip()[:1].isdigit()]
    total = next(ln for ln in view.splitlines() if ln.startswith("total"))
    assert sum(int(ln.split()[5]) for ln in rows) == int(total.split()[5]) == 24
    assert ("counts each call where that call comes from: its time there, and one in that group's kernels "
            "(the column's total counts it once per place).") in " ".join(text.split())
