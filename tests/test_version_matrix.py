"""The version matrix's own check of a graph break (scripts/version_matrix.py), on hand-built
(synthetic) breakdown.json extras: the place and torch's reason must both be right."""

from __future__ import annotations

import sys

from .conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import version_matrix as vm  # noqa: E402

CASE = next(c for c in vm.CASES if c.break_at)
LINE = next(i for i, t in enumerate((ROOT / CASE.model).read_text().splitlines(), 1) if CASE.break_at in t)


def _bd(*breaks: dict) -> dict:
    return {"extras": {"graph_breaks": list(breaks)}}


def test_a_break_at_its_line_that_names_the_call_passes():
    reason = "Unsupported: builtin: print [<class 'ConstantVariable'>] False"
    assert vm.check_break(_bd({"file": f"/x/{CASE.model}", "line": LINE, "reason": reason}), CASE) == []


def test_a_break_whose_reason_is_only_its_place_fails():
    """As torch 2.6's records read before the tool knew their "Reason:" line."""
    reason = f"Graph break in user code at /x/graph_break_script.py:{LINE}"
    (failure,) = vm.check_break(_bd({"file": CASE.model, "line": LINE, "reason": reason}), CASE)
    assert failure.startswith(f"the graph break at graph_break_script.py:{LINE} does not say 'print'")


def test_a_break_elsewhere_fails_and_names_where_it_was():
    (failure,) = vm.check_break(_bd({"file": CASE.model, "line": LINE + 1, "reason": "print"}), CASE)
    assert failure == (f"no graph break reported at graph_break_script.py:{LINE} "
                       f"(breaks at: [('graph_break_script.py', {LINE + 1})])")
