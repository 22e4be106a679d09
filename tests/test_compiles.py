"""Dynamo's compiles: why a function was compiled again, how long each compile took, and where
it hit its recompile limit (``core/compiles.py``, ``runner/dynamo_counts.py``).

The records are ``tests/fixtures/compiles/recorded.json``, recorded with each torch named
there by ``record.py`` in that folder, each in a new empty Inductor cache: a function compiled
four times, each time for another reason (a tensor that requires grad, with a backward; a new
size; a new dtype), under a recompile limit of 3. The results the lines are rendered from are
synthetic, built by hand in the tests around those records."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest

from inductor_bench.core import compiles
from inductor_bench.core.results import BreakdownResult, GraphResult
from inductor_bench.core.shape import check
from inductor_bench.render.breakdown import render_breakdown

RECORDED = json.loads((Path(__file__).parent / "fixtures" / "compiles" / "recorded.json").read_text())
TORCHES = [k for k in RECORDED if not k.startswith("_")]

# What each compile of record.py's f met, in torch's words (the oldest compile's reason first):
# 0/1 was made for a tensor that requires grad, 0/2 for a new size, 0/3 (over the limit) for float64.
# Torch 2.5 names the tensor by its source, 'L['x']'.
REQUIRES_GRAD = "tensor 'x' requires_grad mismatch. expected requires_grad={}"
SIZE = "tensor 'x' size mismatch at index 0. expected 4, actual 8"
DTYPE = "tensor 'x' dtype mismatch. expected Float, actual Double"


def truth(torch_version: str) -> dict[int, list[str]]:
    name = "'L['x']'" if torch_version.startswith("2.5") else "'x'"
    grad, size, dtype = (s.replace("'x'", name) for s in (REQUIRES_GRAD, SIZE, DTYPE))
    return {1: [f"0/0: {grad.format(0)}"], 2: [f"0/0: {size}", f"0/1: {grad.format(1)}"],
            3: [f"0/0: {dtype}", f"0/1: {dtype}", f"0/2: {dtype}"]}


@pytest.mark.parametrize("torch_version", TORCHES)
def test_each_recorded_recompile_is_read_with_its_reasons_oldest_compile_first(torch_version):
    recorded = RECORDED[torch_version]["records"]
    read = [compiles.record(x["frame_id"], x["frame_compile_id"], x["payload"]) for x in recorded]
    assert read == [{"frame_id": 0, "frame_compile_id": n, "reasons": truth(torch_version)[n]} for n in (1, 2, 3)]


@pytest.mark.parametrize("torch_version", TORCHES)
def test_the_recorded_limit_warning_lands_on_the_compile_that_met_it(torch_version):
    (warning,) = RECORDED[torch_version]["warnings"]
    assert warning["msg"].startswith(compiles.LIMIT_WARNING)
    hit = compiles.limit_hit(warning["args"])
    name = "cache_size_limit" if torch_version.startswith(("2.5", "2.6")) else "recompile_limit"  # renamed in 2.7
    assert hit == {"name": name, "value": "3", "function": "f (record.py:55)"}
    records = [compiles.record(x["frame_id"], x["frame_compile_id"], x["payload"])
               for x in RECORDED[torch_version]["records"]]
    merged = compiles.merge(records, [(warning["frame_id"], warning["frame_compile_id"], hit)])
    assert [x.get("limit") for x in merged] == [None, None, hit]


def test_a_payload_is_one_reason_or_a_json_list_and_each_is_cut_to_size():
    assert compiles.reasons("0/0: a") == ["0/0: a"]
    assert compiles.reasons('[\n"0/1: b",\n"0/0: a"\n]') == ["0/0: a", "0/1: b"]
    assert compiles.reasons("[\n]") == []
    assert compiles.reasons("[not json") == ["[not json"]
    long = compiles.reasons("0/0: " + "x" * 500)[0]
    assert len(long) == compiles.REASON_CHARS and long.endswith("…")
    assert compiles.limit_hit(["recompile_limit"]) is None
    assert compiles.limit_hit(["recompile_limit", 8, "somewhere"])["function"] == "somewhere"


def test_a_limit_hit_without_a_reasons_record_stands_alone():
    hit = {"name": "recompile_limit", "value": "8", "function": "f (m.py:1)"}
    assert compiles.merge([], [(2, 8, hit)]) == [{"frame_id": 2, "frame_compile_id": 8, "limit": hit}]
    r = BreakdownResult(model="m", compiles=compiles.merge([], [(2, 8, hit)]))
    assert compiles.lines(r) == [
        "WARNING: f (m.py:1) hit torch._dynamo.config.recompile_limit (8): Dynamo compiled it no more, and a "
        "call that failed the guards of all its compiles ran eagerly, outside any compiled graph; remove what "
        "makes it recompile, or raise the limit"]


@pytest.mark.parametrize("torch_version", TORCHES)
def test_each_compiles_recorded_times_are_kept_under_its_ids(torch_version):
    rec = RECORDED[torch_version]
    timed = [(m["frame_id"], m["frame_compile_id"], compiles.seconds(m["name"], m["metrics"])) for m in rec["metrics"]]
    merged = compiles.merge([], [], timed)
    fwd = {m["frame_compile_id"]: m["metrics"] for m in rec["metrics"] if m["name"] == "compilation_metrics"}
    bwd = {m["frame_compile_id"]: m["metrics"] for m in rec["metrics"] if m["name"] == "bwd_compilation_metrics"}
    assert sorted(bwd) == [1]  # the only compile whose graph ran a backward
    want = []
    for n in sorted(fwd):
        secs = {"frame": fwd[n]["entire_frame_compile_time_s"]}
        if fwd[n].get("inductor_compile_time_s") is not None:
            secs["inductor"] = fwd[n]["inductor_compile_time_s"]
        if n in bwd:
            secs["backward"] = bwd[n]["inductor_compile_time_s"]
        want.append({"frame_id": 0, "frame_compile_id": n, "seconds": secs})
    assert merged == want
    assert compiles.seconds("compilation_metrics_runtime", fwd[0]) == {} and compiles.seconds("x", None) == {}


def _g(gid: str, frame: int, compile_id: int, calls: float | None = None) -> GraphResult:
    return GraphResult(id=gid, role=gid.rsplit("-", 1)[1], frame_id=frame, frame_compile_id=compile_id,
                       calls=calls, compiled_from={"name": "f", "file": "/m/record.py", "line": 55})


def _recorded_run() -> BreakdownResult:
    """record.py's run as a breakdown would have it: three compiles measured, the fourth over the
    limit; a script, each graph's calls counted."""
    rec = RECORDED["2.13.0+cpu"]
    records = [compiles.record(x["frame_id"], x["frame_compile_id"], x["payload"]) for x in rec["records"]]
    (w,) = rec["warnings"]
    timed = [(m["frame_id"], m["frame_compile_id"], compiles.seconds(m["name"], m["metrics"])) for m in rec["metrics"]]
    found = compiles.merge(records, [(w["frame_id"], w["frame_compile_id"], compiles.limit_hit(w["args"]))], timed)
    graphs = [_g("0-inference", 0, 0, 1), _g("0.1-forward", 0, 1, 1), _g("0.1-backward", 0, 1, 1),
              _g("0.2-inference", 0, 2, 1), _g("1-inference", 1, 0, 1)]
    return BreakdownResult(model="record", script=True, graphs=graphs, compiles=found)


