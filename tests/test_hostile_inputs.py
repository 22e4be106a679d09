"""Hostile input gets one line naming the file and what is wrong, and the documented exit 2
(bad input; README's exit table), never an internal error (70) or a "cannot write" (74). The
traces here are synthetic: hand-built events, one step and one kernel, with one field broken."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from inductor_bench.runner import rundir as runner_rundir

from .test_saved_run_faults import one_line, run_cli

FIXTURES = Path(__file__).parent / "fixtures"
RUN = FIXTURES / "runs" / "cpu_mlp_train_stalled"
TRACE = FIXTURES / "hta" / "triton_example_triton_example.json.gz"
STEP = '{"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100}'


def _trace(tmp_path: Path, kernel: str, name: str = "t.json") -> Path:
    """A trace of one step and one kernel event, written as raw JSON text (``kernel`` its body)."""
    p = tmp_path / name
    p.write_text('{"traceEvents": [' + STEP + ', {"ph": "X", "cat": "kernel", "pid": 0, "tid": 7, '
                 + kernel + "}]}")
    return p


@pytest.mark.parametrize("fields", [
    '"name": "k", "ts": 10, "dur": "inf", "args": {"correlation": 5}',
    '"name": "k", "ts": "NaN", "dur": 5, "args": {"correlation": 5}',
    '"name": "k", "ts": 10, "dur": "Infinity", "args": {"correlation": 5}',
    '"name": "k", "ts": NaN, "dur": 5, "args": {"correlation": 5}',
    '"name": "k", "ts": 10, "dur": 1e999, "args": {"correlation": 5}',
], ids=["inf-string", "nan-string", "infinity-string", "nan-literal", "overflow-literal"])
def test_a_time_that_is_not_finite_is_refused(capsys, tmp_path, fields):
    path = _trace(tmp_path, fields)
    code, out, err = run_cli(capsys, "analyze", str(path))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert err.startswith(f"inductor-bench: error: {path}: complete event 'k' has a ts or dur that is not finite (ts ")


def test_a_kernel_named_by_a_number_is_refused(capsys, tmp_path):
    path = _trace(tmp_path, '"name": 12, "ts": 10, "dur": 5, "args": {"correlation": 5}')
    code, _, err = run_cli(capsys, "analyze", str(path))
    assert code == 2
    assert f"{path}: a complete event's name is not a string but int 12" in err


@pytest.mark.parametrize("value", ['{"a": 1}', "[1, 2]"])
def test_an_id_that_is_an_object_is_refused(capsys, tmp_path, value):
    path = _trace(tmp_path, f'"name": "k", "ts": 10, "dur": 5, "args": {{"correlation": {value}}}')
    code, _, err = run_cli(capsys, "analyze", str(path))
    assert code == 2
    assert f"{path}: event 'k': args.correlation is not an id (a number or a string)" in err


def _damaged_run(tmp_path: Path, change) -> Path:
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    doc = json.loads((run / "breakdown.json").read_text())
    change(doc["graphs"][0])
    (run / "breakdown.json").write_text(json.dumps(doc))
    return run


@pytest.mark.parametrize("change, bad, n", [
    (lambda g: g["left_out"].append(len(g["wall_samples_ms"]) + 100), 139, 39),
    (lambda g: g.update(wall_samples_ms=[]), 0, 0),
], ids=["left-out-past-the-samples", "no-samples"])
@pytest.mark.parametrize("command", ["report", "diff"])
def test_a_left_out_iteration_the_samples_do_not_hold_is_damage(capsys, tmp_path, change, bad, n, command):
    run = _damaged_run(tmp_path, change)
    argv = ["report", str(run)] if command == "report" else ["diff", str(RUN), str(run)]
    code, _, err = run_cli(capsys, *argv)
    assert code == 2
    first = json.loads((RUN / "breakdown.json").read_text())["graphs"][0]
    assert len(first["wall_samples_ms"]) == 39 and first["left_out"][0] == 0  # the fixture as assumed
    assert (f"{run / 'breakdown.json'}: damaged: graphs[0-forward].left_out: {bad} is no iteration of "
            f"its {n} wall_samples_ms") in err


def test_a_directory_that_cannot_be_read_is_bad_input(capsys, tmp_path, monkeypatch):
    (tmp_path / "t.json").write_text("{}")
    real = Path.iterdir

    def refused(self):
        if self == tmp_path:
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "iterdir", refused)
    code, _, err = run_cli(capsys, "analyze", str(tmp_path))
    assert code == 2
    assert err.strip() == f"inductor-bench: error: {tmp_path}: cannot read this directory (Permission denied)"


def test_json_that_cannot_be_written_is_named_as_asked(capsys, tmp_path, monkeypatch):
    def refused(path, *a, **k):
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    monkeypatch.setattr(runner_rundir, "open", refused, raising=False)
    out = tmp_path / "out.json"
    code, _, err = run_cli(capsys, "analyze", str(TRACE), "--json", str(out))
    assert code == 74
    assert err.strip() == f"inductor-bench: error: {out}: cannot write (Permission denied)"


def test_a_run_directory_is_pointed_to_report(capsys):
    code, _, err = run_cli(capsys, "analyze", str(RUN))
    assert code == 2
    assert f"`inductor-bench report {RUN}` shows it" in err


RANKS = FIXTURES / "ranks"


@pytest.mark.parametrize("traces, schema", [
    ([TRACE], "inductor-bench/analyze"),
    (sorted(RANKS.glob("rank-[01].json.gz")), "inductor-bench/analyze-ranks"),
    (sorted((RANKS / "cpu_gloo_cycles").glob("*.json.gz")), "inductor-bench/analyze-rank-cycles"),
])
def test_a_json_file_that_is_no_trace_is_skipped_and_named_in_the_report(capsys, tmp_path, traces, schema):
    """The report and its JSON name the file left out, whichever shape the traces beside it
    take (one trace, ranks, ranks' cycles); nothing is said of it on stderr alone."""
    for t in traces:
        shutil.copy(t, tmp_path / t.name)
    (tmp_path / "config.json").write_text('{"lr": 0.1}')
    code, out, err = run_cli(capsys, "analyze", str(tmp_path), "--format", "json")
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert doc["schema"] == schema and doc["not_traces"] == [str(tmp_path / "config.json")]
    assert doc.get("trace", str(tmp_path / TRACE.name)) == str(tmp_path / TRACE.name)  # one trace: read alone
    for fmt, named in (("text", "config.json"), ("markdown", "- `config.json`")):
        code, out, _ = run_cli(capsys, "analyze", str(tmp_path), "--format", fmt)
        assert code == 0
        assert f"{named}: skipped, not a profiler trace (no traceEvents)" in out.splitlines()


def test_a_json_file_that_is_no_trace_is_named_beside_profiler_cycles(capsys, tmp_path):
    from .test_analyze_cycles import CYCLE_A, CYCLE_B, handler_file

    handler_file(tmp_path, 7, 3_000, CYCLE_B)
    handler_file(tmp_path, 7, 20_000, CYCLE_A)
    (tmp_path / "metrics.json").write_text("[1, 2]")
    code, out, err = run_cli(capsys, "analyze", str(tmp_path), "--format", "json")
    doc = json.loads(out)
    assert code == 0 and err == "" and doc["schema"] == "inductor-bench/analyze-cycles"
    assert doc["not_traces"] == [str(tmp_path / "metrics.json")] and len(doc["cycles"]) == 2
    code, out, _ = run_cli(capsys, "analyze", str(tmp_path))
    assert "metrics.json: skipped, not a profiler trace (no traceEvents)" in out.splitlines()


def test_a_directory_of_no_trace_is_refused_naming_what_it_holds(capsys, tmp_path):
    (tmp_path / "config.json").write_text('{"lr": 0.1}')
    code, _, err = run_cli(capsys, "analyze", str(tmp_path))
    assert code == 2
    assert "no trace files (*.json, *.json.gz) in this directory (config.json: no traceEvents)" in err


# -- the typed decoder's runs: a trace of thousands of events is read run by run, where
# "inf" and "NaN" written as strings read as numbers and an id may be any JSON value --------


def _kernels(n: int, **bad) -> list[dict]:
    """Synthetic: one step, ``n`` kernel events, the middle one with the fields of ``bad``."""
    evs = [{"ph": "X", "cat": "kernel", "name": f"k{i % 3}", "pid": 0, "tid": 7, "ts": 10 + i, "dur": 0.5,
            "args": {"correlation": i}} for i in range(n)]
    evs[n // 2] = evs[n // 2] | {"name": "bad"} | bad
    return [json.loads(STEP) | {"dur": 10 + n}] + evs


def _write(tmp_path: Path, events: list[dict], **top) -> Path:
    path = tmp_path / "t.json"
    path.write_text(json.dumps({**top, "traceEvents": events}).replace('"LIT"', "1e999"))
    return path


@pytest.mark.parametrize("bad, shown", [
    ({"dur": "inf"}, "dur inf"), ({"ts": "NaN"}, "ts nan"), ({"dur": "-Infinity"}, "dur -inf"),
    ({"dur": "LIT"}, "dur inf"), ({"cat": "cpu_op", "dur": "Infinity"}, "dur inf"),
    ({"cat": "cuda_runtime", "ts": "inf"}, "ts inf"),
], ids=["dur-inf", "ts-nan", "dur-minus-inf", "dur-1e999", "op", "launch"])
def test_a_time_that_is_not_finite_is_refused_in_a_long_trace(capsys, tmp_path, bad, shown):
    path = _write(tmp_path, _kernels(3000, **bad))
    line = one_line(*run_cli(capsys, "analyze", str(path)))
    assert line.startswith(f"{path}: complete event 'bad' has a ts or dur that is not finite (")
    assert shown in line


@pytest.mark.parametrize("bad, field", [
    ({"args": {"correlation": {"a": 1}}}, "args.correlation"),
    ({"cat": "cpu_op", "args": {"External id": [1, 2]}}, "args.External id"),
    ({"cat": "cuda_runtime", "args": {"correlation": {"a": 1}}}, "args.correlation"),
    ({"pid": {"a": 1}}, "pid"), ({"cat": "cpu_op", "tid": [1]}, "tid"),
], ids=["kernel-correlation", "op-external-id", "launch-correlation", "pid", "tid"])
@pytest.mark.parametrize("n", [1, 3000], ids=["short", "long"])
def test_an_id_that_is_an_object_is_refused_in_any_trace(capsys, tmp_path, bad, field, n):
    path = _write(tmp_path, _kernels(n, **bad))
    line = one_line(*run_cli(capsys, "analyze", str(path)))
    assert line.startswith(f"{path}: event 'bad': {field} is not an id (a number or a string) but ")


def test_a_time_past_a_float_is_refused(capsys, tmp_path):
    path = _trace(tmp_path, '"name": "k", "ts": 1' + "0" * 400 + ', "dur": 5, "args": {"correlation": 5}')
    assert one_line(*run_cli(capsys, "analyze", str(path))).startswith(f"{path}: complete event 'k' has no numeric")


def test_a_base_time_that_is_not_finite_is_no_base_time(capsys, tmp_path):
    path = _write(tmp_path, _kernels(10), baseTimeNanoseconds="LIT")
    code, out, err = run_cli(capsys, "analyze", str(path), "--format", "json")
    assert code == 0, err
    assert json.loads(out)["kernels"]


def _memory(ts: float, total) -> dict:
    return {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": ts, "s": "t",
            "args": {"Device Type": 1, "Device Id": 0, "Bytes": 100, "Total Allocated": total}}


@pytest.mark.parametrize("total", ["LIT", "inf", "NaN", "BIG"])
@pytest.mark.parametrize("n", [2, 3000], ids=["short", "long"])
def test_a_memory_total_that_is_not_finite_is_left_out(capsys, tmp_path, total, n):
    """A total that is no finite number is left out, as one that is no number is."""
    events = _kernels(4) + [_memory(2 + i / n, 1000 + i) for i in range(n)] + [_memory(3, total)]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}).replace('"LIT"', "1e999").replace('"BIG"', "1" + "0" * 400))
    code, out, err = run_cli(capsys, "analyze", str(path), "--format", "json")
    assert code == 0, err
    (memory,) = json.loads(out)["memory"]
    assert memory["steps"] == [{"start": 900.0, "peak": 1000.0 + n - 1, "end": 1000.0 + n - 1}]


