"""A ``while_loop`` model under ``--train``: torch 2.13's while_loop has a backward, but it reads
its trip count with ``.item()``, which Inductor fails on unless
``torch._dynamo.config.capture_scalar_outputs`` is set (or the compile is ``fullgraph=True``), so
Dynamo runs the step eagerly. The run's line says so first, where it led with the WON'T CONVERT
that only follows from it and kept Dynamo's hint to report an issue."""

from __future__ import annotations

from inductor_bench.core import graph_breaks
from inductor_bench.core.backend_failures import SCALAR_CAUSE, WHILE_LOOP_CAUSE, cause_first

# Recorded: torch 2.13.0+cpu, 2026-12-07, `breakdown tests/fixtures/subgraphs/while_loop_mm_model.py
# --train --device cpu` (breakdown.json's extras.graph_breaks; the model's folder shortened to
# /tmp/m and Python's to /py). Plain torch.compile(model) of the same step fails the same way.
RECORDED = [
    {"file": "/tmp/m/while_loop_mm_model.py", "line": 11,
     "reason": "WON'T CONVERT forward /tmp/m/while_loop_mm_model.py line 11", "skipped": True, "count": 2},
    {"file": "/tmp/m/while_loop_mm_model.py", "line": 11,
     "reason": "Backend compiler `inductor` failed with aten._local_scalar_dense.default. Adding a graph break.",
     "skipped": True, "count": 2, "rest": True, "hint": "Report an issue to the backend compiler repo."},
    {"file": "/py/site-packages/torch/_higher_order_ops/while_loop.py", "line": 136,
     "reason": "WON'T CONVERT while_loop torch/_higher_order_ops/while_loop.py line 136", "skipped": True,
     "count": 1, "in_library": "torch/_higher_order_ops/while_loop.py"},
    {"file": "/py/site-packages/torch/_higher_order_ops/while_loop.py", "line": 136,
     "reason": "Backend compiler `inductor` failed with aten._local_scalar_dense.default. Adding a graph break.",
     "skipped": True, "count": 1, "hint": "Report an issue to the backend compiler repo.",
     "in_library": "torch/_higher_order_ops/while_loop.py",
     "reached_from": {"file": "/tmp/m/while_loop_mm_model.py", "line": 20}},
    {"file": "/py/contextlib.py", "line": 105,
     "reason": "Dynamo developers have intentionally marked that the function `disable_cache_limit` in file "
               "`torch/_dynamo/utils.py` should not be traced.", "skipped": True, "count": 1,
     "hint": "Avoid calling the function `disable_cache_limit`."},
]


def test_the_line_says_the_while_loops_backward_needs_scalar_capture():
    line = graph_breaks.nothing_compiled("/tmp/m/while_loop_mm_model.py", False, RECORDED)
    assert line == (
        "/tmp/m/while_loop_mm_model.py: nothing was compiled — make_workload()'s model ran without a "
        "single Inductor graph (Dynamo ran all of it eagerly); graph breaks: 7 at 5 places — "
        "while_loop_mm_model.py:11: Backend compiler `inductor` failed with aten._local_scalar_dense.default. "
        "Adding a graph break. (2 times) (the rest of its function ran eagerly, outside any compiled graph) — "
        + WHILE_LOOP_CAUSE + " · and 4 more (JSON: extras.graph_breaks)")
    assert "Report an issue" not in line and "\n" not in line
    assert "capture_scalar_outputs = True" in WHILE_LOOP_CAUSE and "fullgraph=True" in WHILE_LOOP_CAUSE


def test_the_failure_leads_and_the_breaks_are_otherwise_kept():
    out = cause_first(RECORDED)
    assert out[0]["reason"] == RECORDED[1]["reason"] and out[0]["cause"] == WHILE_LOOP_CAUSE
    assert "hint" not in out[0] and RECORDED[1]["hint"]  # the recorded break is left as it was
    assert out[1:] == [RECORDED[0], *RECORDED[2:]]
    assert graph_breaks.summary_line(RECORDED).startswith(
        "graph breaks: 7 at 5 places — while_loop_mm_model.py:11: Backend compiler `inductor` failed with ")


def test_an_item_outside_a_while_loop_names_the_setting_alone():
    failed = {**RECORDED[1], "file": "/tmp/m/scalar.py"}
    out = cause_first([RECORDED[0], failed])
    assert out[0]["cause"] == SCALAR_CAUSE and out[1] is RECORDED[0]


def test_breaks_without_a_backend_failure_are_untouched():
    others = [RECORDED[0], RECORDED[4]]
    assert cause_first(others) is others
    line = graph_breaks.nothing_compiled("/tmp/m/m.py", False, others)
    assert "(Dynamo's hint: " not in line and "WON'T CONVERT forward" in line  # the first break, as before
