"""Graph breaks, read from what torch recorded of them (tests/fixtures/graph_breaks/: the
artifacts of torch 2.6.0, 2.13.0 and 2.14.1, the counters of 2.5.1, recorded on this project's CPU
machine), saved with the result and shown in the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inductor_bench.core import graph_breaks as gb
from inductor_bench.core.results import BreakdownResult
from inductor_bench.core.workload import factory_lookalikes
from inductor_bench.render.breakdown import render_breakdown

from .conftest import ROOT

FIXTURE = Path(__file__).parent / "fixtures" / "graph_breaks" / "recorded.json"
RECORDED = json.loads(FIXTURE.read_text())
MEASURED = Path(__file__).parent / "fixtures" / "results" / "cpu_mlp_train_autotune" / "breakdown.json"
RECORD_PY = "/work/main/tests/fixtures/graph_breaks/record.py"  # the path as recorded


def _line_of(text: str) -> int:
    """The line of record.py holding ``text`` (counted here, independently of the parser)."""
    lines = (FIXTURE.parent / "record.py").read_text().splitlines()
    return next(i for i, ln in enumerate(lines, 1) if text in ln)


@pytest.mark.parametrize("version", ["2.13.0+cpu", "2.14.1+cu130"])
def test_the_artifacts_give_each_break_its_place_reason_and_whether_it_ran_eagerly(version):
    skipped, resumed = (gb.parse(p) for p in RECORDED[version]["payloads"])
    assert skipped == {
        "file": RECORD_PY, "line": _line_of('print("inside")'), "count": 1, "skipped": True,
        "reason": "Dynamo does not know how to trace builtin operator `print` with argument types "
                  "['str'] (has_kwargs False)",
        "hint": "Avoid calling builtin `print` with argument types ['str']. Consider using an equivalent "
                "alternative function/method to `print`.",
    }
    assert resumed == {
        "file": RECORD_PY, "line": _line_of("torch._dynamo.graph_break()"), "count": 1, "skipped": False,
        "reason": "User-inserted graph break. Message: None",
        "hint": "Remove the `torch._dynamo.graph_break()` call.",
    }


def test_torch_2_6s_artifacts_give_the_place_and_dynamos_exception_as_the_reason():
    """2.6 writes "Reason: Unsupported: ..." where later versions write "Graph Break Reason:"
    and an explanation (before, every 2.6 break read "Graph break in user code at ...")."""
    cm, brk = (gb.parse(p) for p in RECORDED["2.6.0+cu124"]["payloads"])
    assert (cm["file"], cm["line"]) == (RECORD_PY, _line_of("with cm():"))
    assert cm["reason"] == "Unsupported: 'skip function cm in file /root/.pyenv/versions/3.11.7/lib/python3.11/contextlib.py'"
    assert (brk["file"], brk["line"]) == (RECORD_PY, _line_of("torch._dynamo.graph_break()"))
    assert brk["reason"].startswith("Unsupported: 'skip function graph_break in file ")
    assert "hint" not in cm and "hint" not in brk


def test_without_artifacts_the_counters_give_the_reasons_without_a_place():
    rec = RECORDED["2.5.1+cu124"]
    assert rec["payloads"] == []
    found = gb.collect(gb.from_counter(k, n) for k, n in rec["counters"].items())
    assert [(b["file"], b["line"], b["count"]) for b in found] == [("", 0, 1), ("", 0, 1)]
    assert found[0]["reason"] == "skip function cm in file /root/.pyenv/versions/3.11.7/lib/python3.11/contextlib.py"
    assert gb.describe(found[0]).startswith("skip function cm in file")  # no "file:line: " prefix


def test_a_skip_that_names_only_its_frame_takes_the_innermost_user_line_and_the_explanation():
    """Synthetic, in the layout of torch 2.13's convert_frame.py skip message."""
    payload = (
        "Graph break: torch.compile cannot properly resume from this graph break, which results in a skip.\n"
        "torch.compile will skip tracing the frame f (/m/model.py line 10) and fall back to eager.\n"
        "The graph break occurred in the following user code:\n"
        '  File "/m/model.py", line 12, in f\n    g(x)\n  File "/m/model.py", line 20, in g\n    print(x)\n\n'
        "Traceback (most recent call last):\n  ...\ntorch._dynamo.exc.Unsupported: Failed to trace builtin\n"
        "  Explanation: Dynamo does not know how to trace builtin operator `print`\n"
    )
    assert gb.parse(payload) == {"file": "/m/model.py", "line": 20, "skipped": True, "count": 1,
                                 "reason": "Dynamo does not know how to trace builtin operator `print`"}


