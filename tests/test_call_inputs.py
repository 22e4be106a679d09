"""A graph is profiled on the values its first real call had (``runner/call_inputs.py``): its
integer and boolean inputs first, then its floats, within a size budget; the inputs it changes
in place are put back before every call.

The harness's ``rand_strided`` makes every integer and boolean input zeros; a static KV cache's
position counter, advanced in place by each call, then runs past the cache after a few profiled
calls and the kernel stops with "index out of bounds" (a Llama decode step from transformers
5.24 failed so, on torch 2.14.1). The modules in the unit tests are synthetic, written by hand
in the shape Inductor gives its harness; the end-to-end test compiles a real script."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from inductor_bench.render import format as fmt  # noqa: E402
from inductor_bench.runner import call_inputs  # noqa: E402
from inductor_bench.runner.harness_inputs import harness, load_module  # noqa: E402

# A decode step over a static cache of 6 rows: writes its token's row at the cache's length,
# then advances the length in place; a length past the cache raises, as Inductor's bounds check.
MODULE = textwrap.dedent('''
    import torch
    from torch._dynamo.testing import rand_strided

    def call(args):
        ids, mask, x, length, cache = args
        args.clear()
        if not 0 <= int(length) < cache.shape[0]:
            raise RuntimeError("index out of bounds: 0 <= length < 6")
        cache[int(length)] = x[ids].sum(0) * mask.float().sum()
        length.add_(1)
        return (cache.sum(),)

    def get_args():
        ids = rand_strided((4,), (1,), device="cpu", dtype=torch.int64)
        mask = rand_strided((4,), (1,), device="cpu", dtype=torch.bool)
        x = rand_strided((10, 8), (8, 1), device="cpu", dtype=torch.float32)
        length = rand_strided((), (), device="cpu", dtype=torch.int64)
        cache = rand_strided((6, 8), (8, 1), device="cpu", dtype=torch.float32)
        return [ids, mask, x, length, cache]
''')

# torch < 2.11's harness: the inputs live in the closure handed to print_performance
MODULE_2_5 = textwrap.dedent('''
    import torch
    from torch._dynamo.testing import rand_strided

    def call(args):
        ids, x = args
        args.clear()
        return (x[ids],)

    def benchmark_compiled_module(times=10, repeat=10):
        from torch._inductor.utils import print_performance
        ids = rand_strided((3,), (1,), device="cpu", dtype=torch.int64)
        x = rand_strided((10, 2), (2, 1), device="cpu", dtype=torch.float32)
        fn = lambda: call([ids, x])
        return print_performance(fn, times=times, repeat=repeat)
''')


def _first_call(tmp_path: Path, text: str, args: list) -> Path:
    """Write the module, load it, record its first call on ``args`` as the compile worker does;
    the record is moved beside the module, where the run directory keeps a graph's copy."""
    path = tmp_path / "module.py"
    path.write_text(text)
    mod = load_module(str(path))
    record = tmp_path / "record" / "module.pt"
    call_inputs._wrap_call(mod, record)
    again = [a.clone() for a in args]
    mod.call(args)
    again[0] = torch.zeros_like(again[0])
    mod.call(again)  # later calls record nothing
    record.rename(tmp_path / "inputs.pt")
    return path


def _real_args() -> list:
    return [torch.tensor([2, 5, 5, 9]), torch.tensor([True, False, True, True]), torch.randn(10, 8),
            torch.tensor(3), torch.zeros(6, 8)]


def test_the_first_call_keeps_its_inputs_and_what_it_changed(tmp_path):
    args = _real_args()
    _first_call(tmp_path, MODULE, list(args))
    data = torch.load(tmp_path / "inputs.pt", weights_only=True)
    assert list(data["inputs"]) == [0, 1, 3, 2, 4]  # ids, mask, length, then the floats
    assert data["inputs"][0].tolist() == [2, 5, 5, 9]
    assert data["inputs"][1].tolist() == [True, False, True, True]
    assert int(data["inputs"][3]) == 3  # before the call advanced it
    assert torch.equal(data["inputs"][2], args[2]) and not data["inputs"][4].any()  # the cache before
    assert data["mutated"] == [3, 4]  # the length, and the cache row the call wrote
    assert int(args[3]) == 4  # the model's own tensor advanced by its call
    assert data["inputs"][0].tolist() != [0, 0, 0, 0]  # the second call's ids were not recorded