def test_the_report_says_why_each_compile_was_made_in_the_reports_names():
    first, warning = compiles.lines(_recorded_run())
    assert first == (
        "recompiles: f (record.py:55) was compiled 3 times, again each time one of Dynamo's guards failed: "
        "0 (0-inference); "
        f"0.1 (0.1-forward, 0.1-backward) after a guard failed on 0: {REQUIRES_GRAD.format(0)}; "
        f"0.2 (0.2-inference) after a guard failed on 0: {SIZE}; on 0.1: {REQUIRES_GRAD.format(1)}. "
        "A call runs one of them; the all-graphs row adds each as often as it was called")
    assert warning == (
        "WARNING: f (record.py:55) hit torch._dynamo.config.recompile_limit (3): Dynamo compiled it no more, "
        "and a call that failed the guards of all 3 of its compiles ran eagerly, outside any compiled graph "
        f"(the call that met it: a guard failed on 0, 0.1 and 0.2: {DTYPE}); remove what makes it "
        "recompile, or raise the limit")
    text = render_breakdown(_recorded_run())
    assert first in text and warning in text


def test_the_report_gives_each_graphs_compile_time_as_torch_recorded_it():
    m = {(x["frame_compile_id"], x["name"]): x["metrics"] for x in RECORDED["2.13.0+cpu"]["metrics"]}
    f0, f1, b1, f2, f3 = (m[k] for k in ((0, "compilation_metrics"), (1, "compilation_metrics"),
                                          (1, "bwd_compilation_metrics"), (2, "compilation_metrics"),
                                          (3, "compilation_metrics")))
    frame = "entire_frame_compile_time_s"
    total = f0[frame] + f1[frame] + b1["inductor_compile_time_s"] + f2[frame] + f3[frame]
    line = compiles.time_line(_recorded_run())
    assert line == (
        "compile times (torch's record of each compile: a forward's is its whole frame's, Dynamo, AOTAutograd "
        "and Inductor; a backward's is Inductor's): "
        f"0-inference {f0[frame]:.2f} s (Inductor {f0['inductor_compile_time_s']:.2f} s); "
        f"0.1-forward {f1[frame]:.2f} s (Inductor {f1['inductor_compile_time_s']:.2f} s), "
        f"0.1-backward {b1['inductor_compile_time_s']:.2f} s; "
        f"0.2-inference {f2[frame]:.2f} s (Inductor {f2['inductor_compile_time_s']:.2f} s); "
        f"{total:.2f} s in all (4 compiles)")  # 0.3, over the limit, made no graph
    assert compiles.time_line(BreakdownResult(model="m")) is None
    assert line in " ".join(render_breakdown(_recorded_run()).split())


