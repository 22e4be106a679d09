"""Shared fixtures. Compiling on these CPUs takes tens of seconds, so every end-to-end test
that needs a breakdown shares the session-scoped runs below."""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
from pathlib import Path

import pytest

# One intra-op thread: CPU timings stay stable when other processes share the two cores
# (OpenMP barriers under contention turn microseconds into scheduler quanta). Set, not defaulted:
# a CI that exports another value would otherwise time the suite with several threads.
os.environ["OMP_NUM_THREADS"] = "1"
# inductor-bench's private compile cache (runner/cache.py) in a directory of this test session
# only: tests never read or fill the user's, and every session starts cold.
# Removed when this process exits (a pytest session, or a script that imports the tests'
# cases), not by a child it forked: a suite run leaves nothing under /tmp.
_SESSION_CACHE = tempfile.mkdtemp(prefix="inductor-bench-tests-")
os.environ["XDG_CACHE_HOME"] = _SESSION_CACHE


def _remove_session_cache(owner: int = os.getpid()) -> None:
    if os.getpid() == owner:
        shutil.rmtree(_SESSION_CACHE, ignore_errors=True)


atexit.register(_remove_session_cache)

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
# a JSON figure in ms written to the nanosecond is off by up to half of one; a figure that
# falls on the half (0.2693295 ms written 0.269329) is off by that plus float's error on it
HALF_NS = 5e-7 * (1 + 1e-6)


def _cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def torch_minor() -> tuple[int, int]:
    """(major, minor) of the installed torch ('2.11.0+cu130' -> (2, 11)): what a test's
    expectation of a version-dependent behaviour is keyed on (``docs/version-matrix.md``)."""
    torch = pytest.importorskip("torch")
    major, minor = torch.__version__.split(".")[:2]
    return int(major), int(minor)


def torch_2_5() -> bool:
    """Whether the installed torch is a 2.5 release: the oldest the tool supports, where some of
    what the tests check reads otherwise (``docs/version-matrix.md``)."""
    return torch_minor() == (2, 5)


def skip_unless_kernel_files_load() -> None:
    """Skip where the installed torch cannot import the recorded Triton kernel files
    (``fixtures/triton_kernels``, written by torch 2.13): their first lines call
    ``triton_helpers.set_driver_to_cpu`` / ``set_driver_to_gpu``, which torch 2.5 lacks, and
    give ``DeviceProperties`` fields that torch 2.6 to 2.9 lack (``max_threads_per_block``)."""
    pytest.importorskip("torch")
    reason = _kernel_files_unloadable()
    if reason:
        pytest.skip(reason)


@functools.cache
def _kernel_files_unloadable() -> str | None:
    """Why the installed torch cannot import the recorded kernel files, or None; the device
    properties a file gives are read by the tool's own kernel-file reader."""
    import torch
    from torch._inductor.runtime import triton_helpers
    from torch._inductor.runtime.hints import DeviceProperties

    from inductor_bench.core.kernelfile import read_kernel_file

    cannot = f"torch {torch.__version__} cannot import the kernel files torch 2.13 wrote"
    if not hasattr(triton_helpers, "set_driver_to_cpu"):
        return f"{cannot} (no triton_helpers.set_driver_to_cpu)"
    device = read_kernel_file(FIXTURES / "triton_kernels" / "cpu" / "triton_red_fused_sum_0.py").triton_meta["device"]
    missing = [f for f in device if f != "_type" and f not in DeviceProperties._fields]
    return f"{cannot} (its DeviceProperties has no {', '.join(missing)})" if missing else None


def pytest_addoption(parser):
    parser.addoption("--slow", action="store_true",
                     help="also run the tests marked slow (left out by default; CI runs them)")


def _runs_slow(config) -> bool:
    """Slow tests run with --slow, under an explicit -m, or when named by their node id."""
    return bool(config.getoption("--slow") or config.option.markexpr
                or any("::" in str(arg) for arg in config.args))


def pytest_collection_modifyitems(config, items):
    if not _runs_slow(config):
        slow = [item for item in items if "slow" in item.keywords]
        if slow:
            config.hook.pytest_deselected(items=slow)
            items[:] = [item for item in items if "slow" not in item.keywords]
    if any("gpu" in item.keywords for item in items) and not _cuda():
        skip = pytest.mark.skip(reason="needs CUDA")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)


def run_breakdown_cached(tmp_path_factory, model: str, device: str = "cpu", **kw):
    from inductor_bench.commands.output import write_report
    from inductor_bench.core.workload import WorkloadOptions
    from inductor_bench.runner.pipeline import run_breakdown
    from inductor_bench.runner.settings import RunSettings

    opts = WorkloadOptions(path=str(MODELS / model), device=device, **kw)
    root = tmp_path_factory.mktemp(Path(model).stem)
    # as the command runs it: the report is written beside every saved result
    return run_breakdown(opts, RunSettings(timeout=600, on_saved=write_report), root=root)


@pytest.fixture(scope="session")
def mlp_train(tmp_path_factory):
    """(result, run_dir, error) of `breakdown models/mlp.py --train --device cpu`."""
    return run_breakdown_cached(tmp_path_factory, "mlp.py", train=True)


@pytest.fixture(scope="session")
def densenet_train(tmp_path_factory):
    """(result, run_dir, error) of `breakdown models/densenet.py --train --device cpu`."""
    return run_breakdown_cached(tmp_path_factory, "densenet.py", train=True)


@pytest.fixture(scope="session")
def transformer_train(tmp_path_factory):
    """(result, run_dir, error) of `breakdown models/transformer_block.py --train --device cpu`."""
    return run_breakdown_cached(tmp_path_factory, "transformer_block.py", train=True)


@pytest.fixture(scope="session")
def attr_train(tmp_path_factory):
    """(result, run_dir, error) of the source-attribution test model, training, on CPU."""
    return run_breakdown_cached(tmp_path_factory, str(FIXTURES / "models" / "attr_net.py"), train=True)


@pytest.fixture
def host_counters_off(monkeypatch):
    """Synthetic clocks of the ceilings' probes: the host's own counters of lost time (run-queue
    wait, steal: ``runner/lost_time.py``) read nothing, as where they are missing."""
    from inductor_bench.runner import lost_time

    monkeypatch.setattr(lost_time, "read", lambda: None)