def test_the_harness_runs_on_them_and_gets_the_changed_ones_back_before_each_call(tmp_path):
    path = _first_call(tmp_path, MODULE, _real_args())
    args = _real_args()
    path = _first_call(tmp_path, MODULE, [a.clone() for a in args])
    run = harness(load_module(str(path)))
    assert (run.restorer.copied, run.restorer.inputs) == (5, 5)
    assert run.args[0].tolist() == [2, 5, 5, 9] and run.args[1].tolist() == [True, False, True, True]
    for _ in range(20):  # without the restore the length reaches the cache's end at the 3rd call
        run.restore()
        run()
        assert int(run.args[3]) == 4
        assert torch.equal(run.args[4][:3], torch.zeros(3, 8)) and run.args[4][3].any()  # one row
    assert torch.equal(run.args[2], args[2])  # the floats: the model's, not the harness's draw


def test_without_a_record_the_harness_keeps_its_zeros_and_a_profile_runs_out_of_the_cache(tmp_path):
    """What the profile did before: zeros, and the counter's drift stops it at the 7th call."""
    path = tmp_path / "module.py"
    path.write_text(MODULE)
    run = harness(load_module(str(path)))
    assert run.restorer.copied == 0 and run.args[0].tolist() == [0, 0, 0, 0]
    with pytest.raises(RuntimeError, match="index out of bounds"):
        for _ in range(7):
            run.restore()
            run()


def test_an_input_of_another_shape_keeps_the_harnesss_value(tmp_path):
    """A dynamic graph whose first call had other sizes than the harness's: nothing is forced."""
    args = _real_args()
    args[0] = torch.tensor([1, 2])  # 2 ids where the harness has 4
    path = _first_call(tmp_path, MODULE, args)
    run = harness(load_module(str(path)))
    assert run.restorer.copied == 4  # mask, x, length, cache
    assert run.args[0].tolist() == [0, 0, 0, 0]


def test_past_the_budget_an_input_keeps_the_harnesss_draw_integers_first(tmp_path, monkeypatch):
    """x (320 bytes) is over a tensor limit of 256; of a module budget of 300 bytes the integer
    and boolean inputs take 44 first (ids 32, mask 4, length 8), and the cache (192) fits after
    them: x keeps the harness's draw."""
    monkeypatch.setattr(call_inputs, "MAX_TENSOR_BYTES", 256)
    monkeypatch.setattr(call_inputs, "MAX_MODULE_BYTES", 300)
    args = _real_args()
    path = _first_call(tmp_path, MODULE, [a.clone() for a in args])
    record = torch.load(tmp_path / "inputs.pt", weights_only=True)
    assert list(record["inputs"]) == [0, 1, 3, 4] and list(record["scales"]) == [2]
    std, mean = torch.std_mean(args[2])
    assert record["scales"][2].tolist() == pytest.approx([float(mean), float(std)])
    run = harness(load_module(str(path)))
    assert (run.restorer.copied, run.restorer.inputs, run.restorer.scaled) == (4, 5, 1)
    # x: the harness's seeded draw, brought to the mean and deviation the model's x had
    (tmp_path / "inputs.pt").unlink()
    draw = harness(load_module(str(path))).args[2]
    assert torch.allclose(run.args[2], draw * float(std) + float(mean))
    assert not torch.equal(run.args[2], args[2])
    monkeypatch.setattr(call_inputs, "MAX_MODULE_BYTES", 200)  # the cache no longer fits
    path = _first_call(tmp_path, MODULE, [a.clone() for a in args])
    assert list(torch.load(tmp_path / "inputs.pt", weights_only=True)["inputs"]) == [0, 1, 3]


def test_a_float_past_the_budget_that_is_not_finite_keeps_the_draw_as_it_is(tmp_path, monkeypatch):
    monkeypatch.setattr(call_inputs, "MAX_TENSOR_BYTES", 256)  # x (320 bytes) past it
    args = _real_args()
    args[2][0, 0] = float("inf")  # its deviation is not a number
    path = _first_call(tmp_path, MODULE, [a.clone() for a in args])
    run = harness(load_module(str(path)))
    assert (run.restorer.copied, run.restorer.scaled) == (4, 0)
    assert bool(run.args[2].isfinite().all())


def test_a_parameter_is_recorded_a_tensor_subclass_is_not():
    """A graph's weights reach call() as nn.Parameter; a wrapper subclass keeps its draw."""

    class Wrapped(torch.Tensor):
        pass

    weight = torch.nn.Parameter(torch.randn(3, 2))
    kept = call_inputs._snapshot([weight, torch.randn(2).as_subclass(Wrapped), torch.tensor([1, 2])])
    assert sorted(kept) == [0, 2] and type(kept[0]) is torch.Tensor and torch.equal(kept[0], weight)