def test_without_records_the_compiles_are_still_named_and_a_single_compile_gets_no_line():
    r = BreakdownResult(model="m", graphs=[_g("0-forward", 0, 0), _g("0-backward", 0, 0), _g("0.1-forward", 0, 1),
                                           _g("0.1-backward", 0, 1), _g("1-forward", 1, 0)])
    assert compiles.lines(r) == [
        "recompiles: f (record.py:55) was compiled 2 times, again each time one of Dynamo's guards failed "
        "(another size, dtype or grad mode): 0 (0-forward, 0-backward); 0.1 (0.1-forward, 0.1-backward). "
        "A call runs one of them; the all-graphs row adds them all, once each"]
    assert compiles.lines(BreakdownResult(model="m", graphs=[_g("0-forward", 0, 0), _g("1-forward", 1, 0)])) == []


def test_the_markdown_report_keeps_the_reasons_readable():
    text = render_breakdown(_recorded_run(), "markdown")
    line = next(ln for ln in text.splitlines() if "recompile_limit" in ln)
    assert "dtype mismatch. expected Float, actual Double" in line and "<" not in line


def test_the_recompiles_are_saved_with_the_result_and_read_back():
    r = _recorded_run()
    saved = json.loads(r.to_json())
    check(BreakdownResult, saved)
    assert saved["extras"]["compiles"] == r.compiles
    assert BreakdownResult.from_dict(saved).compiles == r.compiles


def test_the_compile_worker_recorder_hears_this_torchs_recompiles_and_its_limit():
    """Dynamo itself (the eager backend: no Inductor compile needed for its guards) recompiling
    a function three times under a limit of 3, heard by the compile worker's recorder, with the
    time of each compile."""
    torch = pytest.importorskip("torch")
    from inductor_bench.runner import dynamo_counts, trace_log

    def f(x):
        return x.sin() + 1

    torch._dynamo.reset()
    rec = dynamo_counts.attach_compile_recorder()
    limit = "recompile_limit" if hasattr(torch._dynamo.config, "recompile_limit") else "cache_size_limit"
    try:
        with torch._dynamo.config.patch(**{limit: 3}):
            fc = torch.compile(f, backend="eager")
            for x in (torch.randn(4), torch.randn(4, requires_grad=True), torch.randn(8),
                      torch.randn(8, dtype=torch.float64)):
                fc(x)
    finally:
        logging.getLogger(trace_log.TRACE_LOGGER).removeHandler(rec)
        logging.getLogger(dynamo_counts.LIMIT_LOGGER).removeHandler(rec)
        torch._dynamo.reset()
    found = rec.found()
    want = truth(torch.__version__)
    assert [(x["frame_compile_id"], x.get("reasons")) for x in found] == [(0, None)] + [(n, want[n]) for n in (1, 2, 3)]
    # each compile that made a graph timed (the eager backend: no Inductor, no backward compile)
    assert all(x["seconds"]["frame"] > 0 and set(x["seconds"]) == {"frame"} for x in found[:3])
    assert found[-1]["limit"]["name"] == limit and found[-1]["limit"]["value"] == "3"
    assert found[-1]["limit"]["function"].startswith("f (test_compiles.py:")


