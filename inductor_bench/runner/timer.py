"""Timing worker: every side of a comparison in ONE process, their calls interleaved.

A process on a shared machine settles at a speed of its own and keeps it (measured in
docs/compare-and-diff.md: ±40% between processes timing identical code, each steady within
itself), so two sides timed in two processes differ by that much whatever their code. Here
each side (a model file in a compile mode) is built and compiled from the run's warm cache,
then timed in rounds: in each round a block of calls of every side, the order reversed every
other round, so that drift falls on all sides alike and cancels in the per-round ratios
(``core/stats.py`` ``judge_paired``).

Each side runs with its own process-wide settings, as its breakdown's processes do: every side
is built from the torch settings and Inductor config the process started with, whatever an
earlier side's file set (``torch.set_num_threads(1)``, ``torch.set_float32_matmul_precision``,
``torch._inductor.config.cpp_wrapper = True`` at import), and a side's torch settings as it left
them are put back before each of its blocks (``torch_settings``), outside the calls' timing.
Without that, the last side built set them for all: a file that turned TF32 on, or took one
thread, timed every column so, and its change read as no change.

Where the device table says ``split_in_turns`` (the host), each side's step is then timed
once more in turns with each of its compiled graphs' own calls (``turns.py``, as the compile
worker does for a breakdown), in this same process: the time a column spends outside its
graphs comes from the process that timed its step, never from two unpaired processes.

Run as ``python -m inductor_bench.runner.timer request.json response.json`` (see worker.py).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import Any

from ..core.devices import backend
from ..core.workload import WorkloadOptions
from . import device as dev
from . import machine, torch_settings, turns
from .capture import stop_compile_workers, timed_step
from .dynamo_counts import fx_cache_counts
from .rounds import MIN_ROUNDS, Pace, Plan, interleave, stop_reasons

WARMUP_CALLS = 3
BLOCK_S = 0.05  # aim of each block's length: short, so that drift within a round is small
TURNS_BUDGET_S = 0.5  # per side, for its step and graphs in turns (as a breakdown's default)


def _side(spec: dict[str, Any], device: str) -> Callable[[], float]:
    """Build one side (from its own cache directory) and return one timed call of it, in ms.
    Its first call compiles (from the warm cache) outside any timing."""
    import torch._inductor.config as inductor_config

    opts = WorkloadOptions(**spec["options"])
    if spec.get("cache_dir"):
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = spec["cache_dir"]  # read on every cache lookup
    # static, as its compile worker compiled it first: another side's shapes must not turn
    # this one dynamic on recompiling
    one = timed_step(opts, device, dynamic=False)
    with inductor_config.patch(freezing=bool(opts.freezing)):  # the env var is read at import
        one()
    return one


Built = list[tuple[Callable[[], float], dict[str, Any]]]  # each side's timed call and its settings


def _build(sides: list[dict[str, Any]], device: str) -> Built:
    """Each side built and compiled from the torch settings and Inductor config this process
    started with, as its own compile worker built it, with the torch settings it left."""
    import torch._inductor.config as inductor_config

    start, config = torch_settings.snapshot(), _config_copy(inductor_config)
    built: Built = []
    for spec in sides:
        torch_settings.apply(start)
        _restore(inductor_config, config)
        one = _side(spec, device)
        built.append((one, torch_settings.snapshot()))
    return built


def _config_copy(config: Any) -> dict[str, Any]:
    """The config's values; empty where they cannot be copied (torch 2.5 deep-copies them, and
    a value a model set may refuse that): nothing is put back then."""
    try:
        return config.get_config_copy()
    except Exception:
        return {}


def _restore(config: Any, saved: dict[str, Any]) -> None:
    """Put back each config value that differs from ``saved``."""
    for key, value in _config_copy(config).items():
        with contextlib.suppress(Exception):  # a value that cannot be compared or set stays
            if key in saved and value != saved[key]:
                setattr(config, key, saved[key])


class _SideSettings:
    """Each side's torch settings, put back when another side ran last: once a block (a block
    is one side's calls), outside the time its calls measure."""

    def __init__(self, per_side: list[dict[str, Any]]) -> None:
        self.per_side, self.last = per_side, -1

    def enter(self, i: int) -> None:
        if self.last != i:
            torch_settings.apply(self.per_side[i])
            self.last = i

    def calls(self, built: Built) -> list[Callable[[], float]]:
        """Each side's timed call, its settings entered first."""

        def wrapped(i: int, one: Callable[[], float]) -> Callable[[], float]:
            def call() -> float:
                self.enter(i)
                return one()

            return call

        return [wrapped(i, one) for i, (one, _) in enumerate(built)]


