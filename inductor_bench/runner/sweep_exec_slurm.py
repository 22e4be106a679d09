"""The ``slurm`` executor, through submitit: one Slurm job per model, one GPU each (on the
CPU a whole node, ``--exclusive``), every job submitted at once for Slurm to queue. With
``cluster="local"`` it is submitit's local executor instead (the same jobs as processes here,
one per slot, each slot pinned with CUDA_VISIBLE_DEVICES): a Slurm setup tried without a
cluster. Needs ``pip install 'inductor-bench[slurm]'``."""

from __future__ import annotations

import logging
import shutil
import sys
from pathlib import Path
from typing import Any

from ..core.errors import UsageError
from .sweep_exec import failed_outcome
from .sweep_job import Job, JobOutcome, run_job

INSTALL = "pip install 'inductor-bench[slurm]'"
SLURM, LOCAL = "slurm", "local"
# submitit's parameters every cluster takes (the others are prefixed: slurm_partition).
# Those the local executor takes (its own, prefixed local_, and the time limit).
LOCAL_KEYS = ("timeout_min", "local_setup", "local_signal_delay_s")
GENERIC = {
    "name": str,
    "timeout_min": int,
    "mem_gb": float,
    "nodes": int,
    "cpus_per_task": int,
    "gpus_per_node": int,
    "tasks_per_node": int,
    "stderr_to_stdout": bool,
}


def import_submitit() -> Any:
    """submitit, its log lines kept off stdout (which holds the report: submitit also sends
    its warnings to stderr)."""
    try:
        import submitit
    except ImportError:
        raise UsageError(f"--executor slurm needs submitit: {INSTALL}") from None
    log = logging.getLogger("submitit")
    for handler in list(log.handlers):
        if getattr(handler, "stream", None) is sys.stdout:
            log.removeHandler(handler)
    return submitit


class SlurmExecutor:
    name = "slurm"

    def __init__(
        self,
        folder: Path,
        *,
        gpu: bool,
        cluster: str = SLURM,
        slots: list[str | None] | None = None,
        params: dict[str, Any] | None = None,
    ) -> None:
        """``folder``: submitit's files (pickled jobs, Slurm logs), on a file system the nodes
        share. ``slots``: the local cluster's (``sweep_exec.local_slots``). ``params``: submitit's
        ``update_parameters`` (``slurm_partition``, ``timeout_min``, ...)."""
        submitit = import_submitit()
        if cluster == SLURM and shutil.which("sbatch") is None:
            raise UsageError(
                "--executor slurm: no Slurm here (sbatch is not on PATH); "
                "--slurm-cluster local runs the jobs with submitit on this machine"
            )
        self._cluster, self._gpu = cluster, gpu
        self._slots = slots if slots is not None else [None]
        params = dict(params or {})
        if cluster == LOCAL:  # submitit's local executor itself: it pins jobs to visible_gpus
            self._ex = submitit.LocalExecutor(folder=folder)
            params = {k.removeprefix("local_"): v for k, v in params.items() if k in LOCAL_KEYS}
        else:
            self._ex = submitit.AutoExecutor(folder=folder, cluster=cluster)
            params = {"nodes": 1, "name": "inductor-bench-sweep", **params}
            if not gpu:  # a CPU job has its machine to itself: two would disturb each other's timings
                params.setdefault("slurm_exclusive", True)
        try:
            self._ex.update_parameters(**{"tasks_per_node": 1, "gpus_per_node": int(gpu), **params})
        except (NameError, AssertionError, ValueError, TypeError) as e:
            raise UsageError(f"--slurm-opt: {str(e).splitlines()[0]}") from None

    def slots(self, jobs: int) -> list[str | None]:
        if self._cluster == SLURM:
            return [None] * jobs  # Slurm queues them
        return list(self._slots)

    def launch(self, job: Job, slot: str | None) -> Any:
        if self._cluster == LOCAL:
            pinned = [int(slot)] if slot is not None else []
            self._ex.update_parameters(visible_gpus=pinned, gpus_per_node=len(pinned))
        return self._ex.submit(run_job, job)

    def poll(self, handle: Any) -> JobOutcome | None:
        if not handle.done():
            return None
        try:
            return handle.result()
        except Exception as e:  # the job died, was cancelled or timed out: its cell says how
            return failed_outcome(e)

    def stop(self, handle: Any) -> None:
        handle.cancel(check=False)  # SIGINT to the job (Slurm: scancel): run_job stops the compare

    def close(self) -> None:
        pass


def slurm_params(partition: str | None, minutes: int | None, options: list[str]) -> dict[str, Any]:
    """submitit's parameters from ``--slurm-partition``, ``--slurm-time`` and each
    ``--slurm-opt KEY=VALUE`` (a key submitit shares across clusters as it is, any other one
    as ``slurm_KEY`` unless it names its cluster already)."""
    params: dict[str, Any] = {}
    if partition:
        params["slurm_partition"] = partition
    if minutes is not None:
        params["timeout_min"] = minutes
    for opt in options:
        key, eq, value = opt.partition("=")
        if not eq or not key.strip():
            raise UsageError(f"--slurm-opt {opt!r}: give KEY=VALUE (e.g. mem_gb=32, account=perf)")
        key = key.strip()
        if key in GENERIC:
            params[key] = _typed(key, value, GENERIC[key])
        else:
            name = key if key.startswith(("slurm_", "local_")) else f"slurm_{key}"
            params[name] = int(value) if value.isdigit() else value
    return params


def _typed(key: str, value: str, kind: type) -> Any:
    try:
        return value.lower() in ("1", "true", "yes") if kind is bool else kind(value)
    except ValueError:
        raise UsageError(f"--slurm-opt {key}={value}: {key} takes a {kind.__name__}") from None