# -- a directory that cannot be searched (chmod 000): reading, not writing, fails --------------


def _unsearchable(monkeypatch, d: Path) -> None:
    """``d`` as chmod 000 leaves it to a user other than root: it is there, but neither listed
    nor looked into."""
    stat, iterdir = Path.stat, Path.iterdir

    def no_stat(self, *a, **k):
        if d in self.parents:
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return stat(self, *a, **k)

    def no_listing(self):
        if self == d:
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return iterdir(self)

    monkeypatch.setattr(Path, "stat", no_stat)
    monkeypatch.setattr(Path, "iterdir", no_listing)


@pytest.mark.parametrize("argv, named", [
    (["analyze", "{d}"], "{d}: cannot read this directory (Permission denied)"),
    (["analyze", "{d}/t.json"], "{d}/t.json: cannot read (Permission denied)"),
    (["report", "{d}"], "{d}: cannot read (Permission denied)"),
    (["report", "{d}", "--reanalyze"], "{d}: cannot read (Permission denied)"),
    (["report", "{d}/breakdown.json"], "{d}/breakdown.json: cannot read (Permission denied)"),
    (["diff", str(RUN), "{d}"], "HEAD {d}: cannot read (Permission denied)"),
    (["kernel", "{d}/k.py"], "{d}/k.py: cannot read (Permission denied)"),
], ids=["analyze-dir", "analyze-file", "report-dir", "reanalyze-dir", "report-file", "diff", "kernel"])
def test_a_path_that_cannot_be_searched_is_bad_input(capsys, tmp_path, monkeypatch, argv, named):
    d = tmp_path / "locked"
    shutil.copytree(RUN, d)
    _unsearchable(monkeypatch, d)
    line = one_line(*run_cli(capsys, *(a.format(d=d) for a in argv)))
    assert line == named.format(d=d)


