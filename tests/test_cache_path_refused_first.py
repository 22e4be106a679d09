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

from .conftest import MODELS

MLP = str(MODELS / "mlp.py")


def _run(capsys, *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as e:
        cli.main([*args])
    return int(e.value.code or 0), capsys.readouterr().err


def _everything_under(path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


@pytest.mark.parametrize("where", [["--out", "cmp 1/run"], ["--runs-dir", "runs sp"], ["--names", "my mlp"]])
def test_a_compare_whose_fresh_caches_cannot_be_compiled_in_makes_nothing(tmp_path, capsys, monkeypatch, where):
    monkeypatch.chdir(tmp_path)
    args = ["--runs-dir", "runs"] if where[0] != "--runs-dir" else []
    code, err = _run(capsys, "compare", MLP, "--device", "cpu", *args, *where)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("inductor-bench: error: the run directory's cache ") and "eager/cache has a space" in err
    assert _everything_under(tmp_path) == []


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
