"""The parts of the GPU validation: which steps each part runs and the time each step may take.

A device command may run 10 minutes, and a session has 15 minutes of device time, the
machine's start included, so the validation runs in parts, each one device command
(``scripts/gpu_validate.sh --part N OUT``), and the parts in sessions that have a GPU, as many
as fit in one (``sessions()``).
Every part's step caps add up to no more than the part's budget less its reserve: a step that
runs long is stopped at its own cap and every later step of the part still gets its whole
share; nothing is left out by design. Part 1 holds what matters most.

    python scripts/gpu_validate_parts.py limit N     # the part's hard limit in seconds (the wrapper)
    python scripts/gpu_validate_parts.py list        # the parts, their steps and caps, the device calls

This file imports nothing outside the standard library; ``scripts/gpu_validate.py`` maps each
step key to its function.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

RESERVE_S = 20.0  # kept in every part for stopping an overrunning step, the bundles and the report
WATCHDOG_S = 10.0  # past the budget + this, the driver stops the step in flight
KILL_AFTER_S = 10.0  # the wrapper's SIGKILL after its SIGTERM (timeout -k)
# What a part spends before its first step: the probe (importing torch) and the wheel install.
START_S = 15.0
# A session's device time, every start, idle wait and call counted; what a machine's start and
# the transfers of the working tree take out of it (a minute or more each, seen here).
SESSION_DEVICE_S = 900.0
SESSION_START_S = 90.0  # 35 s per call on the H200 (2026-11-27), twice, and a margin


@dataclass(frozen=True)
class StepCap:
    key: str
    cap_s: float  # the most it may take on a GPU
    need_s: float  # not started with less
    dry_cap_s: float  # the most it may take in a dry run on CPU


@dataclass(frozen=True)
class Part:
    number: int
    title: str
    limit_s: float  # the wrapper's hard limit (timeout); the device command's timeout_s is above it
    steps: tuple[StepCap, ...]

    @property
    def budget_s(self) -> float:
        """The driver's budget: the hard limit less the watchdog and the wrapper's kill margin."""
        return self.limit_s - WATCHDOG_S - KILL_AFTER_S

    @property
    def steps_s(self) -> float:
        return sum(s.cap_s for s in self.steps)

    @property
    def dry_budget_s(self) -> float:
        return sum(s.dry_cap_s for s in self.steps) + RESERVE_S + START_S

    def device_timeout_s(self) -> int:
        """``timeout_s`` of the device call: the hard limit, its kill margin and 10 s to spare."""
        return int(self.limit_s + KILL_AFTER_S + 10)


# Caps from a fresh H200 machine (torch 2.11, 2026-11-27): compiling mlp's training step
# cold took 54 s (Triton's cache empty), a transformer_block breakdown about 60 s, the GPU
# tests (each compiles its own models, records the kernel files) over 200 s.
PARTS: tuple[Part, ...] = (
    Part(1, "mlp and transformer_block training in mode default, with the independent checks; "
         "kernel --max-autotune", 480.0, (
             StepCap("breakdown:mlp", 115, 70, 400),
             StepCap("breakdown:transformer", 105, 60, 500),
             StepCap("check:quiet", 2, 0, 5),
             StepCap("check:graph-time", 40, 10, 400),
             StepCap("check:step-time", 50, 10, 500),
             StepCap("kernel", 50, 15, 60),
             StepCap("check:do-bench", 25, 8, 60),
             StepCap("check:peaks", 15, 8, 30),
         )),
    Part(2, "mlp and transformer_block training in mode reduce-overhead, with the independent "
         "checks; compare", 480.0, (
             StepCap("breakdown:mlp-ro", 80, 40, 400),
             StepCap("breakdown:transformer-ro", 90, 45, 500),
             StepCap("check:graph-time-ro", 40, 10, 400),
             StepCap("check:step-time-ro", 50, 10, 500),
             StepCap("compare", 160, 45, 900),
         )),
    Part(3, "the load readings beside another GPU process; the disturbance benchmark", 300.0, (
        StepCap("load", 90, 30, 400),
        StepCap("disturbance", 155, 60, 900),
    )),
    Part(4, "the other example models: training and inference, default and reduce-overhead", 300.0, (
        StepCap("matrix", 245, 30, 900),
    )),
    Part(5, "pytest -m gpu: the GPU tests, which compile their own models", 480.0, (
        StepCap("pytest", 405, 120, 300),
    )),
)


def part(number: int) -> Part:
    for p in PARTS:
        if p.number == number:
            return p
    raise KeyError(number)


def device_call(p: Part) -> str:
    return (f'run(command="scripts/gpu_validate.sh --part {p.number} $OUT/p{p.number}", '
            f'carry=[".whl"], timeout_s={p.device_timeout_s()})')


def sessions() -> list[list[Part]]:
    """The parts in order, grouped into GPU sessions: a session's device calls and its machine's
    start fit its device time."""
    groups: list[list[Part]] = [[]]
    for p in PARTS:
        used = sum(q.device_timeout_s() for q in groups[-1])
        if groups[-1] and SESSION_START_S + used + p.device_timeout_s() > SESSION_DEVICE_S:
            groups.append([])
        groups[-1].append(p)
    return groups


def listing() -> str:
    lines = []
    for p in PARTS:
        lines.append(f"part {p.number}: {p.title}")
        lines.append(f"  hard limit {p.limit_s:.0f} s; budget {p.budget_s:.0f} s; steps {p.steps_s:.0f} s "
                     f"+ start {START_S:.0f} s + reserve {RESERVE_S:.0f} s")
        for s in p.steps:
            lines.append(f"  {s.key:<26} at most {s.cap_s:>4.0f} s (not started under {s.need_s:.0f} s)")
        lines.append(f"  device call: {device_call(p)}")
    total = sum(p.device_timeout_s() for p in PARTS)
    lines.append(f"all parts: at most {total} s of device commands ({total / 60:.1f} min), "
                 f"machine starts not counted")
    lines.append(f"GPU sessions ({SESSION_DEVICE_S / 60:.0f} min of device time each, about "
                 f"{SESSION_START_S:.0f} s of it for the machine's start):")
    for i, group in enumerate(sessions(), 1):
        used = sum(p.device_timeout_s() for p in group)
        names = ("parts " if len(group) > 1 else "part ") + ", ".join(str(p.number) for p in group)
        lines.append(f"  session {i}: {names}, at most {used} s of commands")
    lines.append("  a session with a GPU runs the first of these whose parts docs/gpu-validation.md "
                 "has no report of")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "limit":
        try:
            print(f"{part(int(argv[1])).limit_s:.0f}")
        except (KeyError, ValueError):
            print(f"gpu_validate: no part {argv[1]!r}; parts: "
                  + ", ".join(str(p.number) for p in PARTS), file=sys.stderr)
            return 2
        return 0
    if argv == ["list"]:
        print(listing())
        return 0
    print("usage: gpu_validate_parts.py limit N | list", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
