"""Bad paths and damaged results refused in one line, before any work: ``--html`` onto a
directory, ``--runs-dir`` onto a file, a hand-edited result with a number beyond any figure
(1e308 overflowed the reports' sums), a ceiling figure left out (null); and a re-analysis
without the profiled steps' trace, which keeps the saved split of the time outside the graphs."""

from __future__ import annotations

import json
import shutil

import pytest

from .conftest import FIXTURES, MODELS
from .test_bad_values import cli, one_line

RESULTS = FIXTURES / "results"
PAGE = "inductor-bench: error: --html {d}: is a directory (give the page's file, as {d}/report.html)"


def _args(command: str, tmp_path) -> list[str]:
    if command in ("breakdown", "compare", "sweep"):  # a compile refused before it starts
        return [command, str(MODELS / "mlp.py"), "--device", "cpu", "--out", str(tmp_path / "run")]
    if command == "report":
        return [command, str(RESULTS / "cpu_mlp_train_quiet")]
    if command == "diff":
        return [command, str(RESULTS / "cpu_mlp_train_quiet"), str(RESULTS / "cpu_mlp_slow_train")]
    if command == "analyze":
        return [command, str(FIXTURES / "cpu_loop" / "inference-torch-2.13.0.json.gz")]
    return [command, str(FIXTURES / "triton_kernels" / "cpu" / "triton_per_fused__softmax_0.py")]


@pytest.mark.parametrize("command", ["report", "diff", "analyze", "kernel", "breakdown", "compare", "sweep"])
def test_html_onto_a_directory_is_refused_before_any_work(tmp_path, command):
    """--html DIR was refused only after the whole run: exit 74, 'cannot write (Is a directory)'."""
    d = tmp_path / "pages"
    d.mkdir()
    p = cli(*_args(command, tmp_path), "--html", str(d), cwd=tmp_path)
    assert one_line(p) == PAGE.format(d=d)
    assert p.stdout == "" and list(d.iterdir()) == [] and not (tmp_path / "run").exists()