def test_torch_2_5s_closure_gets_the_values_too(tmp_path):
    path = _first_call(tmp_path, MODULE_2_5, [torch.tensor([7, 1, 4]), torch.randn(10, 2)])
    run = harness(load_module(str(path)))
    assert run.args is None and run.restorer.copied == 2  # ids and x
    cells = {n: c.cell_contents for n, c in zip(run.call.__code__.co_freevars, run.call.__closure__, strict=True)}
    assert cells["ids"].tolist() == [7, 1, 4]
    (out,) = run()
    assert torch.equal(out, cells["x"][[7, 1, 4]])


SCRIPT = '''
import torch
from torch import nn


class Decoder(nn.Module):
    """A static cache of 8 rows: prefill writes 3, each decode step 1 more, at its length."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 16)
        self.proj = nn.Linear(16, 16)
        self.register_buffer("cache", torch.zeros(8, 16))
        self.register_buffer("length", torch.zeros((), dtype=torch.long))

    def forward(self, ids):
        slots = self.length + torch.arange(ids.shape[0])
        self.cache.index_copy_(0, slots, self.emb(ids))
        self.length += ids.shape[0]
        return self.proj(self.cache).sum(0)


model = torch.compile(Decoder())
with torch.no_grad():
    model(torch.tensor([3, 7, 9]))
    for t in range(4):
        model(torch.tensor([t + 10]))
'''


def _run_script(tmp_path: Path, text: str, *options: str) -> tuple[subprocess.CompletedProcess, dict, Path]:
    script = tmp_path / "decode_cache.py"
    script.write_text(text)
    run_dir = tmp_path / "run"
    p = subprocess.run(
        [sys.executable, "-m", "inductor_bench.cli", "breakdown", str(script), "--iterations", "50",
         "--windows", "1", "--processes", "1", "--out", str(run_dir), "--json", str(tmp_path / "r.json"),
         *options], capture_output=True, text=True, timeout=900, cwd=tmp_path)
    r = json.loads((tmp_path / "r.json").read_text()) if (tmp_path / "r.json").exists() else {}
    return p, r, run_dir


@pytest.mark.slow
@pytest.mark.e2e
def test_a_static_cache_decode_script_is_profiled_on_its_real_inputs(tmp_path):
    """Compiled for real: the prefill graph (3 ids) and the decode graph (1 id) are profiled for
    50 calls each although each call advances the cache's length (torch checks the index
    against the 8 rows); each graph ran on its first call's ids and length."""
    p, r, run_dir = _run_script(tmp_path, SCRIPT, "--device", "cpu")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert [g["status"] for g in r["graphs"]] == ["ok", "ok"]
    assert all(g["iterations"] == 50 for g in r["graphs"])
    # ids, length, the cache and the three weights; the length and the cache put back
    assert [g["first_call_inputs"] for g in r["graphs"]] == [[6, 2, 6, 0, 0, 0, 0]] * 2  # no constants
    assert [g["calls"] for g in r["graphs"]] == [1, 4]  # the prefill once, the decode step 4 times
    report = (run_dir / "report.txt").read_text()
    ids = [g["id"] for g in r["graphs"]]
    assert (f"of its tensor inputs: {ids[0]} 6 of 6, {ids[1]} 6 of 6; put back before every call, as the "
            f"graph changes them in place (a cache's position, a counter, a norm's running statistics): "
            f"{ids[0]} 2, {ids[1]} 2") in report
    walls = {g["id"]: g["wall_ms"] for g in r["graphs"]}
    assert f"calls in the script: {ids[1]} 4 x " in report or f"calls in the script: {ids[0]} 1 x " in report
    assert f"{ids[1]} 4 x {fmt.ms(walls[ids[1]])} ms = {fmt.ms(4 * walls[ids[1]])} ms" in report
    # the all-graphs row and the JSON totals: each graph's per-call wall times its calls
    all_row = next(ln for ln in report.splitlines() if ln.startswith("all graphs "))
    assert fmt.ms(walls[ids[0]] + 4 * walls[ids[1]]) in all_row.split()
    assert r["totals"]["wall_ms"] == pytest.approx(walls[ids[0]] + 4 * walls[ids[1]])
    assert r["totals"]["weights"] == {ids[0]: 1, ids[1]: 4}
    firsts = {}
    for g in r["graphs"]:
        data = torch.load(run_dir / "graphs" / g["id"] / "inputs.pt", weights_only=True)
        ints = {tuple(t.shape): t.tolist() for t in data["inputs"].values() if not t.is_floating_point()}
        firsts[len(ints.get((3,), ints.get((1,), [])))] = (ints, len(data["mutated"]))
    assert firsts[3] == ({(3,): [3, 7, 9], (): 0}, 2)  # prefill: its ids, the length it started at
    assert firsts[1] == ({(1,): [10], (): 3}, 2)  # the first decode step


