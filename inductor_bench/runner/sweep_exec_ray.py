"""The ``ray`` executor: each job a Ray task holding one GPU (Ray sets its
CUDA_VISIBLE_DEVICES), or on the CPU a whole machine, on a running cluster (``--ray-address``)
or on one Ray starts here. A task that cannot see the sweep's directory sends its run
directory back (``sweep_job``). Needs ``pip install 'inductor-bench[ray]'``."""

from __future__ import annotations

from typing import Any

from ..core.devices import AUTO, HOST_BACKEND
from ..core.errors import DeviceError, UsageError
from .sweep_exec import failed_outcome
from .sweep_job import Job, JobOutcome, run_job

INSTALL = "pip install 'inductor-bench[ray]'"


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UsageError(f"--executor ray needs Ray: {INSTALL}") from None
    return ray


class RayExecutor:
    name = "ray"

    def __init__(self, device: str, address: str | None = None, **init: Any) -> None:
        """``address``: a running cluster's (``ray://host:10001``, ``auto``); None starts a
        local one (``init``: ``ray.init``'s options, e.g. ``num_gpus`` for tests)."""
        self._ray = ray = import_ray()
        self._owns = not ray.is_initialized()
        if self._owns:
            try:
                ray.init(address=address, include_dashboard=False, log_to_driver=False, **init)
            except (ConnectionError, RuntimeError, ValueError) as e:
                raise UsageError(f"--ray-address {address}: cannot connect ({e})") from None
        self._resources, self._capacity = _task_resources(ray, device)
        self._remote = ray.remote(max_retries=0)(run_job)

    def slots(self, jobs: int) -> list[str | None]:
        return [None] * self._capacity

    def launch(self, job: Job, slot: str | None) -> Any:
        return self._remote.options(**self._resources).remote(job)

    def poll(self, handle: Any) -> JobOutcome | None:
        ready, _ = self._ray.wait([handle], timeout=0)
        if not ready:
            return None
        try:
            return self._ray.get(handle)
        except Exception as e:  # the task died or was cancelled: the job's cell says how
            return failed_outcome(e)

    def stop(self, handle: Any) -> None:
        self._ray.cancel(handle)  # a KeyboardInterrupt in the task: run_job stops the compare

    def close(self) -> None:
        if self._owns:
            self._ray.shutdown()


def _task_resources(ray: Any, device: str) -> tuple[dict[str, Any], int]:
    """What each task asks for, and how many can run at once: one GPU each (its CPUs not
    reserved); on the CPU (``auto`` on a cluster without GPUs too), all the CPUs of the
    smallest machine, as many at once as there are machines (two jobs on one machine would
    disturb each other's timings)."""
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    if device == HOST_BACKEND.name:
        cpus = min(int(n["Resources"].get("CPU", 1)) for n in nodes)
        return {"num_cpus": cpus, "num_gpus": 0}, len(nodes)
    gpus = sum(int(n["Resources"].get("GPU", 0)) for n in nodes)
    if gpus == 0 and device == AUTO:
        return _task_resources(ray, HOST_BACKEND.name)
    if gpus == 0:
        raise DeviceError(
            f"--device {device}: the Ray cluster has no GPU (--device cpu runs one job per machine)"
        )
    return {"num_gpus": 1, "num_cpus": 0}, gpus
