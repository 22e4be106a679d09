"""The same code on both sides: diff's first line says which processes moved the step.

A breakdown's first figure is its graphs' own calls, measured in its profiling processes; a
compare's is the real step, timed in the process that timed its columns' steps. `diff` of
two compares of the same code (two `compare models/mlp.py /tmp/mlp.py --modes default
--no-eager --train` runs, torch 2.13 CPU) said the step moved `between the two runs'
profiling processes`, which measured no step of theirs (synthetic sections, built here).
"""

from __future__ import annotations

import pytest

from inductor_bench.core.diff import Diff, SectionDiff
from inductor_bench.core.stats import judge
from inductor_bench.core.summaries import summarize
from inductor_bench.core.vocab import StepSource
from inductor_bench.render.diff_verdict import verdict_line
from inductor_bench.render.doc import new_doc


def same_code_diff(kind: str, source: str) -> Diff:
    step = judge(summarize([1.9, 2.0, 2.1, 2.0, 2.0, 2.0]), summarize([2.1, 2.2, 2.3, 2.2, 2.2, 2.2]), 0.10)
    section = SectionDiff(mode="default", step=step, step_source=source, same_code=True)
    return Diff(kind=kind, base_model="mlp", head_model="mlp", device="cpu", min_rel=0.10, sections=[section])


@pytest.mark.parametrize("kind,source,where,figure", [
    ("breakdown", StepSource.HARNESS, "profiling processes", "all graphs"),
    ("compare", StepSource.MODEL, "step-timing processes", "step time"),
])
def test_the_step_of_the_same_code_moved_between_the_processes_that_measured_it(kind, source, where, figure):
    line = verdict_line(same_code_diff(kind, source), new_doc())
    assert line.startswith("SAME CODE: ")
    assert f"default: {figure} 2.000 -> 2.200 ms (+10.0% " in line
    assert line.endswith(f") between the two runs' {where}, the machine's doing")
