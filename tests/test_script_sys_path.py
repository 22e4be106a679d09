"""A script run by ``breakdown`` imports what ``python SCRIPT.py`` would: its ``sys.path`` is
the script's directory, then the user's PYTHONPATH, then the interpreter's own; neither the
working directory nor the tool's package root stands in front of the user's entries. Each
expectation is what a real ``python`` run of the same script, from the same directory, records.
The script compiles nothing, so the compile worker answers once it ran."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from inductor_bench.core import errors
from inductor_bench.core.workload import WorkloadOptions
from inductor_bench.runner import python_start
from inductor_bench.runner.compile_run import COMPILE_WORKER
from inductor_bench.runner.worker import run_worker

# Records its sys.path, its PYTHONPATH and which ``helper`` it imports, then imports a module
# only the working directory holds.
RECORDER = """\
import json, os, sys
import helper
seen = {"path": sys.path, "pythonpath": os.environ.get("PYTHONPATH"), "helper": helper.WHERE}
with open(os.environ["SEEN_OUT"], "w") as f:
    json.dump(seen, f)
import only_in_cwd
"""


def _tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    """work/ (the working directory: helper.py and only_in_cwd.py), user_path/ (on the user's
    PYTHONPATH: helper.py) and scripts/show.py; the working directory's helper would shadow the
    PYTHONPATH's."""
    work, user_path, scripts = tmp_path / "work", tmp_path / "user_path", tmp_path / "scripts"
    for d in (work, user_path, scripts):
        d.mkdir()
    (work / "helper.py").write_text("WHERE = 'working directory'\n")
    (work / "only_in_cwd.py").write_text("")
    (user_path / "helper.py").write_text("WHERE = 'PYTHONPATH'\n")
    (scripts / "show.py").write_text(RECORDER)
    return work, user_path, scripts / "show.py"


def test_a_script_in_another_directory_imports_what_python_gives_it(tmp_path, monkeypatch):
    work, user_path, script = _tree(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(user_path), "SEEN_OUT": str(tmp_path / "python.json")}
    python = subprocess.run([sys.executable, str(script)], cwd=work, env=env, capture_output=True, text=True,
                            timeout=120)
    assert python.stderr.strip().splitlines()[-1] == "ModuleNotFoundError: No module named 'only_in_cwd'"
    expected = json.loads((tmp_path / "python.json").read_text())
    assert expected["path"][:2] == [str(script.parent), str(user_path)] and expected["helper"] == "PYTHONPATH"

    monkeypatch.chdir(work)
    monkeypatch.setenv("PYTHONPATH", str(user_path))
    request = {"options": WorkloadOptions(str(script)).to_dict(), "modules_log": str(tmp_path / "modules.jsonl"),
               "log": str(tmp_path / "compile.log")}
    with pytest.raises(errors.WorkloadError) as err:
        run_worker(COMPILE_WORKER, request, timeout=300, env={"SEEN_OUT": str(tmp_path / "tool.json")},
                   log_path=tmp_path / "compile.log")
    assert str(err.value) == (
        "the script raised: ModuleNotFoundError: No module named 'only_in_cwd' (the working directory holds "
        "only_in_cwd.py, but Python does not look there for a file's imports: only beside the file and on "
        f"PYTHONPATH) (log: {tmp_path / 'compile.log'})")
    seen = json.loads((tmp_path / "tool.json").read_text())
    assert seen == expected
    assert str(work) not in seen["path"] and python_start.PACKAGE_ROOT not in seen["path"][:2]


def test_the_entries_the_tool_put_on_the_path_are_taken_away_once(monkeypatch):
    """synthetic path: the worker's own entries (the package root in front, the ``-c`` entry at
    the end) go, the user's own copies of them (an empty PYTHONPATH entry) stay where Python put
    them; a second file goes first in turn."""
    root = python_start.PACKAGE_ROOT
    monkeypatch.setattr(sys, "path", [root, "", "/user/a", root, "/lib", ""])
    python_start.started(root, [""], [])
    python_start.put_first_on_path("/scripts", as_python=True)
    assert sys.path == ["/scripts", "", "/user/a", root, "/lib"]
    python_start.put_first_on_path("/models", as_python=False)
    assert sys.path == ["/models", "/scripts", "", "/user/a", root, "/lib"]


def test_a_module_beside_the_script_named_as_one_torch_imports_is_refused_in_one_line(tmp_path, monkeypatch):
    """``queue.py`` beside the script, run from its directory: ``python show.py`` gives torch that
    file as it imports ``queue`` (and torch fails); under the tool torch's ``queue`` was imported
    first, so the script's ``import queue`` would silently get it. Refused in one line, before
    the script runs; the worker's own imports never see the working directory's ``queue.py``
    (they failed on it)."""
    (tmp_path / "queue.py").write_text("MARK = 'local'\n")
    (tmp_path / "helper.py").write_text("WHERE = 'beside'\n")
    (tmp_path / "show.py").write_text(RECORDER)
    python = subprocess.run([sys.executable, "-c", "import torch"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120)
    assert python.stderr.strip().splitlines()[-1] == (
        f"ImportError: cannot import name 'Queue' from 'queue' ({tmp_path / 'queue.py'})")

    monkeypatch.chdir(tmp_path)
    request = {"options": WorkloadOptions(str(tmp_path / "show.py")).to_dict(),
               "modules_log": str(tmp_path / "modules.jsonl"), "log": str(tmp_path / "compile.log")}
    with pytest.raises(errors.WorkloadError) as err:
        run_worker(COMPILE_WORKER, request, timeout=300, env={"SEEN_OUT": str(tmp_path / "tool.json")},
                   log_path=tmp_path / "compile.log")
    assert str(err.value) == (
        "show.py: queue.py beside it has the name of a module torch imports (queue): here `import` gets the "
        "installed one, not queue.py, and `python show.py` gives torch queue.py in its place; rename queue.py")
    assert not (tmp_path / "tool.json").exists()


def test_which_files_beside_a_model_stand_for_modules_already_imported(tmp_path, monkeypatch):
    """synthetic directory: ``queue.py`` and a package ``json/`` name modules of the standard
    library imported in this process; ``random.py`` one Python imported as it started (``python
    FILE`` does not import the file either); ``helper.py`` none; a plain ``logging/`` directory
    is no module (a namespace package never wins over the installed one)."""
    import json  # noqa: F401
    import queue  # noqa: F401

    from inductor_bench.runner.workload import shadowing_files

    for name in ("queue.py", "random.py", "helper.py"):
        (tmp_path / name).write_text("")
    (tmp_path / "json").mkdir()
    (tmp_path / "json" / "__init__.py").write_text("")
    (tmp_path / "logging").mkdir()
    monkeypatch.setattr(python_start, "AT_START", {"random"})
    assert shadowing_files(str(tmp_path)) == {"json": "json/", "queue": "queue.py"}


def test_python_m_from_a_directory_holding_a_module_named_as_the_standard_librarys_starts(tmp_path):
    """``python -m inductor_bench`` run where a ``queue.py`` is: the tool's own imports get the
    standard library's ``queue`` (they raised ImportError on the file, a traceback)."""
    (tmp_path / "queue.py").write_text("MARK = 'local'\n")
    p = subprocess.run([sys.executable, "-m", "inductor_bench", "sweep", "--help"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "Usage: inductor-bench sweep" in p.stdout