def _turns(sides: list[dict[str, Any]], calls: list[Callable[[], float]], settings: _SideSettings,
           device: str) -> list[Any]:
    """Per side: its step and its graphs' own calls in turns (``turns.time_in_turns``), under
    its own settings, or None where the side names no graphs or the device times graphs
    pipelined."""
    if not backend(device).split_in_turns:
        return [None] * len(sides)
    out: list[Any] = []
    for i, (spec, one) in enumerate(zip(sides, calls, strict=True)):
        paths = list(spec.get("modules") or [])
        settings.enter(i)
        out.append(turns.time_in_turns(one, paths, device, TURNS_BUDGET_S) if paths else None)
    return out


def _raise_recompile_limit(sides: int) -> None:
    """Each side compiles the same forward again (another instance, mode or shape)."""
    import torch._dynamo.config as dc

    for name in ("recompile_limit", "cache_size_limit"):
        if hasattr(dc, name):
            setattr(dc, name, max(getattr(dc, name), 8 + 2 * sides))


def timed_rounds(calls: list[Callable[[], float]], paces: list[Pace], plan: Plan) -> list[list[list[float]]]:
    """The columns' calls interleaved in rounds (``rounds.interleave``), each block started with
    untimed calls of its own (``turns.settled``): a column's first calls after another's run
    cold. In compares of ``models/mlp.py`` on CPU, the first three calls of a block of 20 took
    1.2-2.5x, 1.05-3x and 1.0-1.15x the median of the rest. A column's block size and the
    number of its untimed calls both follow its ``Pace`` (its fastest call so far, the calls
    before the rounds counted): set once from the two calls before the rounds, a column whose
    two calls stalled (50 ms against a 0.6 ms step, seen on a loaded machine) started every
    block with 1 untimed call to the end, its second timed call of each block cold, where the
    other column started with 3."""
    settled = turns.settled(calls, lambda i: turns.warm_calls(paces[i].per_call_s()))
    return interleave(settled, [p.block_size() for p in paces], plan, paces=paces)


def handle(request: dict[str, Any]) -> dict[str, Any]:
    sides = request["sides"]
    device = dev.resolve(request.get("device") or "auto")
    _raise_recompile_limit(len(sides))
    built = _build(sides, device)
    settings = _SideSettings([values for _, values in built])
    calls = settings.calls(built)
    for one in calls:  # settle: allocator, caches, CUDA graph trees (warm up, then record)
        for _ in range(WARMUP_CALLS):
            one()
    stop_compile_workers()  # every side is compiled: nothing compiles beside the timing
    budget = request.get("budget_s")
    plan = Plan(
        budget_s=float(budget) if budget is not None else None,
        max_steps=int(request["max_steps"]),
        min_steps=int(request.get("min_steps", 1)),
        exact=bool(request.get("exact")),
        min_rounds=MIN_ROUNDS,
    )
    block_s = float(request.get("block_s", BLOCK_S))
    paces = [Pace(block_s, plan.max_steps, min(one() for _ in range(2))) for one in calls]
    device_id = dev.monitor_id(device)
    counters, gpu0 = machine.cpu_counters(), machine.device_reading(device, device_id)
    blocks = timed_rounds(calls, paces, plan)
    load = machine.with_device(machine.load_since(counters), gpu0, machine.device_reading(device, device_id))
    return {
        "device": device,
        "blocks": blocks,
        "turns": _turns(sides, calls, settings, device),
        # each side's block size at the end, its pace's (a last block cut by the call limit is shorter)
        "block_steps": [p.block_size() for p in paces],
        "stopped": stop_reasons(blocks, plan),  # why each side stopped: call limit | time budget
        "load": load.to_dict() if load is not None else None,
        # each side's intra-op threads, as its settings left them (a model file may set its own)
        "threads": [values.get("num_threads") for _, values in built],
        "fx_cache": fx_cache_counts(),  # building the columns again: hits, as a rule
    }


if __name__ == "__main__":
    from inductor_bench.runner.worker_entry import worker_main

    worker_main(handle)
