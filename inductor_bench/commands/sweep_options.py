"""The options of `inductor-bench sweep` (``commands/sweep.py``), and the options it hands
every model's compare."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated

import typer

from ..runner.sweep_job import STOP_GRACE_S
from . import options as o


class ExecutorKind(str, enum.Enum):
    local = "local"
    ray = "ray"
    slurm = "slurm"


class SlurmCluster(str, enum.Enum):
    slurm = "slurm"
    local = "local"


Models = Annotated[
    list[Path],
    typer.Argument(
        parser=o.a_path, metavar="MODEL", help="Model files defining make_workload(), one job each.",
        show_default=False
    ),
]
Out = Annotated[
    Path,
    typer.Option(
        "--out",
        "-o",
        parser=o.a_path,
        help="The sweep's directory: new, empty, or holding "
        "this same sweep (then its finished cells are skipped, the others retried).",
    ),
]
ExecutorOpt = Annotated[
    ExecutorKind,
    typer.Option(
        "--executor",
        help="local: one job per visible GPU (pinned with CUDA_VISIBLE_DEVICES), on the CPU one at "
        "a time; ray: Ray tasks with one GPU each (pip install 'inductor-bench[ray]'); slurm: one "
        "Slurm job per model through submitit (pip install 'inductor-bench[slurm]').",
    ),
]
Shard = Annotated[
    str | None,
    typer.Option(
        "--shard",
        metavar="I/N",
        help="Run only the I-th of N even slices of the model list (CI matrices; I from 1).",
    ),
]
JobTimeout = Annotated[
    float | None,
    typer.Option(
        "--job-timeout",
        metavar="S",
        help="Stop a job (one model's compare) after S seconds, as Ctrl-C stops it (what it measured "
        f"is saved; killed if it has not ended {STOP_GRACE_S:g} s later) [default: no limit].",
    ),
]
Baseline = Annotated[
    Path | None,
    typer.Option(
        "--baseline",
        metavar="OLD_DIR",
        parser=o.a_path,
        help="An earlier sweep's directory: each model and mode judged against it.",
    ),
]
FailOnRegression = Annotated[
    float | None, o.fail_on_regression("any model's step time in any mode (against --baseline's)",
                                       ", or a model's baseline ran another workload "
                                       "(batch size, dtype, autocast)")
]
RayAddress = Annotated[
    str | None,
    typer.Option(
        "--ray-address", help="A running Ray cluster (ray://host:10001, auto) [default: start one here]."
    ),
]
SlurmPartition = Annotated[str | None, typer.Option("--slurm-partition", help="Slurm partition.")]
SlurmTime = Annotated[
    int | None, typer.Option("--slurm-time", metavar="MIN", min=1, help="Slurm time limit per job, minutes.")
]
SlurmOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--slurm-opt",
        metavar="KEY=VALUE",
        help="Any other submitit parameter (mem_gb=32, cpus_per_task=8, "
        "account=perf, constraint=h100, ...); repeat it.",
    ),
]
SlurmClusterOpt = Annotated[
    SlurmCluster,
    typer.Option(
        "--slurm-cluster", help="local: submitit's local executor, the same jobs on this machine (no Slurm)."
    ),
]


def compare_args(
    train: bool,
    dtype: str,
    autocast: bool,
    batch_size: int | None,
    freezing: bool,
    no_eager: bool,
    repeat: int | None,
    step_budget: float,
    iterations: int | None,
    windows: int,
    timeout: float,
    warm_cache: bool,
) -> list[str]:
    """The options every model's compare gets (the sweep's identity holds them)."""
    args = [
        "--dtype",
        dtype,
        "--windows",
        str(windows),
        "--timeout",
        _number(timeout),
        "--step-budget",
        _number(step_budget),
    ]
    flags = {
        "--train": train,
        "--autocast": autocast,
        "--freezing": freezing,
        "--no-eager": no_eager,
        "--warm-cache": warm_cache,
    }
    args += [flag for flag, on in flags.items() if on]
    for name, value in (("--batch-size", batch_size), ("--repeat", repeat), ("--iterations", iterations)):
        if value is not None:
            args += [name, str(value)]
    return args


def _number(x: float) -> str:
    """``x`` as its compare gets it: short (``300``, ``0.5``), and the value given, every digit
    kept (``0.1234567``, not ``0.123457``)."""
    short = f"{x:g}"
    return short if float(short) == x else repr(x)
