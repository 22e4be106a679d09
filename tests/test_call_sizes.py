"""A dynamic-shape graph is profiled at the sizes most of its calls ran at, on the values the
first call at those sizes had (``core/call_sizes.py``, ``runner/call_inputs.py``).

A training script whose last batch is smaller than the others recompiles for it with dynamic
shapes, and the new graph then runs every later full batch: compiled (its harness's size) at
8, called at 32 seven times of eight. The module in the unit tests is synthetic, written by hand
in the shape Inductor gives a dynamic module (``s77 = arg1_1``, ``assert_size_stride`` of the
input that depends on it); the recorded ones are ``tests/fixtures/dynamic`` (``record.py``)."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from inductor_bench.core import call_sizes
from inductor_bench.core.results import BreakdownResult, GraphResult
from inductor_bench.render.breakdown import render_breakdown

FIXTURES = Path(__file__).parent / "fixtures" / "dynamic"

# y = x @ w, x of (s77, 8) rows: the harness holds s77 = 3, the size of the compiling call
MODULE = textwrap.dedent('''
    import torch
    from torch._dynamo.testing import rand_strided
    assert_size_stride = torch._C._dynamo.guards.assert_size_stride

    def call(args):
        arg0_1, arg1_1, arg2_1 = args
        args.clear()
        s77 = arg1_1
        assert_size_stride(arg0_1, (8, 4), (4, 1))
        assert_size_stride(arg2_1, (s77, 8), (8, 1))
        return (arg2_1 @ arg0_1,)

    def get_args():
        arg0_1 = rand_strided((8, 4), (4, 1), device='cpu', dtype=torch.float32)
        arg1_1 = 3
        arg2_1 = rand_strided((3, 8), (8, 1), device='cpu', dtype=torch.float32)
        return [arg0_1, arg1_1, arg2_1]
''')


def _counted(*pairs: tuple[int, int]) -> list[dict]:
    return [{"sizes": {"s77": s}, "calls": n} for s, n in pairs]


def test_each_size_symbol_is_found_at_its_inputs_position():
    assert call_sizes.size_positions(MODULE) == {"s77": 1}
    recorded = (FIXTURES / "2.13.0-forward.py").read_text()  # primals_3 of six: s77 = primals_3
    assert call_sizes.size_positions(recorded) == {"s77": 2}
    static = next((Path(__file__).parent / "fixtures" / "cpu_mlp_train").rglob("module.py")).read_text()
    assert call_sizes.size_positions(static) == {}


def test_the_most_called_sizes_ties_to_the_first_met():
    assert call_sizes.most_called(_counted((8, 1), (32, 7))) == {"s77": 32}
    assert call_sizes.most_called(_counted((24, 1), (40, 1), (7, 1))) == {"s77": 24}
    assert call_sizes.most_called([]) is None and call_sizes.most_called(None) is None
    assert call_sizes.calls_at(_counted((8, 1), (32, 7)), {"s77": 32}) == (7, 8)
    assert call_sizes.sizes_key({"s77": 32, "s1": 128}) == "s77-32_s1-128"


def test_the_profile_goes_where_the_calls_went_unless_size_says_otherwise():
    assert call_sizes.chosen(MODULE, {}, _counted((3, 1), (5, 3))) == {"s77": 5}
    assert call_sizes.chosen(MODULE, {}, _counted((3, 2), (5, 1))) == {}  # the harness's already
    assert call_sizes.chosen(MODULE, {}, []) == {}  # not counted: the harness's
    assert call_sizes.chosen(MODULE, {"s77": 9}, _counted((3, 1), (5, 3))) == {"s77": 9}  # --size
    assert call_sizes.chosen(MODULE, {"s12": 9}, _counted((3, 1), (5, 3))) == {"s77": 5}  # not its symbol
    aliased = MODULE.replace("    s77 = arg1_1\n", "    s77 = arg1_1\n    arg2_1 = torch.as_strided(arg0_1, (3, 8), (8, 1))\n")
    assert aliased != MODULE
    assert call_sizes.chosen(aliased, {}, _counted((3, 1), (5, 3))) == {}  # cannot be built there


def _dynamic_run(**graph) -> BreakdownResult:
    g = GraphResult(id="0.1-forward", role="forward", iterations=10, wall_ms=2.0, wall_samples_ms=[2.0] * 10,
                    **graph)
    static = GraphResult(id="0-forward", role="forward", iterations=10, wall_ms=1.0, wall_samples_ms=[1.0] * 10,
                         calls=1.0)
    return BreakdownResult(model="train.py", script=True, graphs=[static, g])


def test_the_report_says_where_the_calls_went_and_what_was_profiled():
    r = _dynamic_run(sizes={"s77": 32}, size_hints={"s77": 8}, calls=8.0,
                     call_sizes=_counted((8, 1), (32, 7)))
    text = render_breakdown(r)
    assert ("dynamic shapes: profiled 0.1-forward at s77=32 (7 of its 8 calls; its harness's: s77=8): the "
            "sizes most of its calls ran at, not its harness's (those of the call that compiled it)") in text
    assert "calls by size: 0.1-forward s77=8 x1, s77=32 x7" in text
    assert ("the all-graphs row counts every call of a dynamic graph at the size profiled: 0.1-forward 8 calls "
            "(7 of them at that size)") in text
    assert "as --size asked" not in text
    back = BreakdownResult.from_dict(r.to_dict())
    assert back.graphs[1].call_sizes == r.graphs[1].call_sizes and back.graphs[0].call_sizes == []


def test_a_graph_whose_calls_all_ran_at_its_harnesss_sizes_says_so_and_no_more():
    text = render_breakdown(_dynamic_run(sizes={"s77": 8}, calls=3.0, call_sizes=_counted((8, 3))))
    assert ("dynamic shapes: profiled 0.1-forward at s77=8 (all 3 of its calls): the size hints its compiled "
            "module's harness holds (those of the call that first compiled the graph, perhaps in a run that "
            "filled the cache)\n") in text
    assert "calls by size" not in text and "counts every call of a dynamic graph" not in text


def test_size_that_the_user_asked_for_wins_and_is_said():
    r = _dynamic_run(sizes={"s77": 64}, size_hints={"s77": 8}, calls=8.0, call_sizes=_counted((8, 1), (32, 7)))
    text = render_breakdown(r)
    assert "profiled 0.1-forward at s77=64 (none of its 8 calls; its harness's: s77=8), as --size asked" in text


torch = pytest.importorskip("torch")

from inductor_bench.runner import call_inputs  # noqa: E402
from inductor_bench.runner.harness_inputs import harness, load_module  # noqa: E402


def _record_calls(tmp_path: Path, batches: list[int]) -> tuple[Path, list]:
    """The module called on a (batch, 8) x per batch, recorded as the compile worker records;
    the records moved beside the module, as a graph's directory keeps them."""
    path = tmp_path / "module.py"
    path.write_text(MODULE)
    mod = load_module(str(path))
    call_inputs._SIZES.pop("module", None)  # counts are per module name, in this process
    call_inputs._wrap_call(mod, tmp_path / "record" / "module.pt")
    w = torch.randn(8, 4)
    xs = [torch.randn(b, 8) for b in batches]
    for b, x in zip(batches, xs, strict=True):
        mod.call([w, b, x])
    for record in (tmp_path / "record").glob("*.pt"):
        record.rename(tmp_path / ("inputs" + record.name[len("module"):]))
    return path, [w, *xs]