def test_a_directory_that_cannot_be_searched_is_bad_input_for_real(tmp_path):
    """The same with the permission itself: a user other than root, or root without the
    capability that overrides permissions."""
    d = tmp_path / "locked"
    d.mkdir()
    (d / "t.json").write_text(_kernels_text())
    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("root reads a directory chmod 000; setpriv, to drop that, is not installed")
        prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]
        if subprocess.run([*prefix, "true"], capture_output=True).returncode != 0:
            pytest.skip("setpriv may not drop the capability here")
    d.chmod(0)
    try:
        for argv in (["analyze", str(d)], ["analyze", str(d / "t.json")], ["report", str(d)],
                     ["report", str(d), "--reanalyze"]):
            done = subprocess.run([*prefix, sys.executable, "-m", "inductor_bench.cli", *argv],
                                  capture_output=True, text=True, timeout=120,
                                  env=os.environ | {"PYTHONPATH": str(Path(__file__).parent.parent)})
            assert done.returncode == 2, done.stderr
            assert done.stderr.startswith(f"inductor-bench: error: {argv[1]}: cannot read"), done.stderr
    finally:
        d.chmod(0o755)


def _kernels_text() -> str:
    return json.dumps({"traceEvents": _kernels(4)})


# -- a saved run or result given to analyze ---------------------------------------------------


