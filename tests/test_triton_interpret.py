"""Inductor's CUDA Triton kernels run on CPU tensors by Triton's interpreter, checked against eager
torch: the ``kernel`` command's loading, its max-autotune patch and config spaces against the
installed torch's own mode table, and every kernel's numbers. Run by ``scripts/interpret_tests.sh``
(``TRITON_INTERPRET=1`` in a virtual environment with a CUDA build of torch); skipped elsewhere.

The interpreter runs ``configs[0]`` only (no compile, no autotuning, no timing), so every
candidate config of a space is run on its own (``run_with_config``) and each must give the
reference. References are written here with plain torch ops, in float64 where a kernel reduces.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import FIXTURES
from .interpret import interpreter_missing, load_compiled_module, load_interpreted, on_cpu, run_with_config
from .mode_spaces import expected_space_size, switch_sizes

pytestmark = [
    pytest.mark.interpret,
    pytest.mark.skipif(interpreter_missing() is not None, reason=str(interpreter_missing())),
]

KERNELS = FIXTURES / "triton_kernels"
SEED = 0
# float32 elementwise results: the interpreter computes with numpy, eager with ATen; both round
# each operation to float32, so they agree to a few ulps.
ELEMENTWISE = {"rtol": 1e-5, "atol": 1e-5}
# Reductions over up to 65536 float32 values in another order than the float64 reference.
REDUCTION = {"rtol": 1e-4, "atol": 2e-3}


def _t(args, i):
    return args[i].double()


# kernel file stem -> (reference: args -> {argument index: expected}, tolerance)
REFERENCES = {
    "triton_poi_fused_add_sin_0": (lambda a: {1: _t(a, 0).sin() + 1}, ELEMENTWISE),
    "triton_poi_fused_clone_mul_t_0": (lambda a: {1: _t(a, 0).t() * 2}, ELEMENTWISE),
    "triton_poi_fused_add_t_0": (lambda a: {2: _t(a, 0).t() + _t(a, 1)}, ELEMENTWISE),
    "triton_poi_fused_add_permute_0": (
        lambda a: {1: _t(a, 0) + _t(a, 0).permute(0, 2, 1) + _t(a, 0).permute(1, 0, 2)}, ELEMENTWISE),
    "triton_red_fused_sum_0": (lambda a: {1: _t(a, 0).sum(-1)}, REDUCTION),
    "triton_per_fused__softmax_0": (lambda a: {0: _t(a, 1).softmax(-1)}, ELEMENTWISE),
    "triton_spl_fused_cumsum_0": (lambda a: {1: _t(a, 0).cumsum(0)}, REDUCTION),
    "triton_for_fused_0": (lambda a: {2: _t(a, 0) + _t(a, 1), 3: _t(a, 1) + _t(a, 0)}, ELEMENTWISE),
    "triton_tem_fused_mm_0": (lambda a: {2: _t(a, 0) @ _t(a, 1)}, REDUCTION),
}


def _expected_space(path: Path, mode: str, work: Path) -> int:
    """The space size the installed torch's mode table implies (tests/mode_spaces.py)."""
    from inductor_bench.core.autotune import BASELINE
    from inductor_bench.runner.kernelbench import installed_patch

    base, by_switch = switch_sizes(path, work)
    return base if mode == BASELINE else expected_space_size(base, by_switch, installed_patch().meta)


def _close(actual, expected, tol, what):
    import torch

    torch.testing.assert_close(actual.double(), expected, **tol, msg=lambda m: f"{what}: {m}")


# --- the max-autotune patch against the installed torch's own mode table ------------------------

# torch._inductor.config option -> the inductor_meta key a kernel's heuristics read (written out
# here from triton_heuristics.py, independently of core/modes.py)
META_KEYS = {"max_autotune": "max_autotune", "max_autotune_pointwise": "max_autotune_pointwise",
             "coordinate_descent_tuning": "coordinate_descent_tuning"}


