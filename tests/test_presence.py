"""Telling that an accelerator is absent without importing torch (runner/presence.py): from
torch's version.py and the driver's own calls, and only when it is certain."""

from __future__ import annotations

import ctypes

import pytest

from inductor_bench.core.devices import Driver
from inductor_bench.core.errors import DeviceError
from inductor_bench.runner import presence

DRIVER = Driver("libcuda.so.1", "cuInit", "cuDeviceGetCount")


def version_file(tmp_path, cuda, hip=None):
    """A torch/version.py as torch writes it: annotated assignments of literals."""
    f = tmp_path / "version.py"
    f.write_text(
        "from typing import Optional\n\n"
        "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n"
        "__version__ = '9.1.0+test'\n"
        "debug = False\n"
        f"cuda: Optional[str] = {cuda!r}\n"
        "git_version = 'abc'\n"
        f"hip: Optional[str] = {hip!r}\n"
    )
    return f


def test_a_build_without_cuda_or_hip_is_certain(tmp_path):
    f = version_file(tmp_path, cuda=None)
    assert presence.torch_build(f)["cuda"] is None
    assert presence.absent("cuda", f) == "torch 9.1.0+test was built without CUDA"


def test_a_rocm_build_is_left_to_torch(tmp_path):
    assert presence.absent("cuda", version_file(tmp_path, cuda=None, hip="6.2")) is None


def test_the_host_auto_and_an_unreadable_torch_are_never_refused(tmp_path):
    f = version_file(tmp_path, cuda=None)
    assert presence.absent("cpu", f) is None
    assert presence.absent("auto", f) is None
    assert presence.absent("cuda", tmp_path / "missing.py") is None
    (tmp_path / "broken.py").write_text("cuda = (\n")
    assert presence.absent("cuda", tmp_path / "broken.py") is None


def test_a_cuda_build_asks_the_driver(tmp_path, monkeypatch):
    monkeypatch.setattr(presence.sys, "platform", "linux")
    monkeypatch.setattr(presence, "driver_absent", lambda d, label: f"asked {d.library} for {label}")
    assert presence.absent("cuda", version_file(tmp_path, cuda="12.8")) == "asked libcuda.so.1 for CUDA"


class FakeDriver:
    """The two calls of a driver library, answering as told."""

    def __init__(self, init_rc: int, devices: int) -> None:
        self.init_rc, self.devices = init_rc, devices

    def cuInit(self, flags: int) -> int:  # noqa: N802 - the C name
        return self.init_rc

    def cuDeviceGetCount(self, ref) -> int:  # noqa: N802
        ctypes.cast(ref, ctypes.POINTER(ctypes.c_int))[0] = self.devices
        return 0


@pytest.mark.parametrize(
    ("init_rc", "devices", "why"),
    [
        (100, 0, "the CUDA driver sees no device (cuInit returned 100)"),
        (0, 0, "the CUDA driver sees no device"),
        (0, 2, None),
    ],
)
def test_the_driver_answers(monkeypatch, init_rc, devices, why):
    monkeypatch.setattr(presence.sys, "platform", "linux")
    monkeypatch.setattr(presence.ctypes, "CDLL", lambda name: FakeDriver(init_rc, devices))
    assert presence.driver_absent(DRIVER, "CUDA") == why


def test_a_driver_library_that_does_not_load_means_no_driver(monkeypatch):
    monkeypatch.setattr(presence.sys, "platform", "linux")
    gone = Driver("libinductor-bench-no-such-driver.so.1", "cuInit", "cuDeviceGetCount")
    assert presence.driver_absent(gone, "CUDA") == (
        "no CUDA driver: libinductor-bench-no-such-driver.so.1 cannot be loaded")


def test_other_platforms_are_left_to_torch(monkeypatch):
    monkeypatch.setattr(presence.sys, "platform", "win32")
    assert presence.driver_absent(DRIVER, "CUDA") is None


def test_check_requested_speaks_as_the_worker_does(monkeypatch):
    monkeypatch.setattr(presence, "absent", lambda requested: "torch 9.1.0+test was built without CUDA")
    with pytest.raises(DeviceError) as e:
        presence.check_requested("cuda")
    assert str(e.value) == (
        "--device cuda: CUDA is not available here (torch 9.1.0+test was built without CUDA); "
        "use --device cpu or run on a CUDA machine")


def test_a_progress_line_names_auto_as_the_host_where_no_accelerator_can_be(tmp_path, monkeypatch):
    """`--device auto` on a torch built without CUDA or ROCm runs on the CPU, and the compile's
    progress line says so (`device cpu (auto)`); where torch's build cannot be read, or a device
    is asked for, the line keeps the words given."""
    from inductor_bench.core.workload import WorkloadOptions
    from inductor_bench.runner.compile_run import _describe

    from .conftest import ROOT

    model = str(ROOT / "models" / "mlp.py")

    monkeypatch.setattr(presence, "_installed_version_file", lambda: version_file(tmp_path, cuda=None))
    assert presence.device_words("auto") == "cpu (auto)"
    assert presence.device_words("cpu") == "cpu"
    assert presence.on_host("auto") and presence.on_host("cpu") and not presence.on_host("cuda")
    assert _describe(WorkloadOptions(path=model, train=True)) == "train, device cpu (auto), mode default, float32"
    monkeypatch.setattr(presence, "_installed_version_file", lambda: None)
    assert presence.device_words("auto") == "auto" and not presence.on_host("auto")
    assert _describe(WorkloadOptions(path=model)) == "inference, device auto, mode default, float32"
