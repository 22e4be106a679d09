"""A saved result names the statistics rules that judged it (``rules``), and ``report`` and
``diff`` say in one line where those are not this install's, or not the other side's: hand-built
results from the recorded ones, no compile."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from inductor_bench.cli import main
from inductor_bench.core import steady
from inductor_bench.core.compare import CompareResult, ModeResult
from inductor_bench.core.diff import diff_results
from inductor_bench.core.result_json import result_json
from inductor_bench.core.results import BreakdownResult
from inductor_bench.core.rundir import load_any, load_breakdown

from .conftest import FIXTURES

RESULTS = FIXTURES / "results"
BREAKDOWN = RESULTS / "cpu_mlp_train_autotune" / "breakdown.json"  # saved before the rules were numbered
COMPARE = RESULTS / "cpu_mlp_compare" / "compare.json"
STALLED = FIXTURES / "runs" / "cpu_mlp_train_stalled"  # a run with its graphs' saved profiles
FFT = FIXTURES / "runs" / "cpu_fft_inference"  # another, of one graph

UNRECORDED = "unrecorded rules (saved before the rules were numbered)"
AGAIN = "judges them again (docs/statistics.md)"
DIFFER = "the sides' graphs were judged by different statistics rules"
BY = "its graphs' iterations were judged by the statistics policy's"
STAND = "its graphs' figures stand as they were judged"


def with_rules(src: Path, dest: Path, rules: int | None) -> Path:
    """``src``'s result saved at ``dest`` with ``rules`` (None: the field left out)."""
    d = json.loads(src.read_text())
    d.pop("rules", None)
    if rules is not None:
        d["rules"] = rules
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(d, indent=1))
    return dest