def test_the_max_autotune_patch_is_the_installed_torchs_mode(tmp_path):
    import torch
    from torch._inductor import config, list_mode_options

    from inductor_bench.core.autotune import MAX_AUTOTUNE
    from inductor_bench.core.kernelfile import read_kernel_file

    mode = list_mode_options("max-autotune")
    want = {META_KEYS[k]: v for k, v in mode.items() if k in META_KEYS}
    if mode.get("coordinate_descent_tuning"):
        want["coordinate_descent_search_radius"] = config.coordinate_descent_search_radius
        want["coordinate_descent_check_all_directions"] = config.coordinate_descent_check_all_directions
    kf = read_kernel_file(KERNELS / "synthetic_cuda" / "triton_red_fused_sum_0.py")
    _, tuner = load_interpreted(kf, MAX_AUTOTUNE, tmp_path, "patched")
    got = {k: tuner.inductor_meta.get(k) for k in want}
    assert got == want, f"torch {torch.__version__}"
    assert tuner.inductor_meta["force_disable_caches"] is True  # no cached config answers
    assert bool(tuner.inductor_meta.get("max_autotune_pointwise")) == bool(
        mode.get("max_autotune_pointwise"))


# --- kernel files with a harness: the command's validation, every config's numbers ---------------


def _cases():
    """(stem, mode) for every synthetic CUDA kernel and each mode the command runs for it
    (templates: the baseline only); the interpreter's slowest, a long loop per program in every
    candidate config, are also marked ``slow``."""
    from inductor_bench.core.autotune import BASELINE, MAX_AUTOTUNE

    out = []
    for stem in sorted(REFERENCES):
        for mode in (BASELINE,) if "_tem_" in stem else (BASELINE, MAX_AUTOTUNE):
            marks = [pytest.mark.slow] if (stem, mode) in SLOW else []
            out.append(pytest.param(stem, mode, marks=marks, id=f"{stem}-{mode}"))
    return out


# More than half a minute each on a 2-core machine: loops of thousands of steps per program
# (65536-long reductions and scans in small blocks), a 256^3 GEMM.
SLOW = {("triton_red_fused_sum_0", "max-autotune"), ("triton_spl_fused_cumsum_0", "max-autotune"),
        ("triton_tem_fused_mm_0", "baseline"), ("triton_poi_fused_add_permute_0", "max-autotune")}


@pytest.mark.parametrize("stem, mode", _cases())
def test_each_config_of_each_space_matches_eager(stem, mode, tmp_path):
    import torch

    from inductor_bench.commands.kernel import resolve_kernel_file
    from inductor_bench.runner.kernelbench import modes_for

    path = KERNELS / "synthetic_cuda" / f"{stem}.py"
    kf = resolve_kernel_file(path, None)  # what `inductor-bench kernel FILE` accepts
    assert mode in modes_for(kf, max_autotune=True)
    reference, tol = REFERENCES[stem]
    module, tuner = load_interpreted(kf, mode, tmp_path, mode)
    assert len(tuner.configs) == _expected_space(path, mode, tmp_path / "spaces")
    for cfg in tuner.configs:
        torch.manual_seed(SEED)
        args = run_with_config(tuner, cfg, module.get_args)
        inputs = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
        run_with_config(tuner, cfg, lambda args=args: module.call(args))
        for i, expected in reference(inputs).items():
            _close(args[i], expected, tol, f"{stem} {mode} {cfg}")


# --- kernels Inductor generated on real GPUs (tlparse's test data) -------------------------------

GPU = KERNELS / "gpu_tlparse"


def _launch(tuner, cfg, *args):
    return run_with_config(tuner, cfg, lambda: tuner.run(*args, stream=0))


