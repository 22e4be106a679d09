"""The project's exceptions. The CLI turns each into one line and an exit code."""

from __future__ import annotations


class BenchError(Exception):
    """Base class: a problem the user can act on. Printed as one line."""

    exit_code = 1


class UsageError(BenchError):
    """Bad input: a missing file, an unknown option value, a file of the wrong kind."""

    exit_code = 2


class DeviceError(BenchError):
    """The requested device is not available (e.g. --device cuda without CUDA)."""

    exit_code = 2


class WorkloadError(BenchError):
    """The user's model raised, or compiled nothing."""

    exit_code = 3


class WorkerError(BenchError):
    """A worker process crashed, timed out, or returned something unreadable."""

    exit_code = 4


class WorkerTimeout(WorkerError):
    """A worker process ran past its --timeout and was killed."""


class TraceError(BenchError):
    """A trace file could not be read or is not a kineto chrome trace."""

    exit_code = 2


class NothingProfiled(TraceError):
    """A trace that holds no device activity and no CPU op: a profiler cycle that stopped
    before its active steps (``tensorboard_trace_handler`` writes one as the profiler exits)."""

    @classmethod
    def in_any_of(cls, n: int, cut: int = 0) -> NothingProfiled:
        """The error where none of ``n`` traces holds anything, ``cut`` of them found cut short
        as they were read (not counted as holding nothing)."""
        why = (f" ({cut} cut short, found so as {'it was' if cut == 1 else 'they were'} read; "
               f"{n - cut} with nothing profiled)") if cut else ""
        return cls(f"none of the {n} traces holds GPU activity or CPU ops{why}: nothing to analyse")


class TimesLost(TraceError):
    """A trace whose device events all carry no time (ts 0, dur 0: the profiler lost them; or
    no dur written), ``core/left_out.py``. ``why``: the reason, without the path, where it is
    not the profiler's loss alone (a trace among others is skipped with it)."""

    def __init__(self, message: str, why: str | None = None) -> None:
        super().__init__(message)
        self.why = why

    def __reduce__(self) -> tuple[type, tuple[str, str | None]]:  # from a worker process, whole
        return type(self), (str(self), self.why)


class CutShort(TraceError):
    """A trace whose JSON ends before it closes (a job killed while torch.profiler exported),
    found as it is read: among several traces it is left out and named with ``why``."""

    why = "cut short (it ends mid-JSON, as when a job is killed while writing it)"


class ResultError(BenchError):
    """A result file is missing, unreadable, or of an unknown schema."""

    exit_code = 2


class RegressionFound(BenchError):
    """A significant regression above the --fail-on-regression threshold."""

    exit_code = 1


class NotComparable(BenchError):
    """--fail-on-regression where a graph or a column was measured on one side only: the
    gate cannot pass what it could not judge."""

    exit_code = 5


class Interrupted(BenchError):
    """Ctrl-C: the run stopped; what it measured before is saved."""

    exit_code = 130