def test_diff_names_a_recompile_limit_hit_new_in_head_though_its_line_moved():
    from inductor_bench.core.diff import diff_results
    from inductor_bench.render.diff import render_diff

    from .test_graph_breaks import MEASURED

    base = BreakdownResult.from_dict(json.loads(MEASURED.read_text()))
    head = BreakdownResult.from_dict(json.loads(MEASURED.read_text()))
    hit = {"name": "recompile_limit", "value": "8", "function": "f (m.py:3)"}
    moved = {"name": "recompile_limit", "value": "8", "function": "g (m.py:20)"}
    base.compiles = [{"frame_id": 1, "frame_compile_id": 8, "reasons": [], "limit": {**moved, "function": "g (m.py:12)"}}]
    head.compiles = [{"frame_id": 0, "frame_compile_id": 8, "reasons": [], "limit": hit},
                       {"frame_id": 1, "frame_compile_id": 8, "reasons": [], "limit": moved}]
    d = diff_results(base, head)
    (s,) = d.sections
    assert (s.limits_added, s.limits_removed) == (["f (m.py:3) (recompile_limit 8)"], [])
    assert d.to_dict()["sections"][0]["limits_added"] == ["f (m.py:3) (recompile_limit 8)"]
    assert "recompile limit hit new in head: f (m.py:3) (recompile_limit 8): its calls past it ran eagerly" in (
        render_diff(d))
    d = diff_results(head, base)
    assert "recompile limit hit gone in head: f (m.py:3) (recompile_limit 8)" in render_diff(d)


def test_compare_names_the_columns_whose_model_hit_the_recompile_limit():
    from inductor_bench.core.compare import CompareResult
    from inductor_bench.render.compare import render_compare

    path = Path(__file__).parent / "fixtures" / "results" / "cpu_mlp_compare" / "compare.json"
    result = CompareResult.from_dict(json.loads(path.read_text()))
    compiled = [m for m in result.modes if m.breakdown is not None]
    assert "recompile_limit" not in render_compare(result)
    hit = {"name": "recompile_limit", "value": "8", "function": "MLP.forward (mlp.py:19)"}
    compiled[-1].breakdown.compiles = [{"frame_id": 0, "frame_compile_id": 8, "reasons": [], "limit": hit}]
    text = " ".join(render_compare(result).split())
    assert (f"{compiled[-1].label}: WARNING: MLP.forward (mlp.py:19) hit torch._dynamo.config.recompile_limit (8): "
            "Dynamo compiled it no more, and a call that failed the guards of its compile ran eagerly"
            ) in text


LIMITED_SCRIPT = '''
import torch

for limit in ("recompile_limit", "cache_size_limit"):  # the first from torch 2.7
    if hasattr(torch._dynamo.config, limit):
        setattr(torch._dynamo.config, limit, 2)


def f(x):
    return x.sin() + 1


fc = torch.compile(f)
for _ in range(2):
    fc(torch.randn(4))
    fc(torch.randn(4, requires_grad=True))
    fc(torch.randn(4, dtype=torch.float64))  # over the limit of 2: eager
'''