def test_a100_max_autotune_pointwise_squares(tmp_path):
    """x * x over 5 elements, generated on an A100 under max-autotune and coordinate descent."""
    import torch

    from inductor_bench.core.autotune import MAX_AUTOTUNE
    from inductor_bench.core.kernelfile import read_kernel_file

    kf = read_kernel_file(GPU / "a100_maxautotune__triton_poi_fused_mul_0.py")
    assert kf.tuning_flags["max_autotune"] and kf.tuning_flags["coordinate_descent_tuning"]
    _, tuner = load_interpreted(kf, MAX_AUTOTUNE, tmp_path, "mul")
    x = torch.tensor([1.5, -2.0, 3.0, 0.25, -7.0])
    for cfg in tuner.configs:
        out = torch.full((5,), float("nan"))
        _launch(tuner, cfg, x, out, 5)
        assert out.tolist() == [2.25, 4.0, 9.0, 0.0625, 49.0]


def test_a100_persistent_reduction_gelu_layer_norm_fp16(tmp_path):
    """layer_norm(gelu(x)) of 1024 rows of 1024 float16 values, in place (A100). Run on the first
    64 rows: the grid covers xnumel / XBLOCK programs, so a smaller xnumel runs fewer rows."""
    import torch
    import torch.nn.functional as F

    from inductor_bench.core.autotune import BASELINE
    from inductor_bench.core.kernelfile import read_kernel_file

    rows, n = 64, 1024
    kf = read_kernel_file(GPU / "a100__triton_per_fused_all_reduce_gelu_native_layer_norm_0.py")
    _, tuner = load_interpreted(kf, BASELINE, tmp_path, "ln")
    g = torch.Generator().manual_seed(SEED)
    x = torch.randn(1024, n, generator=g).half()
    weight, bias = torch.randn(n, generator=g).half(), torch.randn(n, generator=g).half()
    expected = F.layer_norm(F.gelu(x[:rows].double()), (n,), weight.double(), bias.double(), 1e-5)
    for cfg in tuner.configs:
        buf = x.clone()
        _launch(tuner, cfg, buf, weight, bias, rows, n)
        # float16 storage: half an ulp at |y| < 8 is under 4e-3
        _close(buf[:rows], expected, {"rtol": 2e-3, "atol": 4e-3}, f"{kf.name} {cfg}")
        assert torch.equal(buf[rows:], x[rows:])  # rows beyond the grid untouched


def test_h100_dropout_file_needs_the_triton_it_was_generated_for(tmp_path):
    """torch 2.6's kernel files import ``triton.compiler.compiler.AttrsDescriptor``, which newer
    Triton removed: loading one fails in the file's own import line, before any launch, with
    one line that says so."""
    import triton.compiler.compiler as compiler

    from inductor_bench.core.autotune import BASELINE
    from inductor_bench.core.kernelfile import read_kernel_file

    kf = read_kernel_file(GPU / "h100__triton_poi_fused_native_dropout_0.py")
    if hasattr(compiler, "AttrsDescriptor"):
        pytest.skip("this Triton still has AttrsDescriptor")
    from inductor_bench.core.errors import UsageError

    with pytest.raises(UsageError, match=r"cannot import it \(ImportError: cannot import name 'AttrsDescriptor'"
                                         r".*needs that version and its Triton$"):
        load_interpreted(kf, BASELINE, tmp_path, "dropout")


# --- compiled modules: every kernel in its module, forward and backward against autograd ---------


def mlp_2_14(primals):
    """tests/fixtures/codegen_2.14.1: x -> Linear -> LayerNorm -> GELU -> Linear."""
    import torch.nn.functional as F

    x, w1, b1, ln_w, ln_b, w2, b2 = primals
    h = F.gelu(F.layer_norm(F.linear(x, w1, b1), (w1.shape[0],), ln_w, ln_b, 1e-5))
    return F.linear(h, w2, b2)


def models_mlp(primals):
    """models/mlp.py with Dynamo's lifted order: fc1.weight, fc1.bias, x, norm, fc2, fc3."""
    import torch.nn.functional as F

    w1, b1, x, ln_w, ln_b, w2, b2, w3, b3 = primals
    h = F.layer_norm(F.gelu(F.linear(x, w1, b1)), (w1.shape[0],), ln_w, ln_b, 1e-5)
    return F.linear(F.gelu(F.linear(h, w2, b2)), w3, b3)


