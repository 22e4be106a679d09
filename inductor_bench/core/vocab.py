"""The words results are made of: statuses, verdicts, modes and roles, each spelled once.

They are plain strings (results are JSON and reports print them as they are), grouped in
namespaces so that a reader sees which set a value belongs to.
"""

from __future__ import annotations


class Status:
    """Of a graph, a compile mode, or a whole run."""

    OK = "ok"
    PARTIAL = "partial"  # a run: something was measured, something failed
    FAILED = "failed"
    TIMEOUT = "timeout"
    SKIPPED = "skipped"
    RUNNING = "running"  # a run directory whose run has not finished (or was killed)
    INTERRUPTED = "interrupted"  # stopped by Ctrl-C; what was measured before is kept


class Verdict:
    """Of one measured change (core/stats.py)."""

    SIGNIFICANT = "significant"
    WITHIN_NOISE = "within noise"
    TOO_FEW = "too few samples"
    # interleaved rounds with enough disturbed to set the interval's bounds (compare_summary.few_steady):
    # a figure, but no interval to judge it by
    NOT_JUDGED = "not judged"
    SAME_CODE = "same code"  # both sides compiled the same code: a change is the processes'
    # the same code, its graph called more or fewer times: a change per step is the calls'
    CALLS_CHANGED = "calls changed"
    # the two sides ran other workloads (batch size, dtype, autocast): no change is judged
    OTHER_WORKLOAD = "other workload"


class Change:
    """Of one kernel between two runs, or between baseline and max-autotune."""

    ADDED = "added"
    REMOVED = "removed"
    SLOWER = "slower"
    FASTER = "faster"
    SAME_KERNEL = "same kernel"


class Outcome:
    """Of a whole diff: the gate reads it."""

    REGRESSION = "regression"
    FASTER = Change.FASTER
    NO_CHANGE = Verdict.WITHIN_NOISE
    INCONCLUSIVE = "inconclusive"
    # a graph or a mode measured on one side only, or the sides ran other workloads
    NOT_COMPARABLE = "not comparable"
    SAME_CODE = Verdict.SAME_CODE  # every graph compiled to the same code, run as often, at the same sizes


class Stop:
    """Why a column of the interleaved timing stopped (``runner/rounds.py``)."""

    CALL_LIMIT = "call limit"  # it ran its most calls
    TIME_BUDGET = "time budget"  # its calls used up --step-budget


class CompileMode:
    """``torch.compile`` modes, and eager (no compile) as a baseline."""

    DEFAULT = "default"
    REDUCE_OVERHEAD = "reduce-overhead"
    MAX_AUTOTUNE = "max-autotune"
    MAX_AUTOTUNE_NO_CUDAGRAPHS = "max-autotune-no-cudagraphs"
    EAGER = "eager"
    ALL = (DEFAULT, REDUCE_OVERHEAD, MAX_AUTOTUNE, MAX_AUTOTUNE_NO_CUDAGRAPHS, EAGER)
    # Modes that wrap the compiled graphs in CUDA graphs where the device has them.
    WITH_CUDA_GRAPHS = (REDUCE_OVERHEAD, MAX_AUTOTUNE)
    # Modes whose only difference from "default" is CUDA graphs.
    CUDA_GRAPHS_ONLY = (REDUCE_OVERHEAD,)


class Tuning:
    """How ``inductor-bench kernel`` autotunes one Triton kernel file (not a compile mode)."""

    BASELINE = "baseline"  # the switches baked into the file
    MAX_AUTOTUNE = "max-autotune"  # what torch.compile(mode="max-autotune") switches on
    ALL = (BASELINE, MAX_AUTOTUNE)


class Role:
    FORWARD = "forward"
    BACKWARD = "backward"
    INFERENCE = "inference"
    UNKNOWN = "unknown"
    ALL = (FORWARD, BACKWARD, INFERENCE)


class StepSource:
    """Where a diff's step time comes from."""

    HARNESS = "harness"  # breakdown: the graphs' own harness calls, added per iteration
    MODEL = "model call"  # compare: the real model call (CUDA graphs included)


class AutotuneRoute:
    """How ``breakdown --autotune-top`` finds what max-autotune would buy."""

    KERNELS = "cuda-kernels"  # Triton kernel files re-tuned one by one
    RECOMPILE = "cpu-recompile"  # the whole model recompiled with mode max-autotune