@pytest.mark.slow
@pytest.mark.e2e
def test_a_script_past_its_recompile_limit_is_warned_of_end_to_end(tmp_path):
    """A real script whose function is compiled twice (the second time for a tensor that
    requires grad) and then called in float64 past a limit of 2: the report names both compiles
    and why the second was made, and warns that the float64 calls ran eagerly."""
    from .test_dynamic_shapes import breakdown

    script = tmp_path / "limited.py"
    script.write_text(LIMITED_SCRIPT)
    p = breakdown(script, tmp_path, "run")
    assert p.returncode == 0, p.stderr
    report = " ".join((tmp_path / "run" / "report.txt").read_text().split())
    assert re.search(r"recompiles: f \(limited\.py:\d+\) was compiled 2 times, again each time one of Dynamo's "
                     r"guards failed: 0 \(0-inference\); 0\.1 \(0\.1-forward\) after a guard failed on 0: tensor "
                     r"'.+?' requires_grad mismatch\. expected requires_grad=0\. A call runs one of them", report)
    assert re.search(r"WARNING: f \(limited\.py:\d+\) hit torch\._dynamo\.config\.(recompile|cache_size)_limit "
                     r"\(2\): Dynamo compiled it no more, and a call that failed the guards of all 2 of its "
                     r"compiles ran eagerly, outside any compiled graph \(the call that met it: a guard failed on "
                     r"0 and 0\.1: tensor '.+?' dtype mismatch\. expected Float, actual Double\)", report)
    (hit,) = [x for x in json.loads((tmp_path / "run.json").read_text())["extras"]["compiles"] if "limit" in x]
    assert (hit["frame_id"], hit["frame_compile_id"], hit["limit"]["value"]) == (0, 2, "2")


def test_the_recorder_keeps_evidence_only_and_never_fails_the_compile():
    """Synthetic records: one it cannot order (a frame id that is not a number beside one that is)
    leaves it with nothing rather than an exception; a record of another name is not kept."""
    from inductor_bench.runner.dynamo_counts import CompileRecorder

    def record(md: dict, payload: str | None = None) -> logging.LogRecord:
        r = logging.LogRecord("torch.__trace", logging.DEBUG, "", 0, "", (), None)
        r.metadata, r.payload = md, payload
        return r

    rec = CompileRecorder()
    rec.emit(record({"compilation_metrics": {"entire_frame_compile_time_s": 1.5}, "frame_id": 0,
                     "frame_compile_id": 0}))
    rec.emit(record({"artifact": {"name": "something_else"}, "frame_id": 0, "frame_compile_id": 1}, "0/0: x"))
    assert rec.found() == [{"frame_id": 0, "frame_compile_id": 0, "seconds": {"frame": 1.5}}]
    rec.emit(record({"artifact": {"name": "recompile_reasons"}, "frame_id": "a", "frame_compile_id": 1}, "0/0: x"))
    assert rec.found() == []


# a failed value guard as torch 2.13.0+cpu wrote it: the recompile_reasons payloads of a
# TORCH_TRACE of rc.py (a function reading c.lr, called again after c.lr changed, then with
# another size), recorded on this project's CPU machine on 2026-12-02
VALUE_GUARD = ("0/0: not ___dict_contains('lr', G['c'].__dict__)                   # return x * c.lr  "
               "# mp/ex3/rc.py:7 in f\nUser stack trace:\n  File \"/tmp/ex3/rc.py\", line 7, in f\n"
               "    return x * c.lr")
VALUE_GUARD_LIST = ('[\n"0/1: tensor \'x\' size mismatch at index 0. expected 4, actual 5",\n"0/0: not '
                    '___dict_contains(\'lr\', G[\'c\'].__dict__)                   # return x * c.lr  # mp/ex3/rc'
                    '.py:7 in f\\nUser stack trace:\\n  File \\"/tmp/ex3/rc.py\\", line 7, in f\\n    return x * '
                    'c.lr"\n]')
SHORT = "0/0: not ___dict_contains('lr', G['c'].__dict__) (rc.py:7 in f: return x * c.lr)"


def test_a_value_guard_reads_as_the_guard_and_its_line_not_its_stack():
    assert compiles.reasons(VALUE_GUARD) == [SHORT]
    assert compiles.reasons(VALUE_GUARD_LIST) == [SHORT, "0/1: tensor 'x' size mismatch at index 0. expected 4, actual 5"]
    # no stack: the file from torch's comment; no comment: as it is
    assert compiles.guard_text("0/0: L['n'] == 3  # y = x * n  # a/b/m.py:9 in g") == "0/0: L['n'] == 3 (m.py:9 in g: y = x * n)"
    assert compiles.guard_text("0/0: tensor 'x' size mismatch") == "0/0: tensor 'x' size mismatch"
    # a checkout whose path holds a space, torch's comment cutting it at its front
    spaced = ("0/0: L['lr'] == 0.1  # return x * lr  # mp/sp ace/d/test_m.py:358 in f\n"
              'User stack trace:\n  File "/tmp/sp ace/d/test_m.py", line 358, in f\n    return x * lr\n')
    assert compiles.guard_text(spaced) == "0/0: L['lr'] == 0.1 (test_m.py:358 in f: return x * lr)"