MODELS = {"models/mlp.py": models_mlp}


def _installed_codegen() -> Path:
    import torch

    return FIXTURES / f"codegen_{torch.__version__.split('+')[0]}"


# tests/fixtures/codegen_2.14.1's first modules, recorded before the folder had a manifest:
# (forward or inference, backward)
MLP_2_14 = [(f"{s}_fwd.py", f"{s}_bwd.py") for s in
            ("mlp_train_default", "mlp_train_reduce_overhead", "mlpH8192_train_reduce_overhead")] + [
            (f"mlp_infer_{m}_inference.py", None) for m in ("default", "reduce_overhead")]


def codegen_cases() -> list[tuple[str, str | None, object]]:
    """(forward or inference module, backward module or None, eager function) of the installed
    torch's codegen fixtures: those of its manifest.json whose model this test knows, and the
    first 2.14.1 modules."""
    folder = _installed_codegen()
    cases = []
    manifest = folder / "manifest.json"
    if manifest.exists():
        mods = [m for m in json.loads(manifest.read_text())["modules"] if m["model"] in MODELS]
        by = {(m["config"], m["graph"], m["role"]): m["file"] for m in mods}
        for m in mods:
            if m["role"] in ("forward", "inference"):
                back = by.get((m["config"], m["graph"], "backward"))
                cases.append((m["file"], back, MODELS[m["model"]]))
    if folder.name == "codegen_2.14.1":
        cases += [(f, b, mlp_2_14) for f, b in MLP_2_14 if (folder / f).exists()]
    return sorted(cases, key=lambda c: c[0])


# Welford reductions over 8192 columns: the interpreter steps through every element in Python
# (minutes on a 2-core machine).
SLOW_MODULES = {"mlpH8192_train_reduce_overhead_fwd.py"}


def _cases_or_skip():
    cases = [pytest.param(*c, marks=[pytest.mark.slow] if c[0] in SLOW_MODULES else [])
             for c in codegen_cases()]
    return cases or [pytest.param(None, None, None, marks=pytest.mark.skip(
        reason=f"no compiled-module fixtures of this torch ({_installed_codegen().name}) for the "
               "models this test knows"))]


@pytest.mark.parametrize("first, backward, eager", _cases_or_skip())
def test_compiled_module_matches_autograd(first, backward, eager, tmp_path):
    import torch

    from inductor_bench.core.autotune import BASELINE

    folder = _installed_codegen()
    fwd = load_compiled_module(folder / first, tmp_path / "fwd", BASELINE)
    assert fwd.interpreted_kernels, f"{first}: no Triton kernel"
    torch.manual_seed(SEED)
    with on_cpu():  # the module's own Python; each kernel runs its configs[0]
        primals = fwd.get_args()
        leaves = [p.detach().clone().requires_grad_() for p in primals]
        out = fwd.call(list(primals))
    expected = eager(leaves)
    _close(out[0], expected.detach().double(), REDUCTION, f"{first} output")
    if backward is None:
        return
    bwd = load_compiled_module(folder / backward, tmp_path / "bwd", BASELINE)
    tangent = torch.randn_like(expected)
    grads_eager = torch.autograd.grad(expected, leaves, tangent, allow_unused=True)
    with on_cpu():  # AOTAutograd's convention: the forward's outputs after the user's are saved
        grads = bwd.call([*out[1:], tangent])
    assert len(grads) == len(leaves)
    checked = 0
    for i, (got, want) in enumerate(zip(grads, grads_eager, strict=True)):
        if got is None:  # the input x: no gradient asked for
            continue
        _close(got, want.double(), REDUCTION, f"{backward} gradient of primal {i + 1}")
        checked += 1
    assert checked == len(leaves) - 1

