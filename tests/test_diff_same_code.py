"""Two breakdowns whose graphs compiled the same code, called as often at the same sizes:
`diff` judges none of their changes significant (what moved is the processes'), says so in
its first line, and its gate passes. Hand-built results (synthetic) with module files written
beside them; a module that differs, or the same code called more often, is judged as usual."""

from __future__ import annotations

import json
from pathlib import Path

from inductor_bench.core.diff import diff_results
from inductor_bench.core.vocab import Outcome, Verdict

from .test_diff import base_result, bwd_kernels, fwd_kernels, graph, result, run_cli, write

MODULE = "def call(args):\n    # kernel path: /tmp/{cache}/ab/cabc.py\n    cpp_fused_gelu_0(buf0, buf1)\n"


def _run(root: Path, name: str, r, module: str = MODULE, cache: str = "cache-a") -> Path:
    """A run directory with ``r`` as breakdown.json and ``module`` (in ``cache``) for each graph."""
    run = root / name
    for g in r.graphs:
        g.module = f"graphs/{g.id}/module.py"
        (run / g.module).parent.mkdir(parents=True, exist_ok=True)
        (run / g.module).write_text(module.format(cache=cache))
    write(run / "breakdown.json", r)
    return run


def _slow():
    """The base's work 3 ms slower in the forward's GELU: a 25% slower step, clearly significant."""
    return result([graph("0-forward", fwd_kernels(gelu_ms=4.0)), graph("0-backward", bwd_kernels())])


def test_the_same_code_slower_by_a_quarter_is_no_regression_and_says_why(tmp_path, capsys):
    base = _run(tmp_path, "base", base_result())
    head = _run(tmp_path, "head", _slow(), cache="cache-b")  # another cold cache: other kernel paths
    assert run_cli([str(base), str(head), "--fail-on-regression", "5", "--json", str(tmp_path / "d.json")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith("SAME CODE: base and head compiled the same code for every graph, called as often "
                          "at the same sizes: nothing of theirs changed, and no change below is significant; "
                          "default: step time ")
    assert "between the two runs' profiling processes, the machine's doing" in out
    assert "5 matched kernel(s) and extern op(s), the same code on both sides" in out
    d = json.loads((tmp_path / "d.json").read_text())
    (s,) = d["sections"]
    assert d["status"] == Outcome.SAME_CODE and s["same_code"] is True
    assert s["step"]["verdict"] == Verdict.SAME_CODE and s["step"]["rel_pct"] > 20
    assert {k["status"] for k in s["kernels"]} == {Verdict.SAME_CODE}


def test_other_code_or_other_calls_are_judged_as_usual(tmp_path):
    from inductor_bench.core.rundir import load_breakdown

    base = _run(tmp_path, "base", base_result())
    other = _run(tmp_path, "other", _slow(), module=MODULE.replace("buf1)", "buf2)"))
    assert run_cli([str(base), str(other), "--fail-on-regression", "5"]) == 1  # the code changed: a regression
    b, h = load_breakdown(base), load_breakdown(_run(tmp_path, "more-calls", _slow()))
    b.graphs[0].calls, h.graphs[0].calls = 1.0, 2.0  # the script called its forward twice as often
    d = diff_results(b, h, code_dirs=(base, tmp_path / "more-calls"))
    assert d.status() == Outcome.REGRESSION and not d.sections[0].same_code
    h.graphs[0].calls = b.graphs[0].calls
    h.graphs[0].sizes = {"s77": 64}  # profiled at another size: other work
    b.graphs[0].sizes = {"s77": 24}
    assert not diff_results(b, h, code_dirs=(base, tmp_path / "more-calls")).sections[0].same_code


def test_without_its_modules_a_result_claims_nothing(tmp_path):
    """A breakdown.json read alone, its run directory gone: no module to read, the usual verdict."""
    base = write(tmp_path / "base.json", base_result())
    head = write(tmp_path / "head.json", _slow())
    assert run_cli([str(base), str(head), "--fail-on-regression", "5"]) == 1
