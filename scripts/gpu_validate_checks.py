"""The checks of ``scripts/gpu_validate.py``, one function per check, and the independent
measurements they compare the tool with.

A check function takes the driver's context and one breakdown run (``Run``: its label, run
directory and ``breakdown.json`` as a plain dict) and returns ``Check`` records: PASS or FAIL
with the numbers, or SKIPPED with the reason. To add a check, write one such function and
name it in the driver's ``STEPS`` and give it a cap in a part
(``scripts/gpu_validate_parts.py``).

The measurements run in their own processes, as ``python scripts/gpu_validate_checks.py
MEASUREMENT ... --out FILE.json``, and never import ``inductor_bench``: they load what the
tool wrote (a compiled module, a kernel file, the model file) with plain torch and triton,
and measure it their own way:

- ``graph-time``: the compiled module's ``get_args()`` / ``call()`` under a plain
  ``torch.profiler`` session, on the values the model's first call gave the graph (read from
  the ``inputs.pt`` beside the module with torch alone, as the tool profiles on them), the
  durations of the device events summed per call
  (on CPU, for the dry run only: the top-level CPU ops, as tests/test_e2e_breakdown.py does);
- ``do-bench``: ``triton.testing.do_bench`` of a kernel file's own ``call(get_args())``;
- ``step-time``: the model file's ``make_workload()``, compiled, one step (inference, or
  forward + backward of the sum of the outputs) timed with CUDA events.

The checks live in ``gpu_validate_checks_pure.py`` (on what a run saved and printed) and
``gpu_validate_checks_measured.py`` (against the measurements), their records and readers in
``gpu_validate_records.py``, the measurements in ``gpu_validate_measure.py``; this module
gathers them for the driver and the report, and is the measurements' command line.

This file imports nothing outside the standard library at module level.
"""

from __future__ import annotations

import sys

from gpu_validate_checks_measured import (
    PEAKS_REL,
    check_do_bench,
    check_graph_kernel_time,
    check_peaks,
    check_step_time,
    read_peaks,
)
from gpu_validate_checks_pure import (
    LAUNCH_BOUND_IDLE,
    PLAIN_SLOWER_MAX,
    check_autotune_patch,
    check_busy,
    check_compare_quiet,
    check_disturbed,
    check_kernel_configs,
    check_outside_python,
    check_pipelined_plain,
    check_quiet,
    check_run_ok,
    kept_loads,
    processes_hidden,
)
from gpu_validate_measure import MEASUREMENTS, PEAKS_COPY_BYTES, PEAKS_MATMUL_N, main
from gpu_validate_records import (
    BUSY_MAX_PCT,
    FAIL,
    GRAPH_TIME,
    HARNESS_CATEGORIES,
    KERNEL_COMMAND,
    KERNEL_IN_GRAPH,
    PASS,
    SKIPPED,
    STEP_TIME,
    Check,
    MeasureError,
    Run,
    Tolerance,
    column_samples,
    graphs,
    num,
    pct,
    step_samples,
    torch_setting,
    triton_kernels,
    verdict,
)

__all__ = [
    "BUSY_MAX_PCT", "FAIL", "GRAPH_TIME", "HARNESS_CATEGORIES", "KERNEL_COMMAND", "KERNEL_IN_GRAPH",
    "LAUNCH_BOUND_IDLE", "MEASUREMENTS", "PASS", "PEAKS_COPY_BYTES", "PEAKS_MATMUL_N", "PEAKS_REL",
    "PLAIN_SLOWER_MAX", "SKIPPED", "STEP_TIME", "Check", "MeasureError", "Run", "Tolerance",
    "check_autotune_patch", "check_busy", "check_compare_quiet", "check_disturbed", "check_do_bench",
    "check_graph_kernel_time", "check_kernel_configs", "check_outside_python", "check_peaks",
    "check_pipelined_plain",
    "check_quiet", "check_run_ok", "check_step_time", "column_samples", "graphs", "kept_loads", "main",
    "num", "pct", "processes_hidden", "read_peaks", "step_samples", "torch_setting", "triton_kernels",
    "verdict",
]

if __name__ == "__main__":
    sys.exit(main())
