"""torch.compile modes: the mode tables of torch 2.5 / 2.11 / 2.13 (copied from their source)
turned into kernel-file patches, the parent's name check, and the worker's check against the
installed torch."""

from __future__ import annotations

import pytest

from inductor_bench.core import modes
from inductor_bench.core.errors import UsageError

# torch._inductor.list_mode_options() of each version, from its source.
LITE = {"fallback_by_default": True, "selective_decompose": True,
        "reorder_for_peak_memory": False, "reorder_for_compute_comm_overlap": False,
        "triton.reorder_for_reducing_graph_partitions": False, "use_pre_grad_passes": False,
        "use_joint_graph_passes": False, "use_post_grad_passes": False, "use_dce": False,
        "allow_buffer_reuse": False}
TABLE_2_5 = {
    "default": {},
    "reduce-overhead": {"triton.cudagraphs": True},
    "max-autotune-no-cudagraphs": {"max_autotune": True},
    "max-autotune": {"max_autotune": True, "triton.cudagraphs": True},
}
TABLE_2_11 = {
    "default": {},
    "lite": LITE,
    "reduce-overhead": {"triton.cudagraphs": True},
    "max-autotune-no-cudagraphs": {"max_autotune": True, "coordinate_descent_tuning": True},
    "max-autotune": {"max_autotune": True, "triton.cudagraphs": True,
                     "coordinate_descent_tuning": True},
}


def test_max_autotune_patch_per_version():
    p25 = modes.kernel_patch("max-autotune", TABLE_2_5["max-autotune"], torch_version="2.5.1")
    assert (p25.meta, p25.applied, p25.ignored) == (
        {"max_autotune": True}, ["max_autotune"], ["triton.cudagraphs"])
    assert p25.describe() == "max-autotune as torch 2.5 defines it: max_autotune"
    p211 = modes.kernel_patch("max-autotune", TABLE_2_11["max-autotune"],
                              torch_version="2.11.0+cu128",
                              config={"coordinate_descent_search_radius": 2})
    assert p211.meta == {"max_autotune": True, "coordinate_descent_tuning": True,
                         "coordinate_descent_search_radius": 2,  # the config's value
                         "coordinate_descent_check_all_directions": False}  # the default
    assert p211.describe() == (
        "max-autotune as torch 2.11 defines it: max_autotune, coordinate_descent_tuning")
    assert modes.KernelPatch.from_dict(p211.to_dict()) == p211


def test_modes_that_set_nothing_a_kernel_reads():
    lite = modes.kernel_patch("lite", LITE, torch_version="2.11.0")
    assert (lite.meta, lite.applied, lite.ignored) == ({}, [], list(LITE))
    assert lite.describe() == "lite as torch 2.11 defines it: nothing a kernel file reads"
    ro = modes.kernel_patch("reduce-overhead", TABLE_2_11["reduce-overhead"], torch_version="2.11")
    assert (ro.meta, ro.ignored) == ({}, ["triton.cudagraphs"])


def test_which_modes_use_cuda_graphs():
    assert [m for m, o in TABLE_2_11.items() if modes.uses_cuda_graphs(o)] == [
        "reduce-overhead", "max-autotune"]


@pytest.mark.parametrize("name", ["default", "eager", "lite", "max-autotune-no-cudagraphs",
                                  "some-future-mode2"])
def test_well_formed_names_pass_the_parent(name):
    modes.check_name(name)


@pytest.mark.parametrize("name", ["max_autotune", "Default", "-x", "a--b", "", "../x"])
def test_malformed_names_are_refused_in_the_parent(name):
    with pytest.raises(UsageError, match=f"--mode: {name!r} is not a torch.compile mode name"):
        modes.check_name(name)


def test_short_version():
    assert [modes.short_version(v) for v in ("2.13.0+cpu", "2.5.0", "2.11.0a0+git", "x")] == [
        "2.13", "2.5", "2.11", "x"]


def test_the_worker_checks_the_installed_torchs_table():
    torch = pytest.importorskip("torch")
    from torch._inductor import list_mode_options

    from inductor_bench.runner import compile_modes

    listed = list(list_mode_options())
    for m in [*listed, "eager"]:
        compile_modes.check(m)
    with pytest.raises(UsageError) as e:
        compile_modes.check("fast")
    assert str(e.value) == (f"torch.compile mode 'fast': torch {torch.__version__} has no such "
                            f"mode (its modes: {', '.join(listed)})")
    assert compile_modes.uses_cuda_graphs("max-autotune") is True
    assert compile_modes.uses_cuda_graphs("reduce-overhead") is True
    assert compile_modes.uses_cuda_graphs("max-autotune-no-cudagraphs") is False
    assert compile_modes.uses_cuda_graphs("default") is False
    assert compile_modes.uses_cuda_graphs("eager") is False


def test_reduce_overhead_on_the_host_says_it_ran_as_default():
    """mode reduce-overhead's one option is CUDA graphs: on the host its graphs are default's,
    and the report says so; on CUDA, or in another mode, it says nothing of the kind."""
    from inductor_bench.core.results import BreakdownResult, GraphResult
    from inductor_bench.render.breakdown import render_breakdown

    def run(mode: str, device: str) -> str:
        g = GraphResult(id="0-inference", role="inference", device=device, iterations=3, wall_ms=1.0,
                        wall_samples_ms=[1.0, 1.0, 1.0])
        return render_breakdown(BreakdownResult(model="m", mode=mode, device=device, graphs=[g]))

    said = ("mode reduce-overhead on CPU: the mode's one option is CUDA graphs, which need a CUDA device, "
            "so its graphs compiled and ran as mode default's do")
    assert said in run("reduce-overhead", "cpu")
    assert "the mode's one option is CUDA graphs" not in run("default", "cpu")
    assert "the mode's one option is CUDA graphs" not in run("reduce-overhead", "cuda")
