"""Where a sweep's jobs run, and the loop that runs them.

An executor starts a job (``runner/sweep_job.py``) in one of its **slots**, says when it has
ended, and stops it when asked. ``run_jobs`` keeps every slot busy until the jobs are done; on
Ctrl-C (or SIGTERM: ``runner/stop.py``) it stops the running jobs, which save what they
measured, reports them (each, even where another's record cannot be saved), and raises again.
This module's executor is ``local``: one job per visible GPU, each pinned with
``CUDA_VISIBLE_DEVICES``, or on the CPU one job at a time (two would disturb each other's
timings). Ray: ``sweep_exec_ray.py``; Slurm: ``sweep_exec_slurm.py``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from typing import Any, Protocol

from ..core.devices import AUTO, HOST_BACKEND, accelerators
from ..core.errors import DeviceError
from . import stop
from .presence import absent, check_requested
from .rundir import WriteError
from .sweep_job import Job, JobOutcome, run_job

POLL_S = 0.1
# Seconds the stopped jobs get to report after Ctrl-C (each compare saves within a second;
# ``sweep_job.STOP_GRACE_S`` bounds each) before the sweep stops waiting.
STOPPED_REPORT_S = 30.0


class Executor(Protocol):
    name: str

    def slots(self, jobs: int) -> list[str | None]:
        """One entry per job that may run at once: its CUDA_VISIBLE_DEVICES, or None."""

    def launch(self, job: Job, slot: str | None) -> Any:
        """Start ``job``; a handle for ``poll`` and ``stop``."""

    def poll(self, handle: Any) -> JobOutcome | None:
        """The job's outcome once it has ended, else None."""

    def stop(self, handle: Any) -> None:
        """Ask the job to stop as Ctrl-C would; ``poll`` reports it after."""

    def close(self) -> None: ...


Started = Callable[[Job, str | None], None]
Ended = Callable[[Job, JobOutcome], None]


def run_jobs(executor: Executor, jobs: list[Job], started: Started, ended: Ended,
             may_launch: Callable[[], str | None] = lambda: None) -> str | None:
    """Run ``jobs`` on ``executor``, as many at once as it has slots, calling ``started`` and
    ``ended`` (in this thread) as each starts and ends. ``may_launch`` is asked before each
    launch: where it gives a reason, no other job starts, the running ones end as they would,
    and the reason is returned (else None). On KeyboardInterrupt the running jobs are stopped
    and reported (``JobOutcome.stopped``), the others never start; it is raised again."""
    pending, running = list(jobs), []
    free = executor.slots(len(jobs))
    refused: str | None = None
    try:
        while pending or running:
            while pending and free:
                if (refused := may_launch()) is not None:
                    pending.clear()
                    break
                job, slot = pending.pop(0), free.pop(0)
                running.append((job, slot, executor.launch(job, slot)))
                started(job, slot)
            for entry in list(running):
                outcome = executor.poll(entry[2])
                if outcome is not None:
                    running.remove(entry)
                    free.append(entry[1])
                    ended(entry[0], outcome)
            time.sleep(POLL_S)
    except KeyboardInterrupt as stopped:
        unsaved = _stop_all(executor, running, ended)
        if unsaved:
            raise stop.with_unsaved(stopped, *unsaved) from stopped
        raise
    finally:
        executor.close()
    return refused


def _stop_all(executor: Executor, running: list, ended: Ended) -> list[WriteError]:
    """Stop the running jobs and report each as it ends (or as not reporting in time); a job
    whose record cannot be saved (a full disk) does not keep the others from being recorded:
    the saves that failed."""
    for _, _, handle in running:
        executor.stop(handle)
    unsaved: list[WriteError] = []

    def report(job: Job, outcome: JobOutcome) -> None:
        try:
            ended(job, outcome)
        except WriteError as e:
            unsaved.append(e)

    deadline = time.monotonic() + STOPPED_REPORT_S
    while running and time.monotonic() < deadline:
        for entry in list(running):
            outcome = executor.poll(entry[2])
            if outcome is not None:
                running.remove(entry)
                outcome.stopped = True
                report(entry[0], outcome)
        time.sleep(POLL_S)
    for job, _, _ in running:
        report(job, JobOutcome(exit_code=None, stopped=True, error="did not report after it was stopped"))
    return unsaved


def failed_outcome(error: BaseException) -> JobOutcome:
    """A job whose executor could not run it or hear back from it: the error's first line."""
    lines = str(error).strip().splitlines()
    first = f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
    return JobOutcome(exit_code=None, error=first)


# ---- local ---------------------------------------------------------------------------------------


class LocalExecutor:
    """Jobs as processes on this machine, one per slot (``local_slots``)."""

    name = "local"

    def __init__(self, slots: list[str | None]) -> None:
        self._slots = slots
        self._pool = ThreadPoolExecutor(max_workers=len(slots), thread_name_prefix="sweep-job")

    def slots(self, jobs: int) -> list[str | None]:
        return list(self._slots)

    def launch(self, job: Job, slot: str | None) -> tuple[Future, threading.Event]:
        stop = threading.Event()
        return self._pool.submit(run_job, replace(job, cuda_devices=slot), stop), stop

    def poll(self, handle: tuple[Future, threading.Event]) -> JobOutcome | None:
        future = handle[0]
        if not future.done():
            return None
        error = future.exception()
        return failed_outcome(error) if error is not None else future.result()

    def stop(self, handle: tuple[Future, threading.Event]) -> None:
        handle[1].set()

    def close(self) -> None:
        self._pool.shutdown(wait=False)


def local_slots(device: str, environ: dict[str, str] | None = None) -> list[str | None]:
    """One slot per GPU this process may use, named by its CUDA_VISIBLE_DEVICES entry (the
    variable's own list where it is set, else ``nvidia-smi``'s count); ``[None]`` (one job at
    a time, on the CPU) for ``--device cpu`` or where ``auto`` finds no GPU."""
    if device == HOST_BACKEND.name:
        return [None]
    gpus = visible_gpus(os.environ if environ is None else environ)
    if not gpus and device != AUTO:
        raise DeviceError(f"--device {device}: no GPU visible to this process (nvidia-smi lists none)")
    return list(gpus) or [None]


def local_device(device: str, environ: dict[str, str] | None = None) -> str:
    """The device ``--device`` gives jobs run on this machine, checked before the sweep writes
    anything: DeviceError where it cannot run here; ``auto`` resolved as each job's compare
    would resolve it (the first accelerator where a GPU is visible and torch has that backend,
    else the CPU)."""
    check_requested(device)
    slots = local_slots(device, environ)
    if device != AUTO:
        return device
    gpu = accelerators()[0].name
    return gpu if slots != [None] and absent(gpu) is None else HOST_BACKEND.name


def visible_gpus(environ: dict[str, str]) -> list[str]:
    """The GPUs a job may be pinned to: CUDA_VISIBLE_DEVICES's entries where it is set (an
    empty value hides every GPU), else ``0..n-1`` for the n GPUs ``nvidia-smi -L`` lists."""
    if "CUDA_VISIBLE_DEVICES" in environ:
        return [x.strip() for x in environ["CUDA_VISIBLE_DEVICES"].split(",") if x.strip() not in ("", "-1")]
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return []
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [str(i) for i, line in enumerate(ln for ln in out.splitlines() if ln.startswith("GPU "))]