def test_the_same_break_met_again_is_counted_not_repeated():
    a, b = (gb.parse(p) for p in RECORDED["2.13.0+cpu"]["payloads"])
    found = gb.collect([a, b, dict(a), dict(a)])
    assert [x["line"] for x in found] == [a["line"], b["line"]]
    assert [x["count"] for x in found] == [3, 1]
    assert gb.describe(found[0]) == (
        f"record.py:{a['line']}: {a['reason']} (3 times) (its function ran eagerly, outside any compiled graph)")
    # the line counts the breaks, and the places where there are fewer
    assert gb.summary_line(found).startswith(f"graph breaks: 4 at 2 places — record.py:{a['line']}: ")
    assert gb.summary_line(found[:1]).startswith("graph breaks: 3 at 1 place — ")
    assert gb.summary_line(found[1:]).startswith(f"graph breaks: 1 — record.py:{b['line']}: ")


def test_nothing_compiled_says_why_for_a_factory_and_for_a_script():
    br = [gb.parse(RECORDED["2.13.0+cpu"]["payloads"][0])]
    line = gb.nothing_compiled("m.py", False, br)
    assert line.startswith("m.py: nothing was compiled — make_workload()'s model ran without a single Inductor")
    assert f"graph breaks: 1 — record.py:{br[0]['line']}: Dynamo does not know how to trace builtin" in line
    assert "no make_workload" not in line
    assert line.endswith("(Dynamo's hint: Avoid calling builtin `print` with argument types ['str']. Consider "
                         "using an equivalent alternative function/method to `print`.)")
    assert gb.nothing_compiled("s.py", True, []) == (
        "s.py: nothing was compiled — the script never ran a torch.compile'd function (a file without "
        "make_workload() runs as a script; to profile a model, name its factory make_workload(device, "
        "dtype, batch_size), returning (model, args))")
    assert "reported no graph break" in gb.nothing_compiled("m.py", False, [])
    assert gb.nothing_compiled("s.py", True, br).startswith(
        "s.py: nothing was compiled — the script ran a torch.compile'd function, and Dynamo ran it eagerly "
        f"at a graph break; graph breaks: 1 — record.py:{br[0]['line']}: Dynamo does not know how to trace")
    assert gb.nothing_compiled("s.py", True, [], 0) == gb.nothing_compiled("s.py", True, [])
    assert gb.nothing_compiled("s.py", True, [], 2).startswith(
        "s.py: nothing was compiled by Inductor — Dynamo captured 2 graph(s), and another backend compiled them")