def test_a_compare_run_or_a_result_file_is_pointed_to_report(capsys, tmp_path):
    compare = FIXTURES / "results" / "cpu_mlp_compare"
    line = one_line(*run_cli(capsys, "analyze", str(compare)))
    assert f"`inductor-bench report {compare}` shows it; its graphs' traces are in {compare}/<mode>/graphs/" in line
    for result in (RUN / "breakdown.json", compare / "compare.json"):
        line = one_line(*run_cli(capsys, "analyze", str(result)))
        assert line == f"{result}: an inductor-bench result, not a profiler trace: `inductor-bench report {result}` shows it"


def test_a_profiler_trace_given_to_report_diff_or_kernel_is_pointed_to_analyze(capsys, tmp_path):
    """report on a trace said 'not an inductor-bench breakdown or compare result', on a gzipped
    one 'not readable as JSON ('utf-8' codec can't decode byte 0x8b ...)', on a trace handler's
    directory 'no compare.json or breakdown.json in this directory'."""
    gz = FIXTURES / "cpu_mlp_train" / "0-forward" / "trace.json.gz"
    plain = tmp_path / "host_1.1.pt.trace.json"
    plain.write_text(_kernels_text())
    lines = {
        ("report", str(plain)): f"{plain}: a profiler trace, not an inductor-bench result: "
                                f"`inductor-bench analyze {plain}` reads it",
        ("diff", str(plain), str(plain)): f"BASE {plain}: a profiler trace, not an inductor-bench result: "
                                          f"`inductor-bench analyze {plain}` reads it",
        ("report", str(gz)): f"{gz}: gzipped, not a saved result: `inductor-bench analyze {gz}` reads a profiler trace",
        ("report", str(tmp_path)): f"{tmp_path}: no compare.json or breakdown.json in this directory; it holds "
                                   f"profiler traces ({plain.name}, ...): `inductor-bench analyze {tmp_path}` reads them",
        ("kernel", str(tmp_path), "k"): f"{tmp_path}: no breakdown.json in this directory; it holds profiler traces "
                                        f"({plain.name}, ...): `inductor-bench analyze {tmp_path}` reads them",
    }
    assert {argv: one_line(*run_cli(capsys, *argv)) for argv in lines} == lines


@pytest.mark.parametrize("command", ["report", "diff"])
def test_a_window_the_windows_do_not_hold_is_damage(capsys, tmp_path, command):
    """windows_ms shorter than the graph's window index was an internal error (IndexError)."""
    run = _damaged_run(tmp_path, lambda g: g.update(windows_ms=[1.0]))
    first = json.loads((RUN / "breakdown.json").read_text())["graphs"][0]
    assert first["window"] == 1 and len(first["windows_ms"]) == 5  # the fixture as assumed
    argv = ["report", str(run)] if command == "report" else ["diff", str(RUN), str(run)]
    side = "HEAD " if command == "diff" else ""  # diff names the side it was given as
    assert one_line(*run_cli(capsys, *argv)) == (
        f"{side}{run / 'breakdown.json'}: damaged: graphs[0-forward].window: 1 is no window of its 1 windows_ms")