def test_the_report_says_which_graphs_ran_on_their_first_calls_values():
    from inductor_bench.core.results import BreakdownResult, GraphResult
    from inductor_bench.render.breakdown import render_breakdown

    graphs = [GraphResult(id=gid, role="inference", iterations=4, wall_ms=1.0, wall_samples_ms=[1.0] * 4,
                          first_call_inputs=given) for gid, given in
              (("0-inference", [3, 0]), ("1-inference", []), ("2-inference", [4, 2]))]
    r = BreakdownResult(model="m", model_path="/x/m.py", graphs=graphs)
    text = render_breakdown(r)  # a run saved when only integers and booleans were recorded
    assert ("(token ids, positions, masks): 0-inference 3, 2-inference 4; put back before every call, as "
            "the graph changes them in place (a cache's position, a counter, a norm's running statistics): "
            "2-inference 2") in text
    assert BreakdownResult.from_dict(r.to_dict()).graphs[2].first_call_inputs == [4, 2]
    graphs[0].first_call_inputs, graphs[2].first_call_inputs = [3, 0, 5], [6, 2, 6]
    text = render_breakdown(r)
    assert "inputs: each graph ran on the values its first call in the model had (weights" in text
    assert "of its tensor inputs: 0-inference 3 of 5, 2-inference 6 of 6; put back" in text
    for g in graphs:
        g.first_call_inputs = []
    assert "first call in the model" not in render_breakdown(r)


def _counted(script: bool, calls: list[float | None]):
    from inductor_bench.core.results import BreakdownResult, GraphResult

    graphs = [GraphResult(id=f"{i}-inference", role="inference", iterations=4, wall_ms=w,
                          wall_samples_ms=[w] * 4, calls=c) for i, (w, c) in enumerate(zip((2.0, 0.5), calls, strict=True))]
    return BreakdownResult(model="m", model_path="/x/m.py", script=script, graphs=graphs)


def test_a_scripts_calls_of_each_graph_weigh_its_time():
    """The prefill (2 ms) once and the decode step (0.5 ms) 12 times: the decode's 6 ms is 75%."""
    from inductor_bench.render.execution import calls_line

    assert calls_line(_counted(True, [1, 12])) == (
        "calls in the script: 1-inference 12 x 0.500 ms = 6.000 ms (75.0%), 0-inference 1 x 2.000 ms = "
        "2.000 ms (25.0%); 8.000 ms in its compiled graphs in all (the all-graphs row, the time by category, "
        "the top kernels and the views add each graph's calls; a graph's own table is one call)")
    assert calls_line(_counted(True, [None, None])) is None  # not counted (CUDA-graph replays)


def test_a_factory_models_graph_called_other_than_once_per_step_is_named():
    from inductor_bench.render.execution import calls_line

    assert calls_line(_counted(False, [1.0, 1.0])) is None
    assert calls_line(_counted(False, [1.0, 3.0])) == (
        "calls per step: 1-inference 3 (the all-graphs row, the time by category, the top kernels and the views add "
        "each graph's calls; a graph's own table is one call)")
    r = _counted(False, [1.0, 2.5])
    from inductor_bench.core.results import BreakdownResult

    assert BreakdownResult.from_dict(r.to_dict()).graphs[1].calls == 2.5


CUDA_SCRIPT = SCRIPT.replace("model = torch.compile(Decoder())", "model = torch.compile(Decoder().cuda(), mode=MODE)") \
    .replace("torch.tensor([3, 7, 9])", "torch.tensor([3, 7, 9], device='cuda')") \
    .replace("torch.tensor([t + 10])", "torch.tensor([t + 10], device='cuda')") \
    .replace("torch.arange(ids.shape[0])", "torch.arange(ids.shape[0], device=ids.device)")


