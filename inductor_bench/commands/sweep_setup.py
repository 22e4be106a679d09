"""A sweep's setup before any job runs: its plan, its baseline, its executor, and the checks of each."""

from __future__ import annotations

from pathlib import Path

import typer

from ..core.compare_modes import parse_modes
from ..core.devices import AUTO, HOST_BACKEND
from ..core.errors import UsageError
from ..core.rundir import HTML_REPORT_FILE, REPORT_FILE
from ..core.sweep import LOGS_DIR, SWEEP_FILE, Sweep
from ..core.sweep_plan import attempt_dir, new_sweep, parse_shard, unreserved
from ..core.vocab import CompileMode
from ..core.workload import FACTORY_KIND
from ..runner.cache import check_caches
from ..runner.compare_names import model_names
from ..runner.rundir import now
from ..runner.sweep_exec import Executor, LocalExecutor, local_device, local_slots
from ..runner.sweep_run import load_sweep
from . import options as o
from .progress import note
from .sweep_options import ExecutorKind, SlurmCluster


def check_executor_installed(kind: ExecutorKind, out: Path) -> None:
    """A new sweep whose executor's library is not installed is refused before its directory
    is made (a saved sweep's directory re-renders without it while no cell is left to run)."""
    if (out / SWEEP_FILE).is_file():
        return
    if kind is ExecutorKind.ray:
        from ..runner.sweep_exec_ray import import_ray

        import_ray()
    elif kind is ExecutorKind.slurm:
        from ..runner.sweep_exec_slurm import import_submitit

        import_submitit()


def check_executor_options(kind: ExecutorKind, ray: dict[str, object], slurm: dict[str, object]) -> None:
    """An executor's own options given for another executor are refused, never ignored."""
    for owner, given in ((ExecutorKind.ray, ray), (ExecutorKind.slurm, slurm)):
        if kind is not owner and (named := [k for k, v in given.items() if v]):
            raise UsageError(f"{', '.join(named)}: for --executor {owner.value}, not {kind.value}")


def given_on_command_line(ctx: typer.Context, name: str) -> bool:
    """Whether the option ``name`` was given on the command line (not left at its default)."""
    return getattr(ctx.get_parameter_source(name), "name", None) == "COMMANDLINE"


def load_baseline(path: Path | None, out: Path) -> Sweep | None:
    if path is None:
        return None
    old = load_sweep(path.absolute()) if path.is_dir() else None
    if old is None:
        why = "not a sweep's directory (no sweep.json)" if path.exists() else "no such directory"
        raise UsageError(f"--baseline {path}: {why}")
    if path.resolve() == out.resolve():  # as diff says of BASE and HEAD that are one result
        note(f"note: --baseline {path} is this sweep's own --out: each model is judged against itself, so no "
             "change can show; give the earlier sweep's directory")
    return old


def plan_sweep(
    models: list[Path],
    modes: str,
    no_eager: bool,
    device: str,
    train: bool,
    dtype: str,
    autocast: bool,
    batch_size: int | None,
    freezing: bool,
    args: list[str],
    shard: str | None,
    executor: str,
) -> Sweep:
    mode_list = [m for m in parse_modes(modes, eager=not no_eager) if m != CompileMode.EAGER]
    for m in models:
        opts = o.workload_options(
            m, device, train, dtype, autocast, CompileMode.DEFAULT, batch_size, freezing)
        if opts.kind != FACTORY_KIND:
            raise UsageError(f"{m}: sweep needs a make_workload() factory, as compare does")
    paths = [str(m.resolve()) for m in models]
    if len(set(paths)) != len(paths):
        raise UsageError("a model file is given twice: each is one cell of the sweep")
    return new_sweep(
        paths,
        unreserved(model_names(paths), (LOGS_DIR, SWEEP_FILE, REPORT_FILE, HTML_REPORT_FILE)),
        mode_list,
        args,
        device=device,
        shard=parse_shard(shard),
        executor=executor,
        created=now(),
    )


def check_device(kind: ExecutorKind, cluster: SlurmCluster, device: str, out: Path):
    """Where the jobs run on this machine: DeviceError, before anything is written, when
    ``device`` cannot run here and a cell is left to run (a finished sweep only renders, on
    any machine); then the function telling which device a ``--device`` value runs on here
    (``auto`` and ``cpu`` are the same sweep on a machine without a GPU). On a cluster each
    node resolves ``auto`` itself: None, the values must match."""
    if kind is ExecutorKind.ray or (kind is ExecutorKind.slurm and cluster is not SlurmCluster.local):
        return None
    saved = load_sweep(out.absolute()) if (out / SWEEP_FILE).is_file() else None
    if saved is None or saved.unfinished():
        local_device(device)
    auto = local_device(AUTO)
    return lambda d: auto if d == AUTO else d


def check_jobs_caches(out: Path, plan: Sweep, *, warm_cache: bool, freezing: bool) -> None:
    """Refuse, before the sweep's directory is made, a cache its compares on the host could not
    compile in (``runner.cache.check_caches``): each job would fail after its compile, and so
    would every retry. A finished sweep only renders."""
    saved = load_sweep(out.absolute()) if (out / SWEEP_FILE).is_file() else None
    if saved is None or saved.unfinished():
        cells = [f"{attempt_dir(c)}/{m}" for c in plan.cells for m in plan.modes]
        check_caches(out.absolute(), cells, fresh=not warm_cache, freezing=freezing, device=plan.device,
                     columns_advice="give the model files names without them")


def executor_factory(
    kind: ExecutorKind, device: str, out: Path, ray_address: str | None, cluster: SlurmCluster, slurm: tuple
) -> object:
    """A function making the executor (only called when a cell is left to run)."""

    def make() -> Executor:
        if kind is ExecutorKind.ray:
            import logging

            from ..runner.sweep_exec_ray import RayExecutor

            return RayExecutor(device, ray_address, logging_level=logging.WARNING)
        if kind is ExecutorKind.slurm:
            from ..runner.sweep_exec_slurm import SlurmExecutor, slurm_params

            local = cluster is SlurmCluster.local
            return SlurmExecutor(
                out.absolute() / ".submitit",
                gpu=device != HOST_BACKEND.name,
                cluster=cluster.value,
                slots=local_slots(device) if local else None,
                params=slurm_params(*slurm),
            )
        return LocalExecutor(local_slots(device))

    return make