def test_every_call_is_counted_by_its_sizes_and_each_new_sizes_first_call_recorded(tmp_path):
    _, (w, *xs) = _record_calls(tmp_path, [3, 5, 5, 3, 5, 7])
    assert call_inputs.size_counts()["module"] == _counted((3, 2), (5, 3), (7, 1))
    assert sorted(p.name for p in tmp_path.glob("inputs*.pt")) == ["inputs.pt", "inputs.s77-5.pt",
                                                                    "inputs.s77-7.pt"]
    at5 = torch.load(tmp_path / "inputs.s77-5.pt", weights_only=True)
    assert list(at5["inputs"]) == [2] and torch.equal(at5["inputs"][2], xs[1])  # x only: w is the first's
    assert at5["mutated"] == [] and at5["scales"] == {}


def test_the_sizes_records_beyond_the_limit_are_not_kept(tmp_path):
    sizes = [3, *range(10, 10 + call_sizes.MAX_SIZE_RECORDS + 2)]
    _record_calls(tmp_path, sizes)
    assert len(list(tmp_path.glob("inputs.s77-*.pt"))) == call_sizes.MAX_SIZE_RECORDS
    assert len(call_inputs.size_counts()["module"]) == len(sizes)  # every size still counted


def test_at_the_chosen_sizes_the_harness_runs_on_that_sizes_first_call(tmp_path):
    path, (w, x3, x5, _) = _record_calls(tmp_path, [3, 5, 5])
    run = harness(load_module(str(path)), {"s77": 5})
    assert run.args[1] == 5 and torch.equal(run.args[0], w) and torch.equal(run.args[2], x5)
    assert (run.restorer.copied, run.restorer.inputs) == (2, 2)
    (out,) = run()
    assert torch.equal(out, x5 @ w)
    at3 = harness(load_module(str(path)))  # the harness's sizes: the first call's values
    assert at3.args[1] == 3 and torch.equal(at3.args[2], x3)


def test_without_a_record_at_those_sizes_the_new_draw_is_not_counted_as_the_models(tmp_path):
    path, (w, *_) = _record_calls(tmp_path, [3, 5])
    (tmp_path / "inputs.s77-5.pt").unlink()
    run = harness(load_module(str(path)), {"s77": 5})
    assert run.args[2].shape == (5, 8) and torch.equal(run.args[0], w)
    assert (run.restorer.copied, run.restorer.inputs) == (1, 2)  # w; x is the harness's draw at 5 rows