@pytest.mark.gpu
@pytest.mark.e2e
@pytest.mark.parametrize("mode", [None, "reduce-overhead"])
def test_a_static_cache_decode_on_the_gpu_runs_on_its_first_calls_values(tmp_path, mode):
    """On CUDA: the record is taken at the first call (a warm-up, not a capture, under CUDA-graph
    trees) and the length put back (a device copy, waited for) before each of the 50 calls;
    under CUDA graphs the calls are not counted (a replay bypasses ``call()``)."""
    p, r, run_dir = _run_script(tmp_path, f"MODE = {mode!r}\n" + CUDA_SCRIPT, "--device", "cuda")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert [g["status"] for g in r["graphs"]] == ["ok", "ok"]
    assert [g["first_call_inputs"] for g in r["graphs"]] == [[6, 2, 6, 0, 0, 0, 0]] * 2  # as on the CPU
    assert [g.get("calls") for g in r["graphs"]] == ([1, 4] if mode is None else [None, None])


def test_report_reanalyze_keeps_what_the_compile_said_of_each_graph():
    """``report --reanalyze`` rebuilds each graph from the header saved with its profile: the
    calls counted and the function it was compiled from are kept there (they were lost)."""
    from inductor_bench.core.analysis import header
    from inductor_bench.core.results import GraphResult

    g = GraphResult(id="0.1-inference", role="inference", calls=15.0,
                    compiled_from={"name": "LlamaForCausalLM.forward", "file": "modeling_llama.py", "line": 427})
    again = GraphResult(**json.loads(json.dumps(header(g))))
    assert again.calls == 15.0 and again.compiled_from == g.compiled_from


@pytest.mark.e2e
def test_a_training_steps_graphs_run_on_the_models_own_weights_and_input(mlp_train):
    """`breakdown models/mlp.py --train`: every input of both graphs recorded; the forward's
    weights and input are the model's, as the factory builds them again here."""
    import importlib.util

    result, run_dir, err = mlp_train
    assert err is None
    for g in result.graphs:
        copied, _, inputs, scaled, held_copied, held, held_scaled = g.first_call_inputs
        assert copied == inputs > 0 and scaled == 0
        assert held_copied == held and held_scaled == 0  # what the graph holds (none here)
    spec = importlib.util.spec_from_file_location("mlp_again", Path(__file__).parents[1] / "models" / "mlp.py")
    mlp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mlp)
    model, (x,) = mlp.make_workload()
    fwd = next(g for g in result.graphs if g.role == "forward")
    kept = torch.load(Path(run_dir) / Path(fwd.module).parent / "inputs.pt", weights_only=True)["inputs"]
    values = list(kept.values())
    for t in (model.fc1.weight, model.fc2.weight, model.fc3.bias, model.norm.weight, x):
        assert any(v.shape == t.shape and torch.equal(v, t.detach()) for v in values)


def test_a_diff_says_when_one_side_ran_on_random_floats():
    """A run saved before floats were recorded (two counts per graph) against a newer one."""
    import copy

    from inductor_bench.core.comparable import comparability
    from inductor_bench.core.rundir import load_breakdown

    base = load_breakdown(Path(__file__).parent / "fixtures" / "runs" / "cpu_mlp_train_stalled")
    head = copy.deepcopy(base)
    for g in base.graphs:
        g.first_call_inputs = [1, 0]
    for g in head.graphs:
        g.first_call_inputs = [9, 0, 9, 0]
    notes = comparability(base, head)[1]
    assert ("the graphs ran on other inputs: base on the harness's random floats, head on the model's "
            "own values") in " ".join(notes)
    assert not any("other inputs" in n for n in comparability(head, copy.deepcopy(head))[1])


def test_a_backward_that_reuses_its_saved_activations_buffers_says_so():
    """Synthetic, after `breakdown` of a 2-layer GPT-2 (--train, CPU): its backward writes into
    two of its saved activations (``buf28 = where_3; del where_3  # reuse``), and the line named
    only a cache's position, a counter and a norm's statistics as what a graph changes in place."""
    from inductor_bench.core.results import BreakdownResult, GraphResult
    from inductor_bench.render.breakdown import render_breakdown

    graphs = [GraphResult(id="0-forward", role="forward", iterations=4, wall_ms=1.0, wall_samples_ms=[1.0] * 4,
                          first_call_inputs=[29, 0, 29]),
              GraphResult(id="0-backward", role="backward", iterations=4, wall_ms=1.0,
                          wall_samples_ms=[1.0] * 4, first_call_inputs=[59, 2, 59])]
    text = " ".join(render_breakdown(BreakdownResult(model="gpt2", model_path="/x/gpt2.py", graphs=graphs)).split())
    assert ("0-forward 29 of 29, 0-backward 59 of 59; put back before every call, as the graph changes them "
            "in place (a cache's position, a counter, a norm's running statistics, a saved activation whose "
            "buffer a backward reuses): 0-backward 2") in text