def test_a_learning_rate_guard_gets_the_tensor_learning_rate_hint():
    lr = ("3/0: self.param_groups[0]['lr'] == 0.001  # for group in self.param_groups:  # optim/adam.py:229 in step"
          "\nUser stack trace:\n  File \"/x/torch/optim/adam.py\", line 229, in step\n    for group in self.param_groups:")
    graphs = [_g("3-inference", 3, 0, 3), _g("3.1-inference", 3, 1, 9)]
    run = BreakdownResult(model="m", script=True, graphs=graphs, compiles=[compiles.record(3, 1, lr)])
    (line,) = compiles.lines(run)
    assert "after a guard failed on 3: self.param_groups[0]['lr'] == 0.001 (adam.py:229 in step: for group in " \
           "self.param_groups:)" in line and line.endswith(compiles.LR_HINT)
    other = BreakdownResult(model="m", script=True, graphs=graphs, compiles=[compiles.record(3, 1, VALUE_GUARD)])
    assert compiles.LR_HINT not in compiles.lines(other)[0]


def test_this_torchs_value_guard_is_heard_with_its_line():
    """Dynamo (eager backend) recompiling a function after a float it read changed: the reason
    the compile worker's recorder keeps names the guard and the line, not the stack."""
    torch = pytest.importorskip("torch")
    from inductor_bench.runner import dynamo_counts, trace_log

    groups = [{"lr": 0.1}]

    def f(x):
        return x * groups[0]["lr"]

    line = f.__code__.co_firstlineno + 1
    torch._dynamo.reset()
    rec = dynamo_counts.attach_compile_recorder()
    try:
        fc = torch.compile(f, backend="eager")
        fc(torch.randn(4))
        groups[0]["lr"] = 0.2
        fc(torch.randn(4))
    finally:
        logging.getLogger(trace_log.TRACE_LOGGER).removeHandler(rec)
        logging.getLogger(dynamo_counts.LIMIT_LOGGER).removeHandler(rec)
        torch._dynamo.reset()
    said = [r for x in rec.found() for r in x.get("reasons") or []]
    assert said and all("User stack trace" not in r for r in said), said
    assert any(r.endswith(f"(test_compiles.py:{line} in f: return x * groups[0][\"lr\"])") for r in said), said


@pytest.mark.parametrize("tensor_lr", [False, True])
def test_the_learning_rate_hint_holds_on_this_torch(tensor_lr):
    """The hint's claim, on this torch: a compiled Adam step under an LR scheduler compiles again
    at a new float learning rate (a guard on param_groups[0]['lr']), and once with a tensor one."""
    torch = pytest.importorskip("torch")
    from inductor_bench.runner import dynamo_counts, trace_log

    model = torch.nn.Linear(8, 2)
    opt = torch.optim.Adam(model.parameters(), lr=torch.tensor(1e-3) if tensor_lr else 1e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    step = torch.compile(opt.step, backend="eager")
    torch._dynamo.reset()
    rec = dynamo_counts.attach_compile_recorder()
    try:
        for _ in range(3):
            model(torch.randn(4, 8)).sum().backward()
            step()
            opt.zero_grad()
            sched.step()
    finally:
        logging.getLogger(trace_log.TRACE_LOGGER).removeHandler(rec)
        logging.getLogger(dynamo_counts.LIMIT_LOGGER).removeHandler(rec)
        torch._dynamo.reset()
    said = [r for x in rec.found() for r in x.get("reasons") or []]
    if tensor_lr:
        assert not any(compiles._LR_GUARD.search(r) for r in said), said
    else:
        assert any(compiles._LR_GUARD.search(r) for r in said), said
