"""The merge gate's own answers before and after the comparison: a model file one revision lacks
is one line and exit 2, with no OUT_DIR made; a comparison or diff stopped by a signal stops the
gate with its status (130 Ctrl-C, 143 SIGTERM), not exit 3 as a failed comparison, nor a pass.
No compiles: the stops come from a synthetic stand-in for inductor-bench (INDUCTOR_BENCH)."""

import os
import shutil
import stat

import pytest

from .test_diff import _gate, _git


@pytest.fixture
def repo(tmp_path):
    """Two commits: models/a.py, then models/b.py and other/c.py added."""
    if shutil.which("git") is None:
        pytest.skip("the merge gate needs git")
    repo = tmp_path / "repo"
    (repo / "models").mkdir(parents=True)
    _git(repo, "init", "-q")
    (repo / "models" / "a.py").write_text("A = 1\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "a")
    first = _git(repo, "rev-parse", "HEAD")
    (repo / "models" / "b.py").write_text("B = 1\n")
    (repo / "other").mkdir()
    (repo / "other" / "c.py").write_text("C = 1\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "b, c")
    return repo, first, _git(repo, "rev-parse", "HEAD")


@pytest.mark.parametrize("model", ["models/b.py", "other/c.py"])
def test_a_model_file_missing_at_a_revision_is_one_line_and_no_out_dir(repo, model):
    """other/c.py's directory is missing at the first revision too: git archive and tar each
    printed their own errors before the gate's line; models/b.py's is not, and the gate left
    OUT_DIR/src-base behind, so a second run with the same -o was refused as not empty."""
    repo, first, second = repo
    out = repo.parent / "out"
    for base, head in ((first, second), (second, first)):
        r = _gate("-o", str(out), model, base, head, cwd=repo)
        assert (r.returncode, r.stderr) == (2, f"merge_gate: {model} does not exist at {first}\n")
        assert r.stdout == "" and not out.exists()


def fake_bench(tmp_path, command: str, status: int) -> str:
    """A synthetic inductor-bench whose `command` exits with `status`; its others exit 0."""
    script = tmp_path / "fake-bench"
    script.write_text(f'#!/bin/sh\n[ "$1" = {command} ] && exit {status}\nexit 0\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


@pytest.mark.parametrize(("command", "status"), [("compare", 130), ("compare", 143), ("diff", 130)])
def test_a_stopped_comparison_stops_the_gate_with_its_status(repo, tmp_path, monkeypatch, command, status):
    """A Ctrl-C during the comparison read 'the comparison failed (exit 130)' and exit 3; one
    during the diff, '(the diff failed ...)' and the comparison's verdict, exit 0."""
    repo, first, second = repo
    monkeypatch.setenv("INDUCTOR_BENCH", fake_bench(tmp_path, command, status))
    out = tmp_path / "out"
    r = _gate("-o", str(out), "models/a.py", first, second, cwd=repo)
    assert r.returncode == status
    assert r.stderr.splitlines() == [
        f"merge_gate: comparing {first} and {second} (a.py, mode default)",
        f"merge_gate: stopped (exit {status}), no verdict; what was measured is saved in {out}",
    ]
    assert r.stdout == ""


def test_a_failed_diff_keeps_the_verdict_of_the_comparison(repo, tmp_path, monkeypatch):
    repo, first, second = repo
    monkeypatch.setenv("INDUCTOR_BENCH", fake_bench(tmp_path, "diff", 3))
    out = tmp_path / "out"
    r = _gate("-o", str(out), "models/a.py", first, second, cwd=repo)
    assert r.returncode == 0
    assert r.stdout.rstrip().endswith(f"(the diff failed: see {out}/compare.log)")
    assert r.stderr.splitlines()[-1] == f"merge_gate: base {first}, head {second}; results in {out}"


def test_an_out_dir_that_cannot_be_made_is_exit_2_not_a_regression(repo):
    """mkdir's own message and set -e's exit 1 read as a regression to a CI job."""
    repo, first, second = repo
    (repo.parent / "a-file").write_text("")
    out = repo.parent / "a-file" / "out"
    r = _gate("-o", str(out), "models/a.py", first, second, cwd=repo)
    assert (r.returncode, r.stderr) == (2, f"merge_gate: {out}: cannot create the directory (Not a directory)\n")


def test_a_full_disk_as_a_revision_is_exported_is_exit_74_not_a_regression(repo, tmp_path, monkeypatch):
    """tar's own lines and set -e's status (2, or 1 for a redirect) read as bad arguments or a
    regression to a CI job; a synthetic tar on PATH fails as on a full disk."""
    repo, first, second = repo
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tar = bin_dir / "tar"
    tar.write_text('#!/bin/sh\ncat >/dev/null\necho "tar: models/a.py: Cannot write: No space left on device" >&2\n'
                   "exit 2\n")
    tar.chmod(tar.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("INDUCTOR_BENCH", fake_bench(tmp_path, "compare", 0))
    out = tmp_path / "out"
    r = _gate("-o", str(out), "models/a.py", first, second, cwd=repo)
    assert (r.returncode, r.stdout) == (74, "")
    assert r.stderr == (f"merge_gate: {out}/src-base: cannot write {first}'s files (No space left on device); "
                        "no verdict\n")


def test_a_comparison_that_could_not_write_is_exit_74_naming_the_file(repo, tmp_path, monkeypatch):
    """inductor-bench's own 74 read 'the comparison failed (exit 74)' and exit 3."""
    repo, first, second = repo
    script = tmp_path / "fake-bench"
    script.write_text('#!/bin/sh\n[ "$1" = compare ] || exit 0\n'
                      'echo "inductor-bench: error: /x/compare.json: cannot write (No space left on device)" >&2\n'
                      "exit 74\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("INDUCTOR_BENCH", str(script))
    out = tmp_path / "out"
    r = _gate("-o", str(out), "models/a.py", first, second, cwd=repo)
    assert (r.returncode, r.stdout) == (74, "")
    assert r.stderr.splitlines()[-1] == (
        "merge_gate: the comparison could not write its results (inductor-bench: error: /x/compare.json: "
        "cannot write (No space left on device)); no verdict")
