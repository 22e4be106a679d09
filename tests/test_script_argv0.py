"""A script run by ``breakdown`` sees what ``python`` gives it: ``sys.argv[0]`` as typed
(``./sub/train.py``, not made absolute), ``__file__`` the path as typed joined to the working
directory, and ``sys.path[0]`` the directory of the file a link points to. Each expectation is
what a real ``python`` run of the same invocation records."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from inductor_bench.commands.options import a_path, workload_options
from inductor_bench.runner.workload import main_file, run_model_file

# Records what the script sees; it compiles nothing, so a breakdown of it stops once it ran.
RECORDER = """\
import json, os, sys
with open(os.environ["SEEN_OUT"], "w") as f:
    json.dump({"argv": sys.argv, "file": __file__, "path0": sys.path[0], "name": __name__}, f)
"""


def _tree(tmp_path: Path) -> Path:
    """real/show.py and a link to it, sub/link.py; the working directory is ``tmp_path/work``."""
    (tmp_path / "real").mkdir()
    (tmp_path / "sub").mkdir()
    (tmp_path / "work").mkdir()
    (tmp_path / "real" / "show.py").write_text(RECORDER)
    (tmp_path / "sub" / "link.py").symlink_to(tmp_path / "real" / "show.py")
    return tmp_path / "work"


def _python_sees(cwd: Path, typed: str, args: list[str], out: Path) -> dict:
    subprocess.run([sys.executable, typed, *args], cwd=cwd, env={**os.environ, "SEEN_OUT": str(out)},
                   check=True, timeout=60)
    return json.loads(out.read_text())


@pytest.mark.parametrize("typed", ["../real/show.py", "./../sub/link.py", "../sub//link.py"])
def test_the_script_sees_what_python_gives_it(tmp_path, monkeypatch, typed):
    work = _tree(tmp_path)
    expected = _python_sees(work, typed, ["--n", "2"], tmp_path / "python.json")
    monkeypatch.chdir(work)
    opts = workload_options(a_path(typed), "auto", False, "float32", False, "default", None,
                            script_args=["--n", "2"])
    assert opts.path == os.path.abspath(typed) and opts.typed_path == typed
    monkeypatch.setenv("SEEN_OUT", str(tmp_path / "tool.json"))
    monkeypatch.setattr(sys, "argv", [opts.typed_path, *opts.script_args])  # as the compile worker sets it
    monkeypatch.setattr(sys, "path", list(sys.path))
    run_model_file(main_file(opts.path, opts.typed_path), "__main__")
    assert json.loads((tmp_path / "tool.json").read_text()) == expected


def test_the_file_is_the_absolute_path_where_the_directory_changed(tmp_path, monkeypatch):
    work = _tree(tmp_path)
    path = str(tmp_path / "real" / "show.py")
    monkeypatch.chdir(work)
    assert main_file(path, "../real/./show.py") == str(work) + "/../real/./show.py"
    monkeypatch.chdir(tmp_path)  # the typed path names nothing from here
    assert main_file(path, "../real/./show.py") == path
    assert main_file(path, "") == path


@pytest.mark.slow
def test_a_breakdown_of_a_script_gives_it_what_python_gives_it(tmp_path):
    work = _tree(tmp_path)
    typed = "./../sub/link.py"
    expected = _python_sees(work, typed, ["--n", "2"], tmp_path / "python.json")
    p = subprocess.run(
        [sys.executable, "-m", "inductor_bench.cli", "breakdown", typed, "--device", "cpu",
         "--out", str(tmp_path / "run"), "--", "--n", "2"],
        cwd=work, env={**os.environ, "SEEN_OUT": str(tmp_path / "tool.json")},
        capture_output=True, text=True, timeout=300)
    assert "nothing was compiled" in p.stderr, p.stderr[-3000:]  # the script ran, then the run stopped
    assert json.loads((tmp_path / "tool.json").read_text()) == expected
