"""The GPU tests' expectation of a kernel's max-autotune space (``tests/mode_spaces.py``),
checked on CPU: with the recorded mode tables of torch 2.5 / 2.11 / 2.13 and, where torch is
installed, against the space the tool lists for the recorded kernel files."""

from __future__ import annotations

import pytest

from inductor_bench.core import modes
from inductor_bench.core.autotune import BASELINE, MAX_AUTOTUNE

from .conftest import FIXTURES, skip_unless_kernel_files_load
from .mode_spaces import WIDENING_SWITCHES, expected_space_size, switch_sizes
from .test_autotune import SPACES
from .test_modes import TABLE_2_5, TABLE_2_11

TABLES = {"2.5.0": TABLE_2_5, "2.11.0": TABLE_2_11, "2.13.0": TABLE_2_11}  # 2.13's equals 2.11's
# The space of a 3-D pointwise kernel (add_permute) under each switch alone:
# torch 2.11's heuristic widens it only for max_autotune_pointwise (its source, docs/kernel.md);
# torch 2.13's for either (measured below on the installed 2.13).
THREE_D_2_11 = {"max_autotune": 1, "max_autotune_pointwise": 7}
THREE_D_2_13 = {"max_autotune": 7, "max_autotune_pointwise": 7}
GPU_KERNELS = ["triton_red_fused_sum_0", "triton_poi_fused_add_permute_0", "triton_poi_fused_clone_mul_t_0"]


def meta_of(version: str, mode: str) -> dict:
    return modes.kernel_patch(mode, TABLES[version][mode], torch_version=version).meta


@pytest.mark.parametrize("version", sorted(TABLES))
def test_a_3d_kernel_at_torch_2_11_keeps_its_one_config(version):
    """No mode of any table sets max_autotune_pointwise: at 2.11 the 3-D space stays 1."""
    assert expected_space_size(1, THREE_D_2_11, meta_of(version, "max-autotune")) == 1
    assert expected_space_size(1, THREE_D_2_13, meta_of(version, "max-autotune")) == 7
    assert expected_space_size(1, THREE_D_2_13, meta_of(version, "reduce-overhead")) == 1
    assert expected_space_size(1, THREE_D_2_11, {"max_autotune_pointwise": True}) == 7


def test_the_widest_switch_the_mode_sets_decides():
    by_switch = {"max_autotune": 5, "max_autotune_pointwise": 2}
    assert expected_space_size(1, by_switch, {"max_autotune": True, "max_autotune_pointwise": True}) == 5
    assert expected_space_size(1, by_switch, {"max_autotune": False, "coordinate_descent_tuning": True}) == 1
    assert expected_space_size(3, {}, meta_of("2.11.0", "max-autotune")) == 3


@pytest.mark.parametrize("folder", ["cpu", "synthetic_cuda"])
@pytest.mark.parametrize("stem", GPU_KERNELS)
def test_the_expectation_equals_the_listed_space(folder, stem, tmp_path):
    skip_unless_kernel_files_load()
    from inductor_bench.core.kernelfile import read_kernel_file
    from inductor_bench.runner.kernelbench import config_space, installed_patch

    path = FIXTURES / "triton_kernels" / folder / f"{stem}.py"
    base, by_switch = switch_sizes(path, tmp_path / "switches")
    assert set(by_switch) == set(WIDENING_SWITCHES)
    kf = read_kernel_file(path)
    assert base == len(config_space(kf, BASELINE, tmp_path / "base"))
    expected = expected_space_size(base, by_switch, installed_patch().meta)
    assert expected == len(config_space(kf, MAX_AUTOTUNE, tmp_path / "tuned"))
    if installed_patch().torch_version.startswith("2.13."):  # the version SPACES was measured on
        assert (base, expected) == SPACES[stem]
        if stem == "triton_poi_fused_add_permute_0":
            assert by_switch == THREE_D_2_13