def test_a_script_that_compiled_nothing_names_the_factory_it_may_have_meant(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("import torch\n\ndef get_model(device='cpu'):\n    return torch.nn.Linear(4, 4), ()\n\n"
                 "def helper():\n    pass\n\nclass Net:\n    def make_model(self):\n        pass\n\n"
                 "async def build_net():\n    pass\n")
    assert factory_lookalikes(f) == ["get_model", "build_net"]
    line = gb.nothing_compiled(str(f), True, [], None, factory_lookalikes(f))
    assert line == (f"{f}: nothing was compiled — the script never ran a torch.compile'd function (a file "
                    "without make_workload() runs as a script: it defines get_model(), build_net(), which "
                    "the tool does not call; to profile a model, name its factory make_workload(device, "
                    "dtype, batch_size), returning (model, args))")
    assert factory_lookalikes(tmp_path / "gone.py") == []
    (tmp_path / "bad.py").write_text("def get_model(:\n")
    assert factory_lookalikes(tmp_path / "bad.py") == []


def test_the_breaks_are_saved_with_the_result_and_shown_in_every_format():
    breaks = [gb.parse(p) for p in RECORDED["2.14.1+cu130"]["payloads"]]
    r = BreakdownResult.from_dict(json.loads(MEASURED.read_text()))
    r.graph_breaks = breaks
    back = BreakdownResult.from_dict(json.loads(r.to_json()))
    assert back.graph_breaks == breaks
    assert json.loads(r.to_json())["extras"]["graph_breaks"] == breaks
    assert "graph_breaks" not in json.loads(BreakdownResult(model="m").to_json())["extras"]
    want = f"graph breaks: 2 — record.py:{breaks[0]['line']}: Dynamo does not know how to trace builtin"
    for fmt in ("text", "markdown", "html"):
        assert want.replace("`", "") in render_breakdown(back, fmt).replace("`", "").replace("&#x27;", "'")


def test_diff_names_a_graph_break_new_in_head_and_one_gone_though_its_line_moved():
    from inductor_bench.core.diff import diff_results
    from inductor_bench.render.diff import render_diff

    skipped, resumed = (gb.parse(p) for p in RECORDED["2.13.0+cpu"]["payloads"])
    base = BreakdownResult.from_dict(json.loads(MEASURED.read_text()))
    head = BreakdownResult.from_dict(json.loads(MEASURED.read_text()))
    base.graph_breaks = [skipped]
    head.graph_breaks = [{**skipped, "line": skipped["line"] + 7}, resumed]  # a line moved, one new
    d = diff_results(base, head)
    (s,) = d.sections
    assert s.breaks_added == [resumed] and s.breaks_removed == []
    assert d.to_dict()["sections"][0]["breaks_added"] == [resumed]
    text = render_diff(d)
    assert f"graph break new in head: record.py:{resumed['line']}: User-inserted graph break." in text
    assert "gone in head" not in text
    same = diff_results(base, base)
    assert "breaks_added" not in same.to_dict()["sections"][0]
    assert "graph break" not in render_diff(same)


def test_compare_counts_each_columns_breaks_and_lists_them_once():
    from inductor_bench.core.compare import CompareResult
    from inductor_bench.render.compare import render_compare

    path = Path(__file__).parent / "fixtures" / "results" / "cpu_mlp_compare" / "compare.json"
    result = CompareResult.from_dict(json.loads(path.read_text()))
    compiled = [m for m in result.modes if m.breakdown is not None]
    assert len(compiled) >= 2
    assert "graph breaks" not in render_compare(result)  # none met: no row, no note
    brk = gb.parse(RECORDED["2.13.0+cpu"]["payloads"][1])
    for m in compiled:
        m.breakdown.graph_breaks = [brk]
    text = render_compare(result)
    row = next(ln for ln in text.splitlines() if ln.startswith("graph breaks "))
    cells = row.split()[2:]
    assert cells == ["-" if m.breakdown is None else "1" for m in result.modes]
    labels = ", ".join(m.label for m in compiled)
    assert f"{labels}: graph breaks: 1 — record.py:{brk['line']}: User-inserted graph break." in text


RECORDED_REST = json.loads((FIXTURE.parent / "recorded_rest.json").read_text())


def _rest_line_of(text: str) -> int:
    lines = (FIXTURE.parent / "record_rest.py").read_text().splitlines()
    return next(i for i, ln in enumerate(lines, 1) if text in ln)


@pytest.mark.parametrize("version", ["2.13.0+cpu", "2.14.1+cu130"])
def test_a_break_dynamo_cannot_resume_from_says_the_rest_of_its_function_ran_eagerly(version):
    """torch 2.13 and 2.14 compile up to a GRU in a module's forward and run the rest eagerly: one
    graph captured, as torch's own counter recorded beside the text."""
    rec = RECORDED_REST[version]
    assert rec["unique_graphs"] == 1
    (b,) = (gb.parse(p) for p in rec["payloads"])
    assert (b["line"], b["reason"], b["skipped"], b.get("rest")) == (
        _rest_line_of("self.gru(self.proj(x))"), "Dynamo does not support RNN, GRU, or LSTM.", True, True)
    assert gb.describe(b) == (f"record_rest.py:{b['line']}: Dynamo does not support RNN, GRU, or LSTM. "
                              "(the rest of its function ran eagerly, outside any compiled graph)")
    assert gb.collect([b, dict(b)])[0]["rest"] is True


def test_torch_2_15_resumes_after_the_same_break_and_names_what_it_called():
    rec = RECORDED_REST["2.15.0+cu132"]
    assert rec["unique_graphs"] == 2  # the rest compiled: nothing ran eagerly but the GRU
    (b,) = (gb.parse(p) for p in rec["payloads"])
    assert (b["skipped"], "rest" in b) == (False, False)
    assert gb.describe(b) == (f"record_rest.py:{_rest_line_of('self.gru(')}: Dynamo does not support RNN, GRU, "
                              "or LSTM. (calling self.gru)")
    assert b["hint"] == ("Set torch._dynamo.config.allow_rnn=True to enable experimental support for RNN, GRU, "
                         "and LSTM in Dynamo")


@pytest.mark.parametrize(("source", "name"), [
    ("L['self']._modules['gru']", "self.gru"),
    ("L['self']._modules['blocks']._modules['0']._parameters['weight']", "self.blocks.0.weight"),
    ("G['torch'].nn.functional.relu", "torch.nn.functional.relu"),
    ("L['x']", "x"),
    # through a decorated forward (diffusers 0.42's UNet2DConditionModel, torch 2.13.0)
    ("L['self'].__dict__['_modules']['up_blocks'].1.__dict__['_modules']['resnets']", "self.up_blocks.1.resnets"),
])
def test_dynamos_names_read_as_the_models_code(source, name):
    assert gb._python_name(source) == name


LOGGED = json.loads((FIXTURE.parent / "recorded_log.json").read_text())


def _from_records(case: str) -> list[dict]:
    rec = LOGGED[case]
    return gb.with_counts([gb.from_log(r["message"], r["error"]) for r in rec["records"]], rec["counters"])


def test_torch_2_5s_logged_breaks_give_their_place_and_dynamos_count():
    """Torch 2.5 writes no break record to the structured trace; its graph_breaks logging
    artifact has the user's stack: the place, with the count Dynamo's counters keep (the
    recompile met the break twice, the log names it once), and the GRU's skip, which the
    counters do not hold at all."""
    script_line = next(i for i, ln in enumerate((ROOT / "models" / "graph_break_script.py").read_text().splitlines(), 1)
                       if ln.lstrip().startswith("print("))
    print_reason = "builtin: print [<class 'torch._dynamo.variables.constant.ConstantVariable'>] False"
    assert _from_records("graph_break_script.py") == [
        {"file": "graph_break_script.py", "line": script_line, "reason": print_reason, "skipped": False, "count": 1}]
    assert _from_records("log_recompile.py") == [
        {"file": "log_recompile.py", "line": 7, "reason": print_reason, "skipped": False, "count": 2}]
    assert LOGGED["log_gru.py"]["counters"] == {}
    assert _from_records("log_gru.py") == [
        {"file": "log_gru.py", "line": 7, "reason": "TorchDynamo purposely graph breaks on RNN, GRU, LSTMs",
         "skipped": True, "count": 1}]


LOGGED_2_6 = json.loads((FIXTURE.parent / "recorded_log_2_6.json").read_text())


def test_torch_2_6s_skip_gives_the_exception_that_ends_its_traceback_as_the_reason():
    """2.6's record of a skip (a GRU) says only "Graph break: skip:" and the user's stack
    before Python's traceback; the reason is the exception that ends it. Every script's breaks
    read as 2.5's logging artifact gave them (its reason words aside: 2.6 says "Unsupported:")."""
    def parsed(case: str) -> list[dict]:
        return gb.collect(gb.parse(p) for p in LOGGED_2_6[case]["artifacts"])

    assert parsed("log_gru.py") == _from_records("log_gru.py") == [
        {"file": "log_gru.py", "line": 7, "reason": "TorchDynamo purposely graph breaks on RNN, GRU, LSTMs",
         "skipped": True, "count": 1}]
    for case in ("graph_break_script.py", "log_recompile.py"):
        (old,), (new,) = _from_records(case), parsed(case)
        assert new == {**old, "reason": f"Unsupported: {old['reason']}"}
    assert len(LOGGED_2_6["log_recompile.py"]["artifacts"]) == 2  # met twice, counted twice


def test_a_counted_reason_no_record_names_is_kept_without_a_place():
    logged = [gb.from_log('Graph break: from user code at:\n  File "m.py", line 3, in f\n', "a")]
    assert gb.with_counts(logged, {"'b'": 4, "a": 3}) == [
        {"file": "m.py", "line": 3, "reason": "a", "skipped": False, "count": 3},
        {"file": "", "line": 0, "reason": "b", "skipped": False, "count": 4}]


def test_the_worker_reads_the_logging_artifact_and_keeps_it_off_the_console(caplog):
    """The compile worker's recorder takes each record of the logging artifact (as torch 2.5
    logs it, with the exception) and does not pass it on to the console's handlers."""
    import logging

    from inductor_bench.runner.dynamo_counts import BREAK_LOGGERS, attach_break_recorder

    rec = attach_break_recorder()
    try:
        case = LOGGED["log_recompile.py"]["records"][0]
        err = RuntimeError(case["error"])
        with caplog.at_level(logging.DEBUG):
            logging.getLogger(case["logger"]).debug("%s", case["message"], exc_info=(RuntimeError, err, None))
        assert rec.logged == [(case["message"], case["error"])]
        assert not [r for r in caplog.records if r.name in BREAK_LOGGERS]
        assert gb.from_log(*rec.logged[0])["line"] == 7
    finally:
        for name in BREAK_LOGGERS:
            logging.getLogger(name).removeHandler(rec)
        logging.getLogger("torch.__trace").removeHandler(rec)


def test_a_script_that_compiled_nothing_is_told_what_it_asked_for():
    """What the script asked of the compiler (runner/script_compiles.py) says why nothing came
    of it: an AOTInductor package, nn.Module.compile() of a torch module before 2.14, or a
    torch.compile'd function that never compiled a frame."""
    aot = {"torch_compile": [], "module_compile_eager": [], "aot_compiles": 2}
    assert gb.nothing_compiled("s.py", True, [], 0, [], aot) == (
        "s.py: nothing for breakdown to profile — the script compiled with AOTInductor (2 ahead-of-time "
        "compile(s): aoti_compile_and_package, aot_compile), whose package runs outside torch.compile, "
        "and breakdown profiles the graphs torch.compile makes: compile the model with torch.compile to "
        "break it down, or profile the package's runs with torch.profiler and read the trace with "
        "`inductor-bench analyze`")
    eager = {"torch_compile": ["Sequential (nn.Module.compile())"],
             "module_compile_eager": ["Sequential (nn.Module.compile())"], "aot_compiles": 0}
    said = ("before torch 2.14 Dynamo skips nn.Module.compile() of a module whose forward is torch's own "
            "(nn.Sequential, nn.Linear; pytorch/pytorch#150915); compile it with model = "
            "torch.compile(model) instead")
    skips = gb.module_compile_skips(eager["module_compile_eager"] * 2)
    assert gb.nothing_compiled("s.py", True, skips, 0, [], eager) == (
        f"s.py: nothing was compiled — the script compiled Sequential (nn.Module.compile()), which this "
        f"torch leaves eager: {said}")
    assert skips == [{"file": "", "line": 0, "reason": f"Sequential (nn.Module.compile()) compiled nothing: {said}",
                      "skipped": True, "count": 1}]
    assert gb.describe(skips[0]).endswith("instead (its function ran eagerly, outside any compiled graph)")
    called = {"torch_compile": ["f", "Net", "g", "h"], "module_compile_eager": [], "aot_compiles": 0}
    assert gb.nothing_compiled("s.py", True, [], 0, ["get_model"], called) == (
        "s.py: nothing was compiled — the script called torch.compile 4 time(s) (f, Net, g), but Dynamo "
        "compiled no frame: the compiled function never ran, or Dynamo skipped it (TORCH_LOGS=+dynamo "
        "says why)")
    # torch.export's Dynamo graphs (strict export, torch 2.5) are not another backend's; nothing
    # asked leaves the factory hint
    assert gb.nothing_compiled("s.py", True, [], 1, [], aot) == gb.nothing_compiled("s.py", True, [], 0, [], aot)
    assert "another backend compiled them" in gb.nothing_compiled("s.py", True, [], 1, [], called)
    assert gb.nothing_compiled("s.py", True, [], 0, [], {}) == gb.nothing_compiled("s.py", True, [])


# two breaks torch makes itself, as torch 2.5.1, 2.13.0 and 2.15.0 recorded them
TORCH_OWN = json.loads((FIXTURE.parent / "recorded_torch_own.json").read_text())
OWN_VERSIONS = [v for v in TORCH_OWN if not v.startswith("_")]
# the line of ``torch._dynamo.graph_break()`` in ``_use_grad``, read in each version's torch/optim/optimizer.py
OPTIMIZER_BREAK_LINE = {"2.5.1+cu124": 90, "2.13.0+cpu": 79, "2.15.0+cu132": 78}


def _own(version: str, script: str, torch_dir: str | None = None) -> list[dict]:
    """The breaks as the compile worker reads them: the structured trace's records where there
    are any, else the logging artifact's with the counters (2.5)."""
    rec = TORCH_OWN[version][script]
    where = rec["torch_dir"] if torch_dir is None else torch_dir
    if rec["artifacts"]:
        return gb.collect(gb.parse(p, where) for p in rec["artifacts"])
    return gb.with_counts([gb.from_log(r["message"], r["error"], where) for r in rec["records"]], rec["counters"])


@pytest.mark.parametrize("version", OWN_VERSIONS)
def test_a_break_in_torchs_own_code_names_the_models_line_that_reached_it(version):
    """The graph_break() inside Optimizer.step: its place is torch's file, which the user cannot
    change; the break names the line of the model that called into it, and says why torch breaks
    there in place of Dynamo's hint (to remove the call). Met twice in one compile (the step's
    frame, then the frame resumed after the break), as Dynamo counts it."""
    step_line = next(i for i, ln in enumerate((FIXTURE.parent / "log_optim.py").read_text().splitlines(), 1)
                     if "opt.step()" in ln)
    (brk,) = _own(version, "log_optim.py")
    assert (brk["in_library"], brk["line"], brk["count"]) == ("torch/optim/optimizer.py", OPTIMIZER_BREAK_LINE[version], 2)
    assert brk["file"] == TORCH_OWN[version]["log_optim.py"]["torch_dir"] + "/optim/optimizer.py"
    assert (Path(brk["reached_from"]["file"]).name, brk["reached_from"]["line"]) == ("log_optim.py", step_line)
    assert brk["on_purpose"] == gb.BY_DESIGN[0][2] and "hint" not in brk
    assert gb.describe(brk).startswith(
        f"torch/optim/optimizer.py:{OPTIMIZER_BREAK_LINE[version]} (torch's own code, reached from log_optim.py:"
        f"{step_line}): ")
    assert gb.describe(brk).endswith(f"(2 times) — {gb.BY_DESIGN[0][2]}")


def test_torch_2_5s_logged_and_counted_reason_are_one_break_with_installed_paths_cut():
    """2.5 quotes the reason of a skipped call in both its log record and its counters; read
    alike, they are one break met twice, not two (before: the quoted and unquoted reason stood
    as two breaks), and the path of torch's file inside it is cut to the package's own."""
    (brk,) = _own("2.5.1+cu124", "log_optim.py")
    assert brk["reason"] == "skip function graph_break in file torch/_dynamo/decorators.py"
    (counted,) = TORCH_OWN["2.5.1+cu124"]["log_optim.py"]["counters"]
    assert counted.startswith("'skip function graph_break in file /") and "site-packages/torch/" in counted


def test_torch_built_from_source_is_known_by_its_folder_and_an_installed_one_by_site_packages():
    """A torch built from a checkout is no installed package: its folder (``torch.__file__``'s)
    says its files are torch's. Without it, one under ``site-packages`` is known all the same."""
    (installed,) = _own("2.13.0+cpu", "log_optim.py", torch_dir="")
    assert installed["in_library"] == "torch/optim/optimizer.py" and "on_purpose" in installed
    rec = TORCH_OWN["2.13.0+cpu"]["log_optim.py"]
    # synthetic: the recorded text with torch's folder moved to a source checkout
    moved = [p.replace(rec["torch_dir"], "/home/u/pytorch/torch") for p in rec["artifacts"]]
    (built,) = gb.collect(gb.parse(p, "/home/u/pytorch/torch") for p in moved)
    assert (built["in_library"], built["on_purpose"]) == ("torch/optim/optimizer.py", gb.BY_DESIGN[0][2])
    (unknown,) = gb.collect(gb.parse(p, "/home/u/pytorch/to") for p in moved)  # a name that only starts alike
    assert "in_library" not in unknown and "on_purpose" not in unknown and unknown["hint"].startswith("Remove the")
    assert gb.describe(unknown).startswith("optimizer.py:79: User-inserted graph break.")


# synthetic: a break inside an installed package, in torch 2.13's words (tests/fixtures/graph_breaks/
# recorded_torch_own.json has torch's own), reached from the model's line 40
IN_PACKAGE = """Graph break in user code at /venv/lib/python3.11/site-packages/transformers/models/llama/modeling_llama.py:120
Graph Break Reason: Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):

Unsupported builtin
  Explanation: Dynamo does not know how to trace builtin operator `print`.
  Hint: Avoid calling builtin `print`.

User code traceback:
  File "/work/train.py", line 40, in <module>
    out = model(batch)
  File "/venv/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1780, in _call_impl
    return forward_call(*args, **kwargs)
  File "/venv/lib/python3.11/site-packages/transformers/models/llama/modeling_llama.py", line 120, in forward
    print("here")
"""


def test_a_break_in_an_installed_package_names_the_models_line_that_reached_it():
    brk = gb.parse(IN_PACKAGE, "/venv/lib/python3.11/site-packages/torch")
    assert brk["in_library"] == "transformers/models/llama/modeling_llama.py"
    assert brk["reached_from"] == {"file": "/work/train.py", "line": 40}  # torch's frame between is no one's line
    assert "on_purpose" not in brk and brk["hint"] == "Avoid calling builtin `print`."
    assert gb.describe(brk) == ("transformers/models/llama/modeling_llama.py:120 (an installed package's code, "
                                "reached from train.py:40): Dynamo does not know how to trace builtin operator "
                                "`print`.")


def _backward_line() -> int:
    script = ROOT / "tests" / "fixtures" / "models" / "compiled_autograd.py"
    return next(i for i, ln in enumerate(script.read_text().splitlines(), 1) if ln.strip() == "loss.backward()")


@pytest.mark.parametrize("version", OWN_VERSIONS)
def test_the_break_at_backward_under_compiled_autograd_says_it_is_by_design(version):
    """Dynamo breaks at ``loss.backward()`` and compiled autograd compiles the backward: where
    the run has such a graph, the break says so and names it; where it has none, the break is
    as Dynamo gave it."""
    (brk,) = _own(version, "compiled_autograd.py")
    assert (Path(brk["file"]).name, brk["line"], "in_library" in brk) == ("compiled_autograd.py", _backward_line(), False)
    assert gb.noted([brk], []) == [brk] and gb.noted([brk], [], []) == [brk]
    (noted,) = gb.noted([brk], ["1-backward"])
    assert noted["on_purpose"] == ("by design under compiled autograd: Dynamo leaves the call to it, and it "
                                   "compiled the backward as 1-backward")
    (other,) = _own(version, "log_optim.py")
    assert gb.noted([other], ["1-backward"]) == [other]  # its own reason kept


def test_the_report_and_compare_say_the_backward_break_is_by_design_where_compiled_autograd_ran():
    from inductor_bench.core.compare import CompareResult
    from inductor_bench.core.results import GraphResult
    from inductor_bench.render.compare import render_compare

    (brk,) = _own("2.13.0+cpu", "compiled_autograd.py")
    r = BreakdownResult(model="m", graph_breaks=[brk],
                        graphs=[GraphResult(id="0-forward", role="forward"),
                                GraphResult(id="1-backward", role="backward", compiled_autograd=True)])
    line = f"compiled_autograd.py:{_backward_line()}: " + brk["reason"] + (
        " — by design under compiled autograd: Dynamo leaves the call to it, and it compiled the backward as 1-backward")
    assert line in render_breakdown(r)
    compare = CompareResult.from_dict(json.loads(
        (Path(__file__).parent / "fixtures" / "results" / "cpu_mlp_compare" / "compare.json").read_text()))
    compiled = next(m for m in compare.modes if m.breakdown is not None)
    compiled.breakdown = r
    assert f"{compiled.label}: graph breaks: 1 — {line}" in render_compare(compare)
    r.graphs[1].compiled_autograd = False
    assert "by design" not in render_breakdown(r)
    # AOTAutograd's backward, compiled with the forward, is what autograd runs at the break
    assert (f"compiled_autograd.py:{_backward_line()}: " + brk["reason"] + " — expected in a compiled "
            "training step: Dynamo leaves the call to autograd, which runs the backward compiled with the "
            "forward (1-backward); nothing to change in the model") in render_breakdown(r)
    r.graphs[1].role = "inference"  # no backward graph: the break as Dynamo gave it
    assert brk["reason"] + " —" not in render_breakdown(r) and brk["reason"] in render_breakdown(r)


def test_a_script_that_exited_before_compiling_says_so_and_offers_no_factory():
    """``breakdown train.py -- --help``: argparse printed its usage and called sys.exit(0)."""
    line = gb.nothing_compiled("s.py", True, [], 0, ["get_model"], {"torch_compile": [], "exited": True})
    assert line == ("s.py: nothing was compiled — the script called sys.exit() before it ran a torch.compile'd "
                    "function (argparse's --help does; what it printed is in the run directory's logs/)")
    line = gb.nothing_compiled("s.py", True, [], 0, [], {"torch_compile": ["f"], "exited": True})
    assert line.endswith("(f), but Dynamo compiled no frame: the script called sys.exit() before it called the "
                         "compiled function")
    assert gb.nothing_compiled("s.py", True, [], 0, [], {"torch_compile": ["f"], "exited": False}).endswith(
        "the compiled function never ran, or Dynamo skipped it (TORCH_LOGS=+dynamo says why)")


def test_diff_across_torch_versions_takes_a_reworded_break_at_one_line_for_the_same_break():
    """The same script's print under torch 2.5.1 (its logging artifact) and 2.6.0 (its
    record): one break at one line, which each torch words its own way. Across the versions
    diff lists it neither as new nor as gone; between two runs of one torch, a reason that
    changed at one line is a change, and is listed."""
    from inductor_bench.core.diff import diff_results
    from inductor_bench.render.diff import render_diff

    (old,) = _from_records("graph_break_script.py")
    (new,) = gb.collect(gb.parse(p) for p in LOGGED_2_6["graph_break_script.py"]["artifacts"])
    assert (old["file"], old["line"]) == (new["file"], new["line"]) and old["reason"] != new["reason"]
    base = BreakdownResult.from_dict(json.loads(MEASURED.read_text()))
    head = BreakdownResult.from_dict(json.loads(MEASURED.read_text()))
    base.graph_breaks, head.graph_breaks = [old], [new]
    base.versions, head.versions = {"torch": "2.5.1"}, {"torch": "2.6.0"}
    (s,) = diff_results(base, head).sections
    assert s.breaks_added == [] and s.breaks_removed == []
    head.graph_breaks = [new, {**new, "line": new["line"] + 3}]  # one more break, at another line
    (s,) = diff_results(base, head).sections
    assert s.breaks_added == [head.graph_breaks[1]] and s.breaks_removed == []
    head.versions = dict(base.versions)  # one torch: the reason at that line changed
    d = diff_results(base, head)
    assert d.sections[0].breaks_removed == [old] and len(d.sections[0].breaks_added) == 2
    assert "graph break gone in head: graph_break_script.py" in render_diff(d)
