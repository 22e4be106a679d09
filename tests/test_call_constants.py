"""A graph is profiled on the constants its module holds as the model's compile made them
(``runner/call_constants.py``): the weights freezing folds into the module, oneDNN's packed
ones handed back as oneDNN tensors, MKL's packed ones packed again from their weights.

The harness sets every constant to ``rand_strided``: on this project's Xeon VM a frozen
bfloat16 MLP's linears then took 688, 344 and 87 ms where the model's took 0.09, 0.07 and
0.03 ms, and a float32 one's fused GELU 0.70 ms where the model's took 0.08 ms. The unit tests
read the frozen modules of ``tests/fixtures/freezing`` (recorded with torch 2.5.1, 2.13.0 and
2.14.1); the end-to-end tests compile a small CNN with freezing for real."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from inductor_bench.core.packed_weights import Packed, mkl_packed

FIXTURES = Path(__file__).parent / "fixtures" / "freezing"
VERSIONS = ["2.5.1", "2.13.0", "2.14.1"]
BATCH, FC_IN, FC_OUT = 4, 32, 10  # the fixtures' model: Linear(32, 10) on a batch of 4


def _harness_shape(text: str, name: str) -> tuple[int, ...]:
    m = re.search(rf"^\s*{name} = rand_strided\(\(([\d, ]*)\)", text, re.M)
    assert m, name
    return tuple(int(x) for x in m[1].split(",") if x.strip())


@pytest.mark.parametrize("version", VERSIONS)
def test_the_mkl_packed_weight_of_a_frozen_float32_linear_and_what_it_was_packed_from(version):
    text = (FIXTURES / f"{version}-float32.py").read_text()
    packed = mkl_packed(text)
    assert len(packed) == 1
    (name, p), = packed.items()
    assert p.batch_size == BATCH
    assert _harness_shape(text, p.weight) == (FC_OUT, FC_IN)  # the linear's own weight
    assert _harness_shape(text, name)[1:] == (1,) and _harness_shape(text, name)[0] > FC_OUT * FC_IN


@pytest.mark.parametrize("version", VERSIONS)
def test_a_frozen_bfloat16_module_packs_nothing_for_mkl(version):
    """bfloat16 linears go to oneDNN (``_linear_pointwise``), whose packed weight is a oneDNN
    tensor that is stored dense, not packed again."""
    text = (FIXTURES / f"{version}-bfloat16.py").read_text()
    assert "_linear_pointwise" in text and mkl_packed(text) == {}


def test_a_call_site_without_its_default_overload_or_with_a_bias():
    text = "buf3 = torch.ops.mkl._mkl_linear(buf2, _frozen_param7, _frozen_param6, _frozen_param1, 64)"
    assert mkl_packed(text) == {"_frozen_param7": Packed("_frozen_param6", 64)}


def test_the_report_says_how_many_constants_were_the_models():
    from inductor_bench.core.results import BreakdownResult, GraphResult
    from inductor_bench.render.breakdown import render_breakdown

    counts = {"0-inference": [1, 0, 1, 0, 11, 11, 0], "1-inference": [2, 0, 2, 0, 8, 10, 2],
              "2-inference": [3, 0, 3, 0]}  # the last: a run saved before constants were counted
    graphs = [GraphResult(id=gid, role="inference", iterations=4, wall_ms=1.0, wall_samples_ms=[1.0] * 4,
                          first_call_inputs=c) for gid, c in counts.items()]
    text = " ".join(render_breakdown(BreakdownResult(model="m", model_path="/x/m.py", graphs=graphs)).split())
    assert ("of its tensor inputs: 0-inference 1 of 1, 1-inference 2 of 2, 2-inference 3 of 3; of the "
            "constants it holds (weights that freezing folded in, tensors the graph made), set to the "
            "model's: 0-inference 11 of 11, 1-inference 8 of 10 (2 more at their scale)") in text


# Compiles the fixtures' CNN (``tests/fixtures/freezing/record.py``'s ``Net``) with freezing,
# recording as the compile worker does, and saves each dtype's module, record, input and
# compiled output side by side.
COMPILE = textwrap.dedent('''
    import shutil, sys, pathlib
    import torch
    from inductor_bench.runner import call_inputs
    from torch._inductor.codecache import PyCodeCache
    torch._inductor.config.freezing = True
    out = pathlib.Path(sys.argv[1])
    sys.path.insert(0, sys.argv[2])
    from record import Net
    call_inputs.attach(out / "records")

    for dtype in (torch.float32, torch.bfloat16):
        torch._dynamo.reset()
        torch.manual_seed(0)
        x = torch.randn(4, 3, 32, 32, dtype=dtype)
        with torch.no_grad():
            y = torch.compile(Net().eval().to(dtype))(x)
        loaded = getattr(PyCodeCache, "modules", None) or list(PyCodeCache.cache.values())  # 2.5: cache
        mod = [m for m in loaded if hasattr(m, "benchmark_compiled_module")][-1]
        d = out / str(dtype).removeprefix("torch.")
        d.mkdir()
        shutil.copy(mod.__file__, d / "module.py")
        shutil.copy(out / "records" / (pathlib.Path(mod.__file__).stem + ".pt"), d / "inputs.pt")
        torch.save({"x": x, "y": y, "held": sorted(k for k, v in vars(mod).items()
                                                   if isinstance(v, torch.Tensor))}, d / "model.pt")
''')


@pytest.fixture(scope="module")
def frozen(tmp_path_factory):
    out = tmp_path_factory.mktemp("frozen")
    subprocess.run([sys.executable, "-c", COMPILE, str(out), str(FIXTURES)], check=True, timeout=600)
    return out


def _run_module(gdir: Path):
    """The module of ``gdir`` loaded afresh and called once by the tool's harness."""
    pytest.importorskip("torch")
    from inductor_bench.runner.harness_inputs import harness, load_module

    run = harness(load_module(str(gdir / "module.py")))
    return run, run()[0]


