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
                          "default: all graphs ")
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


def test_another_torch_is_not_the_same_code_however_alike_its_modules(tmp_path, capsys):
    """One module text under torch 2.5.1 and 2.14.1: each ran its own ATen and its own compiler,
    so the 25% slower step is judged as measured, and the note says why nothing is same code."""
    b, h = base_result(), _slow()
    b.versions, h.versions = {"torch": "2.5.1"}, {"torch": "2.14.1"}
    base, head = _run(tmp_path, "base", b), _run(tmp_path, "head", h, cache="cache-b")
    assert run_cli([str(base), str(head), "--fail-on-regression", "5"]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert not out.startswith("SAME CODE") and "same code" not in out.split("warning")[0]
    assert ("torch versions differ: base 2.5.1, head 2.14.1; the same source runs each one's own ATen and "
            "compiler, so no kernel is judged the same code") in out
    h.versions = {"torch": "2.5.1"}  # the same torch: the same code again
    write(head / "breakdown.json", h)
    assert run_cli([str(base), str(head), "--fail-on-regression", "5"]) == 0


# synthetic, in the form torch 2.5 writes a C++ kernel: its prefix header by its path in the cache
MODULE_25 = ("cpp_fused_gelu_0 = async_compile.cpp_pybinding(['float*'], '''\n"
             '#include "/tmp/{cache}/vu/cvuvp4i7roujum4xemrf.h"\n'
             'extern "C"  void  kernel(float* in_out_ptr0) {{ }}\n'
             "''')\n\n\ndef call(args):\n    # kernel path: /tmp/{cache}/ab/cabc.py\n"
             "    cpp_fused_gelu_0(buf0, buf1)\n")


def test_a_torch_25_kernel_including_its_header_from_another_cache_is_the_same_code(tmp_path):
    from inductor_bench.core.compiled_from import code_digest
    from inductor_bench.core.rundir import load_breakdown

    a, b = MODULE_25.format(cache="cache-a"), MODULE_25.format(cache="runs/other/cache")
    assert a != b and code_digest(a) == code_digest(b)
    assert code_digest(a) != code_digest(a.replace("cvuvp4i7", "dxxxp4i7"))  # another header: other code
    base = _run(tmp_path, "base", base_result(), module=MODULE_25)
    head = _run(tmp_path, "head", _slow(), module=MODULE_25, cache="runs/other/cache")
    d = diff_results(load_breakdown(base), load_breakdown(head), code_dirs=(base, head))
    assert d.status() == Outcome.SAME_CODE


def test_a_result_diffed_against_itself_says_so_once_on_stderr(tmp_path, capsys):
    """`diff RUN RUN` (or RUN and RUN/breakdown.json) diffs one result against itself: a note on
    stderr says every change is zero by construction; the report and the exit status are as
    before. Two runs of the same code get no note."""
    base = _run(tmp_path, "base", base_result())
    head = _run(tmp_path, "head", base_result())
    note = f"note: BASE and HEAD are one result ({base}): each figure is diffed against itself"
    for other in (base, base / "breakdown.json", base / "graphs" / ".."):
        assert run_cli([str(base), str(other), "--fail-on-regression", "5"]) == 0
        captured = capsys.readouterr()
        assert captured.err.count(note) == 1
        assert captured.out.startswith("SAME CODE")
    assert run_cli([str(base), str(head)]) == 0
    assert "note:" not in capsys.readouterr().err