@pytest.mark.parametrize("command", ["breakdown", "compare"])
@pytest.mark.parametrize("under", ["", "/deeper"])
def test_runs_dir_onto_a_file_is_refused_as_not_a_directory(tmp_path, monkeypatch, under, command):
    """--runs-dir FILE was exit 74 ('cannot create the run directory') where --out FILE is 2;
    refused before any work, it is the one line on stderr, before the note a run's settings
    print (an Inductor cache directory in the environment, which the workers set themselves)."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "f").write_text("mine")
    p = cli(command, str(MODELS / "mlp.py"), "--device", "cpu", "--runs-dir", f"f{under}", cwd=tmp_path)
    assert one_line(p) == f"inductor-bench: error: --runs-dir f{under}: not a directory"
    assert (tmp_path / "f").read_text() == "mine"
    beside_out = cli(command, str(MODELS / "mlp.py"), "--device", "cpu", "--runs-dir", "f", "--out", "f",
                     cwd=tmp_path)  # --runs-dir unused beside --out: the refusal is --out's own
    assert beside_out.returncode == 2 and "--runs-dir" not in beside_out.stderr


def _edited(tmp_path, fixture: str, name: str, edit) -> str:
    run = tmp_path / fixture
    shutil.copytree(RESULTS / fixture, run)
    data = json.loads((run / name).read_text())
    edit(data)
    (run / name).write_text(json.dumps(data))
    return str(run / name)


@pytest.mark.parametrize("fixture,name,field,value", [
    ("cpu_mlp_train_quiet", "breakdown.json", "graphs[0].calls", 1e308),
    ("cpu_mlp_compare", "compare.json", "modes[0].compile_s", 1e308),
    ("cpu_mlp_train_quiet", "breakdown.json", "graphs[1].wall_samples_ms[2]", -1e25),
    ("cpu_mlp_train_quiet", "breakdown.json", "graphs[0].iterations", 10**400),
], ids=["calls", "compile_s", "negative", "integer"])
def test_a_number_beyond_any_figure_is_a_damaged_result(tmp_path, fixture, name, field, value):
    """1e308 calls or compile seconds crashed the report (OverflowError, exit 70)."""
    def edit(d):
        where = d
        parts = field.replace("[", ".").replace("]", "").split(".")
        for k in parts[:-1]:
            where = where[int(k)] if k.isdigit() else where[k]
        last = parts[-1]
        where[int(last) if last.isdigit() else last] = value

    path = _edited(tmp_path, fixture, name, edit)
    shown = "an integer of 300+ digits" if isinstance(value, int) else f"{value:.3g}"
    assert one_line(cli("report", path)) == (f"inductor-bench: error: {path}: damaged: {field}: {shown} is beyond "
                                             "any figure a result holds (at most 1e+24 in size)")


@pytest.mark.parametrize("field,value,said", [
    ("wall_ms", -5.0, "graphs[0-forward].wall_ms: -5.0"),  # '-5.0000 ms wall, busy 0.0%'
    ("windows_ms", [1.0, -2.0], "graphs[0-forward].windows_ms[1]: -2.0"),
    ("kernels", "ms", "graphs[0-forward].kernels[{k}].ms: -0.5"),
])
def test_a_time_below_0_is_a_damaged_result(tmp_path, field, value, said):
    """A graph's time below 0 was reported as it was, exit 0."""
    kernel = []

    def edit(d):
        g = d["graphs"][0]
        if field == "kernels":
            g["kernels"][0]["ms"] = -0.5
            kernel.append(g["kernels"][0]["name"])
        else:
            g[field] = value
            g["window"] = 0

    path = _edited(tmp_path, "cpu_mlp_train_quiet", "breakdown.json", edit)
    said = said.format(k=kernel[0] if kernel else "")
    assert one_line(cli("report", path)) == f"inductor-bench: error: {path}: damaged: {said} is below 0, no duration"


def test_a_ceiling_figure_left_out_reads_as_a_dash(tmp_path):
    """copy_gbps: null crashed the roofline section (TypeError, exit 70)."""
    def edit(d):
        d["extras"]["roofline"]["measured"]["copy_gbps"] = None

    path = _edited(tmp_path, "cpu_mlp_train_quiet", "breakdown.json", edit)
    measured = json.loads((RESULTS / "cpu_mlp_train_quiet" / "breakdown.json").read_text())
    triad = measured["extras"]["roofline"]["measured"]["triad_gbps"]
    p = cli("report", path)
    assert p.returncode == 0, p.stderr
    (line,) = [x for x in p.stdout.splitlines() if x.startswith("measured ceilings:")]
    assert f"(copy -, triad {triad:.3g})" in line


def test_reanalysis_without_the_steps_trace_keeps_the_saved_split(tmp_path):
    """The run's result predates the graphs' wrapper time; re-analysed without steps.json.gz it
    read 0.0 (0.378 ms when derived from the trace): now null, and said."""
    run = tmp_path / "run"
    shutil.copytree(FIXTURES / "runs" / "cpu_fft_inference", run)
    saved = json.loads((run / "breakdown.json").read_text())["extras"]["outside"]
    assert "graphs_uncovered_ms" not in saved
    (run / "steps.json.gz").unlink()
    p = cli("report", str(run), "--reanalyze", "--format", "json")
    assert p.returncode == 0, p.stderr
    outside = json.loads(p.stdout)["extras"]["outside"]
    assert outside["graphs_uncovered_ms"] is None
    assert {k: outside[k] for k in saved} == saved  # the rest as saved
    assert p.stderr.splitlines()[-1] == ("the time outside the graphs kept as saved: no steps.json.gz to split "
                                         "again (the graphs' wrappers' time, which the saved result lacks, "
                                         "left out: null)")
    assert json.loads((run / "breakdown.json").read_text())["extras"]["outside"]["graphs_uncovered_ms"] is None
