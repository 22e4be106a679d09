"""A CPU run whose cache path Inductor's C++ compile command cannot hold (a space, a quote, a
backslash: torch splits the command at them) is refused in one line, exit 2, before anything is
made: no run directory, no failed ``compare.json`` or ``breakdown.json``, no writing lock. Seen
here (torch 2.13 CPU, 2026-12-07): ``compare models/mlp.py --device cpu --out "/tmp/ib sp/run1"``
was refused, but left ``run1/`` with a compare.json of no column, report.txt, index.html, meta.json,
``.writing.lock`` and ``eager/``; ``breakdown --fresh-cache`` and a shared cache under such an
``XDG_CACHE_HOME`` left a breakdown.json the same way. No worker runs in these tests."""

from __future__ import annotations

import pytest

from inductor_bench import cli
from inductor_bench.core.workload import WorkloadOptions
from inductor_bench.runner import compare as runner_compare
from inductor_bench.runner import sweep_run
from inductor_bench.runner.compare_names import column_dir

from .conftest import MODELS

MLP = str(MODELS / "mlp.py")


def _run(capsys, *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as e:
        cli.main([*args])
    return int(e.value.code or 0), capsys.readouterr().err


def _everything_under(path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


@pytest.mark.parametrize("where, advice", [
    (["--out", "cmp 1/run"], "give --out a path without them"),
    (["--runs-dir", "runs sp"], "give --runs-dir a path without them"),
    (["--names", "my mlp,b"], "give --names names without them"),  # the advice had said --out for all three
])
def test_a_compare_whose_fresh_caches_cannot_be_compiled_in_makes_nothing(tmp_path, capsys, monkeypatch, where,
                                                                          advice):
    monkeypatch.chdir(tmp_path)
    args = ["--runs-dir", "runs"] if where[0] != "--runs-dir" else []
    files = [MLP, MLP] if where[0] == "--names" else [MLP]  # one file's name is its title alone
    code, err = _run(capsys, "compare", *files, "--device", "cpu", *args, *where)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("inductor-bench: error: the run directory's cache ") and "eager/cache has a space" in err
    assert f"(torch splits it at them): {advice}, or compile in the shared cache (compare and sweep" in err
    assert _everything_under(tmp_path) == []


def test_a_breakdown_under_a_runs_dir_that_cannot_be_compiled_in_names_runs_dir(tmp_path, capsys):
    code, err = _run(capsys, "breakdown", MLP, "--device", "cpu", "--fresh-cache", "--runs-dir", str(tmp_path / "r s"))
    assert code == 2 and f"cache {tmp_path}/r s/mlp-default-" in err and "give --runs-dir a path without them" in err
    assert _everything_under(tmp_path) == []


def test_a_sweep_whose_caches_cannot_be_compiled_in_makes_nothing_and_runs_no_job(tmp_path, capsys, monkeypatch):
    # it had made the sweep's directory, run mlp's compare to the same refusal, and said "1 of 1 models
    # did not finish (mlp: failed); the same command retries them" (exit 4), as every retry did
    monkeypatch.setattr(sweep_run, "run_jobs", lambda *a: pytest.fail("a job ran"))
    out = tmp_path / "sw sp" / "s1"
    code, err = _run(capsys, "sweep", MLP, "--modes", "default", "--device", "cpu", "--out", str(out))
    assert code == 2 and err.count("\n") == 1
    assert err == (f"inductor-bench: error: the run directory's cache {out}/mlp/default/cache has a space, a quote or "
                   "a backslash in its path, which Inductor's C++ compile command cannot hold (torch splits it at "
                   "them): give --out a path without them, or compile in the shared cache (compare and sweep "
                   "--warm-cache; breakdown without --fresh-cache)\n")
    assert _everything_under(tmp_path) == []


def test_a_sweep_of_a_model_file_whose_name_holds_a_space_names_its_cell_without_it(tmp_path, capsys, monkeypatch):
    # it had been refused: "the run directory's cache .../my mlp/default/cache has a space ...: give the
    # model files names without them", a name the sweep itself had made of the file's
    jobs = []
    monkeypatch.setattr(sweep_run, "run_jobs", lambda executor, js, *a: jobs.extend(js))
    model = tmp_path / "models" / "my mlp.py"
    model.parent.mkdir()
    model.write_text((MODELS / "mlp.py").read_text())
    out = tmp_path / "s1"
    _run(capsys, "sweep", str(model), "--modes", "default", "--device", "cpu", "--out", str(out))
    assert [(j.model, j.out_dir) for j in jobs] == [("my_mlp", str(out / "my_mlp"))]
    # with --warm-cache the shared cache is where it compiles: its path is the one refused
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x y"))
    out = tmp_path / "s2"
    code, err = _run(capsys, "sweep", MLP, "--device", "cpu", "--warm-cache", "--out", str(out))
    assert code == 2 and "the shared cache" in err and "set XDG_CACHE_HOME to a path without them" in err
    assert not out.exists()


def test_a_compare_in_a_shared_cache_that_cannot_be_compiled_in_makes_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "my cache"))
    code, err = _run(capsys, "compare", MLP, "--device", "cpu", "--warm-cache", "--out", str(tmp_path / "run"))
    assert code == 2 and "set XDG_CACHE_HOME to a path without them" in err and err.count("\n") == 1
    assert _everything_under(tmp_path) == []


def test_a_breakdown_whose_cache_cannot_be_compiled_in_makes_nothing(tmp_path, capsys, monkeypatch):
    code, err = _run(capsys, "breakdown", MLP, "--device", "cpu", "--fresh-cache", "--out", str(tmp_path / "b d"))
    assert code == 2 and f"cache {tmp_path}/b d/cache has a space" in err and err.count("\n") == 1
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "it's"))
    code, err = _run(capsys, "breakdown", MLP, "--device", "cpu", "--out", str(tmp_path / "run"))
    assert code == 2 and "the shared cache" in err and "XDG_CACHE_HOME" in err
    assert _everything_under(tmp_path) == []


def test_a_compare_of_model_files_one_with_a_space_in_its_name_names_it_without_the_space(tmp_path, monkeypatch):
    # "my mlp.py" beside mlp.py had been refused before any work: "the run directory's cache
    # .../my mlp-eager/cache has a space ...: give --names names without them", where --names was not given
    model = tmp_path / "my mlp.py"
    model.write_text((MODELS / "mlp.py").read_text())
    columns = []

    def ran(opts, modes, run, run_dir, result, name, sides):
        columns.extend(column_dir(run_dir, name, m).relative_to(run_dir).as_posix() for m in modes)

    monkeypatch.setattr(runner_compare, "run_modes", ran)
    files = [WorkloadOptions(path=str(model), device="cpu"), WorkloadOptions(path=MLP, device="cpu")]
    result, _, err = runner_compare.run_compare(files[0], ["eager", "default"], also=files[1:],
                                                root=tmp_path / "runs")
    assert err is None and result.models == ["my_mlp", "mlp"] and result.model == "my_mlp vs mlp"
    assert columns == ["my_mlp-eager", "my_mlp-default", "mlp-eager", "mlp-default"]