TRAINING_SCRIPT = '''
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
step = torch.compile(model)
for epoch in range(2):
    for batch in (16, 16, 16, 4):  # 52 samples in batches of 16: the last one is smaller
        loss = step(torch.randn(batch, 64)).square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
'''


@pytest.mark.slow
@pytest.mark.e2e
def test_a_training_loops_smaller_last_batch(tmp_path):
    """The first epoch compiles a static graph at 16 and, at its last batch of 4, a dynamic one
    (automatic dynamic shapes), which runs every later batch: 2 calls at 4, 3 at 16. Both of
    its graphs, forward and backward, are profiled at 16 on the model's values there."""
    import json

    from inductor_bench.render import format as fmt

    from .test_dynamic_shapes import breakdown
    from .test_static_twin import twin_x

    script = tmp_path / "train.py"
    script.write_text(TRAINING_SCRIPT)
    p = breakdown(script, tmp_path, "run", "--fresh-cache")
    assert p.returncode == 0, p.stderr
    graphs = {g["id"]: g for g in json.loads((tmp_path / "run.json").read_text())["graphs"]}
    assert sorted(graphs) == ["0-backward", "0-forward", "0.1-backward", "0.1-forward"]
    assert [graphs[i]["calls"] for i in ("0-forward", "0.1-forward")] == [3, 5]
    for gid in ("0.1-forward", "0.1-backward"):
        g = graphs[gid]
        ((symbol, at),) = g["sizes"].items()
        assert (at, g["size_hints"]) == (16, {symbol: 4})
        assert g["call_sizes"] == [{"sizes": {symbol: 4}, "calls": 2}, {"sizes": {symbol: 16}, "calls": 3}]
        copied, _, inputs = g["first_call_inputs"][:3]
        assert copied == inputs > 0  # every input the model's: at 16 from the first call at 16
    report = (tmp_path / "run" / "report.txt").read_text()
    assert (f"dynamic shapes: profiled 0.1-forward at {symbol}=16 (3 of its 5 calls; its harness's: "
            f"{symbol}=4); 0.1-backward at {symbol}=16 (3 of its 5 calls; its harness's: {symbol}=4): "
            "the sizes most of its calls ran at") in report
    assert "0.1-forward 5 calls (3 of them at that size)" in report
    # why it compiled again: Dynamo's own guard failure, on the compile whose guard it was
    # (the input's name is torch's: 'args[0]' in 2.13, 'L['args'][0]' in 2.5)
    assert re.search(r"was compiled 2 times, again each time one of Dynamo's guards failed: 0 \(0-forward, "
                     r"0-backward\); 0\.1 \(0\.1-forward, 0\.1-backward\) after a guard failed on 0: tensor "
                     r"'.+?' size mismatch at index 0\. expected 16, actual 4\. A call runs one of them", report)
    # the dynamic forward ran at 16 on the inputs the static one was compiled for: side by side,
    # each at the figure of the graph table (core/static_twin.py)
    d, s = graphs["0.1-forward"], graphs["0-forward"]
    assert d["input_shapes"] == s["input_shapes"] and [16, 64] in s["input_shapes"]
    assert (f"same shapes, two compiles: 0.1-forward (dynamic) at {symbol}=16 takes {fmt.ms(d['wall_ms'])} ms a "
            f"call, 0-forward (static, compiled for the same input shapes) {fmt.ms(s['wall_ms'])} ms: "
            f"{twin_x(d['wall_ms'] / s['wall_ms'])}") in report  # measured: 1.097x beside the 1.10x floor


def test_a_decode_loops_many_sizes_are_summed_up_with_their_range():
    """A decode loop whose dynamic cache grows by one token a call (a Hugging Face ``generate``
    without a static cache: four size symbols equal at every call, one constant) calls its
    graph at 14 sizes, once each, and at 9 twice: the line names the five sizes of the most
    calls, then the rest summed up and each group of symbols' range. Synthetic counts."""
    counted = [{"sizes": {"s87": n, "s94": n, "s84": n, "s60": n, "s1": 4}, "calls": 2 if n == 9 else 1}
               for n in range(8, 22)]
    r = _dynamic_run(sizes={"s87": 9, "s94": 9, "s84": 9, "s60": 9, "s1": 4}, calls=15.0, call_sizes=counted)
    line = next(ln for ln in render_breakdown(r).splitlines() if ln.startswith("calls by size"))
    shown = [f"s87=s94=s84=s60={n}, s1=4 x{c}" for n, c in ((9, 2), (8, 1), (10, 1), (11, 1), (12, 1))]
    assert line == ("calls by size: 0.1-forward " + ", ".join(shown) + " and 9 more sizes (9 calls; 14 sizes "
                    "in all: s87=s94=s84=s60 from 8 to 21, s1=4)")