def _run(gdir: Path):
    import torch

    run, out = _run_module(gdir)
    return run, out, torch.load(gdir / "model.pt", weights_only=True)


@pytest.mark.e2e
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_a_frozen_module_runs_on_the_models_constants(frozen, dtype):
    """The module, loaded afresh and run by its harness, gives the compiled model's output to the
    bit: every constant is the model's, the oneDNN ones handed back as oneDNN tensors and MKL's
    packed weight packed again."""
    import torch

    run, out, model = _run(frozen / dtype)
    assert torch.equal(out, model["y"])
    held = run.restorer.constants
    assert held.copied == held.total == len(model["held"]) > 0 and held.scaled == 0
    text = (frozen / dtype / "module.py").read_text()
    assert ("_mkl_linear" in text) == (dtype == "float32")
    # freezing hands bf16 convolutions to oneDNN only where it has bf16 units (AVX-512 BF16,
    # AMX): on an AVX2 CPU they stay aten convolutions
    onednn = dtype == "float32" or torch.ops.mkldnn._is_mkldnn_bf16_supported()
    assert ("_convolution_pointwise" in text) == onednn


@pytest.mark.e2e
def test_without_the_record_the_harness_draws_other_constants(frozen, tmp_path):
    """The check above can fail: the same module on its harness's own constants gives another
    output."""
    import shutil

    import torch

    gdir = tmp_path / "bare"
    gdir.mkdir()
    shutil.copy(frozen / "float32" / "module.py", gdir)
    shutil.copy(frozen / "float32" / "model.pt", gdir)
    run, out, model = _run(gdir)
    assert run.restorer.constants.total == 0
    assert not torch.allclose(out, model["y"], atol=1e-3)


@pytest.mark.e2e
def test_constants_past_the_budget_are_drawn_at_their_scale(frozen):
    """With no budget left, every float constant is drawn at its recorded mean and deviation and
    the MKL-packed weight is packed again from its drawn weight."""
    import torch

    from inductor_bench.runner import call_constants, harness_inputs
    from inductor_bench.runner.harness_inputs import harness, load_module

    path = frozen / "float32" / "module.py"
    live = call_constants.Constants.from_record(torch.load(path.with_name("inputs.pt"), weights_only=True)["constants"])
    mod = load_module(str(path))
    harness(mod)  # sets them to the model's values: these are what is recorded again below
    held = {n: getattr(mod, n) for n in live.names}
    record = call_constants.snapshot(held, path.read_text(), budget=0, max_tensor=1 << 30)
    packed = set(mkl_packed(path.read_text()))
    assert record.values == {} and set(record.scales) == set(live.names) - packed

    again = load_module(str(path))
    torch.manual_seed(0)
    if hasattr(again, "get_args"):
        again.get_args()
    else:  # torch < 2.11: the harness draws the constants inside benchmark_compiled_module
        harness_inputs._harness_closure(again)
    given = call_constants.apply(again, record)
    assert given.scaled == len(live.names) and given.copied == 0
    for name in record.scales:
        mean, std = record.scales[name].tolist()
        drawn = getattr(again, name).to_dense().float() if name in live.opaque else getattr(again, name).float()
        if drawn.numel() >= 256:
            assert drawn.mean().item() == pytest.approx(mean, abs=4 * std / drawn.numel() ** 0.5)
            assert drawn.std().item() == pytest.approx(std, rel=0.2)
    (name, p), = mkl_packed(path.read_text()).items()
    assert getattr(again, name) is not getattr(mod, name)


@pytest.mark.slow  # a whole breakdown (about 40 s); the compiled CNN above checks the same in the README's run
@pytest.mark.e2e
def test_breakdown_with_freezing_profiles_the_models_frozen_weights(tmp_path_factory):
    """`breakdown models/mlp.py --freezing`: the graph holds the model's weights as constants;
    its module, run from the run directory by its harness, computes the model's own output
    (the model built again here from its seed, run eagerly)."""
    import importlib.util

    import torch

    from tests.conftest import MODELS, run_breakdown_cached

    result, run_dir, err = run_breakdown_cached(tmp_path_factory, "mlp.py", freezing=True)
    assert err is None
    (g,) = result.graphs
    copied, _, inputs, scaled, held_copied, held, held_scaled = g.first_call_inputs
    assert copied == inputs == 1 and held_copied == held > 0 and scaled == held_scaled == 0
    text = (Path(run_dir) / "report.txt").read_text()
    assert f"set to the model's: {g.id} {held} of {held}" in " ".join(text.split())

    spec = importlib.util.spec_from_file_location("mlp_frozen_again", MODELS / "mlp.py")
    mlp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mlp)
    model, (x,) = mlp.make_workload()
    with torch.no_grad():
        expected = model.eval()(x)
    _, out = _run_module(Path(run_dir) / Path(g.module).parent)
    assert torch.allclose(out, expected, atol=1e-4, rtol=1e-4)