def run(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = 0
    try:
        main(argv)
    except SystemExit as e:
        code = e.code or 0
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_saved_result_keeps_its_rules_or_their_absence(tmp_path):
    """Read without ``rules``: None (not this install's, which a new result records); written
    back without it; a recorded version read and written as it is."""
    assert BreakdownResult(model="m").rules == steady.RULES
    assert CompareResult(model="m").rules == steady.RULES
    old = load_any(BREAKDOWN)
    assert old.rules is None and "rules" not in old.to_dict()
    cmp = load_any(COMPARE)
    assert cmp.rules is None and "rules" not in cmp.to_dict()
    one = load_any(with_rules(BREAKDOWN, tmp_path / "one.json", 1))
    assert one.rules == 1 and one.to_dict()["rules"] == 1


def test_report_says_a_result_was_judged_by_other_rules(tmp_path, capsys, monkeypatch):
    run_dir = tmp_path / "old"
    with_rules(BREAKDOWN, run_dir / "breakdown.json", None)
    code, out, err = run(capsys, ["report", str(run_dir), "--summary"])
    assert code == 0 and out
    ours = f"this inductor-bench's are rules {steady.RULES}"
    # no profiles kept: nothing to re-analyse, and no command suggested that would refuse
    assert err.splitlines() == [f"note: {run_dir}: {BY} {UNRECORDED}; {ours}: {STAND} (not every graph's "
                                "profile was kept to judge them again)"]
    with_rules(BREAKDOWN, run_dir / "breakdown.json", steady.RULES)
    assert run(capsys, ["report", str(run_dir), "--summary"])[2] == ""
    # an older version, where this install's rules are version 2
    monkeypatch.setattr(steady, "RULES", 2)
    with_rules(BREAKDOWN, run_dir / "breakdown.json", 1)
    err = run(capsys, ["report", str(run_dir / "breakdown.json"), "--summary"])[2]
    assert err.splitlines() == [f"note: {run_dir}: {BY} rules 1; this inductor-bench's are rules 2: {STAND} (not every "
                                "graph's profile was kept to judge them again)"]
    with_rules(BREAKDOWN, run_dir / "breakdown.json", 3)  # a newer inductor-bench's
    err = run(capsys, ["report", str(run_dir), "--summary"])[2]
    assert err.splitlines() == [f"note: {run_dir}: {BY} rules 3; this inductor-bench's are rules 2 (a newer "
                                f"inductor-bench's rules judged them: {STAND})"]


def test_a_result_saved_before_the_policy_is_not_sent_to_a_reanalysis_that_refuses(tmp_path, capsys):
    """attr_net's result (schema 2: saved before the steady-iteration policy, which came with
    the graphs' saved profiles) cannot be analysed again: its times note names a new breakdown,
    where it said `report RUN --reanalyze` re-derives them, the command that refuses it. Its
    kernels keep the sources that version's analysis gave them (``made from no FX node``)."""
    run_dir = tmp_path / "attr"
    shutil.copytree(RESULTS / "attr_net_train", run_dir)
    code, out, _ = run(capsys, ["report", str(run_dir)])
    (times,) = [ln for ln in out.splitlines() if ln.startswith("times:")]
    assert code == 0 and "--reanalyze` cannot re-derive them: a new breakdown of the model measures them" in times
    assert "cpp_fused_0" in out and "no source: made from no FX node" in out
    code, _, err = run(capsys, ["report", str(run_dir), "--reanalyze"])
    assert (code, err.strip()) == (2, f"inductor-bench: error: {run_dir}: no graph has a saved profile (profile.json) "
                                      "to analyse again: the run predates them, or none was measured")
    assert sorted(p.name for p in run_dir.iterdir()) == ["breakdown.json"]  # refused, the run left as it was


def test_report_suggests_reanalysis_of_a_run_with_profiles_and_reanalysis_records_the_rules(tmp_path, capsys):
    run_dir = tmp_path / "run"
    shutil.copytree(STALLED, run_dir)
    with_rules(STALLED / "breakdown.json", run_dir / "breakdown.json", None)
    err = run(capsys, ["report", str(run_dir), "--summary"])[2]
    assert err.splitlines() == [f"note: {run_dir}: {BY} {UNRECORDED}; this inductor-bench's are "
                                f"rules {steady.RULES}: `inductor-bench report {run_dir} --reanalyze` {AGAIN}"]
    code, _, err = run(capsys, ["report", str(run_dir), "--reanalyze", "--summary"])
    assert code == 0 and BY not in err
    assert json.loads((run_dir / "breakdown.json").read_text())["rules"] == steady.RULES
    assert "rules" not in json.loads((run_dir / "breakdown.before-reanalysis.json").read_text())
    assert run(capsys, ["report", str(run_dir), "--summary"])[2] == ""


def test_report_of_a_run_judged_by_these_rules_does_not_look_for_its_profiles(tmp_path, capsys, monkeypatch):
    """The graphs' profiles are looked for (a file check per graph, a column's per graph of a
    compare) only to word the note on other rules: a run judged by these rules says nothing
    and looks for none."""
    import inductor_bench.commands.report as report_cmd

    looked: list[Path] = []
    real = report_cmd.every_graph_profiled
    monkeypatch.setattr(report_cmd, "every_graph_profiled", lambda d, r: looked.append(d) or real(d, r))
    run_dir = tmp_path / "run"
    shutil.copytree(STALLED, run_dir)
    with_rules(STALLED / "breakdown.json", run_dir / "breakdown.json", steady.RULES)
    assert run(capsys, ["report", str(run_dir), "--summary"])[2] == "" and looked == []
    with_rules(STALLED / "breakdown.json", run_dir / "breakdown.json", None)
    assert BY in run(capsys, ["report", str(run_dir), "--summary"])[2] and looked == [run_dir]


def test_a_run_missing_one_graphs_profile_is_not_sent_to_a_reanalysis_that_keeps_its_rules(tmp_path, capsys):
    """Re-analysis of a run one of whose graphs lost its profile judges the other graph alone:
    the result keeps its unrecorded rules, and report suggests no re-analysis."""
    run_dir = tmp_path / "run"
    shutil.copytree(STALLED, run_dir)
    with_rules(STALLED / "breakdown.json", run_dir / "breakdown.json", None)
    (run_dir / "graphs" / "0-backward" / "profile.json").unlink()
    line = (f"note: {run_dir}: {BY} {UNRECORDED}; this inductor-bench's are rules {steady.RULES}: {STAND} (not every "
            "graph's profile was kept to judge them again)")
    assert run(capsys, ["report", str(run_dir), "--summary"])[2].splitlines() == [line]
    code, _, err = run(capsys, ["report", str(run_dir), "--reanalyze", "--summary"])
    assert code == 0 and line in err.splitlines()
    assert "rules" not in json.loads((run_dir / "breakdown.json").read_text())


def test_report_of_a_compare_judged_by_other_rules(tmp_path, capsys):
    path = with_rules(COMPARE, tmp_path / "cmp" / "compare.json", None)  # no column directories beside it
    err = run(capsys, ["report", str(path)])[2]
    assert err.splitlines() == [f"note: {path.parent}: {BY} {UNRECORDED}; this inductor-bench's are "
                                f"rules {steady.RULES}: {STAND} (not every graph's profile was kept to judge them again)"]
    with_rules(COMPARE, path, steady.RULES)
    assert run(capsys, ["report", str(path)])[2] == ""


def test_a_compare_names_its_columns_to_reanalyse_and_takes_their_rules_once_all_are(tmp_path, capsys):
    """A compare of two columns (the recorded fft run twice), saved before the rules were
    numbered: its report names both columns; one re-analysed, the compare still holds a column
    of other rules (named alone); both, the compare records this install's rules and says nothing."""
    cmp = tmp_path / "cmp"
    columns = [cmp / "default", cmp / "max-autotune"]
    for column in columns:
        shutil.copytree(FFT, column)
        with_rules(FFT / "breakdown.json", column / "breakdown.json", None)
    result = CompareResult(model="fft", device="cpu", rules=None, modes=[
        ModeResult(mode=c.name, step_samples_ms=[5.0, 5.2, 4.9, 5.1, 5.0], run_dir=str(c),
                   breakdown=load_breakdown(c)) for c in columns])
    (cmp / "compare.json").write_text(result_json(result))
    lead = f"note: {cmp}: {BY} {UNRECORDED}; this inductor-bench's are rules {steady.RULES}: `inductor-bench report COLUMN "
    err = run(capsys, ["report", str(cmp)])[2]
    assert err.splitlines() == [f"{lead}--reanalyze` for each of its columns ({columns[0]}, {columns[1]}) {AGAIN}"]
    assert run(capsys, ["report", str(columns[0]), "--reanalyze"])[0] == 0
    assert "rules" not in json.loads((cmp / "compare.json").read_text())  # a column judged by the old rules yet
    err = run(capsys, ["report", str(cmp)])[2]
    assert err.splitlines() == [f"{lead}--reanalyze` for each of its columns ({columns[1]}) {AGAIN}"]
    assert run(capsys, ["report", str(columns[1]), "--reanalyze"])[0] == 0
    assert json.loads((cmp / "compare.json").read_text())["rules"] == steady.RULES
    assert run(capsys, ["report", str(cmp)])[2] == ""


@pytest.mark.parametrize("src", [BREAKDOWN, COMPARE], ids=["breakdown", "compare"])
def test_diff_says_when_the_sides_were_judged_by_different_rules(tmp_path, capsys, src):
    none = with_rules(src, tmp_path / "none.json", None)
    one = with_rules(src, tmp_path / "one.json", 1)
    two = with_rules(src, tmp_path / "two.json", 2)
    again = ("(`inductor-bench report RUN --reanalyze` judges a breakdown run's graphs again by this "
             f"inductor-bench's, rules {steady.RULES})")
    line = f"{DIFFER}: base by {UNRECORDED}, head by rules 1: a graph's figures may differ by the rules alone {again}"
    assert [w for w in diff_results(load_any(none), load_any(one)).warnings if DIFFER in w] == [line]
    older = [w for w in diff_results(load_any(two), load_any(one)).warnings if DIFFER in w]
    assert older == [f"{DIFFER}: base by rules 2, head by rules 1: a graph's figures may differ by the rules "
                     f"alone {again}"]
    for base, head in ((one, one), (none, none)):
        assert not [w for w in diff_results(load_any(base), load_any(head)).warnings if DIFFER in w]
    # the command shows it once, in the text and in the JSON's warnings
    code, out, _ = run(capsys, ["diff", str(none), str(one)])
    assert code == 0 and out.count(DIFFER) == 1
    code, out, _ = run(capsys, ["diff", str(none), str(one), "--format", "json"])
    assert code == 0 and [w for w in json.loads(out)["warnings"] if DIFFER in w] == [line]
    code, out, _ = run(capsys, ["diff", str(one), str(one)])
    assert DIFFER not in out
