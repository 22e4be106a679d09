"""The files of a run: a run directory belongs to one run, every file is written whole or not
at all, and a full or read-only disk, or a stdout that cannot be written, is one line naming
the path and exit 74 (what was saved before stays as it was)."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from inductor_bench.core.errors import UsageError
from inductor_bench.core.rundir import load_breakdown
from inductor_bench.runner import rundir
from inductor_bench.runner.rundir import WriteError, new_run_dir, save_result, write_atomic

from .conftest import FIXTURES, ROOT

SAVED = FIXTURES / "results" / "cpu_mlp_slow_train" / "breakdown.json"
WRITE_ERROR = 74


def cli(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inductor_bench.cli", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=120, **kw)


def only_line(stderr: str) -> str:
    """The one line printed, besides the notes said of the input before it (the Inductor
    variables the workers do not get: a process that imported torch, as this one, has some;
    a saved result judged by older statistics rules)."""
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    (line,) = [ln for ln in stderr.splitlines() if not ln.startswith("note: ")]
    return line


# -- a run directory is claimed once -----------------------------------------------------------


def test_an_empty_out_directory_is_claimed_by_one_run_only(tmp_path):
    """Two runs given the same empty --out used to both take it (emptiness checked, then
    mkdir(exist_ok=True)): the second is refused now, whenever it comes."""
    out = tmp_path / "same"
    out.mkdir()
    assert new_run_dir("m", "default", out=out) == out
    with pytest.raises(UsageError, match="already exists and is not empty"):
        new_run_dir("m", "default", out=out)


def test_a_new_out_directory_is_claimed_by_one_run_only(tmp_path):
    out = tmp_path / "new" / "run"
    assert new_run_dir("m", "default", out=out) == out
    with pytest.raises(UsageError):
        new_run_dir("m", "default", out=out)


@pytest.mark.parametrize("content", ["", "x"])
def test_an_out_path_that_is_a_file_is_said_to_be_one(tmp_path, content):
    """An empty file given as --out was refused as 'already exists and is not empty'."""
    out = tmp_path / "afile"
    out.write_text(content)
    with pytest.raises(UsageError) as e:
        new_run_dir("m", "default", out=out)
    assert str(e.value) == f"--out {out}: a file, not a directory (give a new or empty directory)"
    assert out.read_text() == content


def test_the_claim_of_an_out_directory_is_json_until_the_run_writes_its_own(tmp_path):
    """The claim a run killed before its own meta.json leaves is valid JSON saying what claimed
    the directory, not an empty file."""
    out = tmp_path / "cmp"
    new_run_dir("m", "compare", out=out)
    meta = json.loads((out / "meta.json").read_text())
    assert meta["tool"] == "inductor-bench" and meta["status"] == "claimed" and meta["pid"] == os.getpid()


def test_runs_started_together_never_share_a_directory(tmp_path):
    """Six processes claim one --out at once: exactly one gets it."""
    script = ("import sys\nfrom inductor_bench.runner.rundir import new_run_dir\n"
              "try:\n    print(new_run_dir('m', 'default', out=sys.argv[1]))\n"
              "except Exception as e:\n    print('refused', type(e).__name__)\n")
    out = tmp_path / "same"
    procs = [subprocess.Popen([sys.executable, "-c", script, str(out)], stdout=subprocess.PIPE, text=True,
                              cwd=ROOT) for _ in range(6)]
    said = sorted(p.communicate(timeout=120)[0].strip() for p in procs)
    assert said == [str(out)] + ["refused UsageError"] * 5


def test_run_directories_are_absolute(tmp_path, monkeypatch):
    """Workers get paths that stay right when the model changes directory."""
    monkeypatch.chdir(tmp_path)
    d = new_run_dir("m", "default", root="runs")
    assert d.is_absolute() and d.parent == tmp_path / "runs"
    assert new_run_dir("m", "default", out="o").is_absolute()


# -- written whole or not at all ----------------------------------------------------------------


def test_a_failed_write_keeps_the_file_as_it_was(tmp_path, monkeypatch):
    target = tmp_path / "breakdown.json"
    write_atomic(target, '{"saved": 1}')

    def full_disk(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(rundir.os, "replace", full_disk)
    with pytest.raises(WriteError) as e:
        write_atomic(target, '{"saved": 2}')
    assert str(e.value) == f"{target}: cannot write (No space left on device)"
    assert target.read_text() == '{"saved": 1}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["breakdown.json"]  # no temporary left


def test_html_given_a_device_a_fifo_or_a_link_writes_into_it_never_replaces_it(tmp_path):
    """--html /dev/full, run as root, renamed the page over the device: /dev/full became an
    HTML file (and /dev/stdout, a link, would have become one). The page is written into what
    the path is or leads to; a device that cannot take it is one line, exit 74."""
    import threading

    from inductor_bench.commands.output import write_html

    page = "<!DOCTYPE html><p>page</p>"
    fifo = tmp_path / "pipe.html"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)
    reader.start()
    write_html(fifo, page, asked=True)
    reader.join(10)
    assert got == [page] and fifo.is_fifo()
    target = tmp_path / "real.html"
    target.write_text("old")
    (tmp_path / "link.html").symlink_to(target)
    write_html(tmp_path / "link.html", page, asked=True)
    assert (tmp_path / "link.html").is_symlink() and target.read_text() == page
    if Path("/dev/full").exists():
        (tmp_path / "full.html").symlink_to("/dev/full")
        with pytest.raises(WriteError) as e:
            write_html(tmp_path / "full.html", page, asked=True)
        assert str(e.value) == f"{tmp_path / 'full.html'}: cannot write (No space left on device)"
        assert (tmp_path / "full.html").is_symlink() and Path("/dev/full").is_char_device()
    inside = tmp_path / "sweep"  # a link in a directory the tool writes its page into is never followed
    inside.mkdir()
    (inside / "index.html").symlink_to(target)
    write_html(inside / "index.html", "<p>sweep</p>")
    assert not (inside / "index.html").is_symlink() and target.read_text() == page
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["sweep"] + [
        "pipe.html", "real.html", "link.html"] + (["full.html"] if Path("/dev/full").exists() else []))


@pytest.fixture
def tiny_disk(tmp_path):
    """A 64 KiB tmpfs (root only), unmounted after the test."""
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], capture_output=True)
    if r.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_a_full_disk_keeps_the_saved_result_readable(tiny_disk):
    result = load_breakdown(SAVED)
    save_result(tiny_disk, result)
    before = (tiny_disk / "breakdown.json").read_bytes()
    fd = os.open(tiny_disk / "filler", os.O_CREAT | os.O_WRONLY)
    with pytest.raises(OSError, match="No space left"):
        while True:
            os.write(fd, b"x" * 4096)
    os.close(fd)
    result.errors.append("a later error")
    with pytest.raises(WriteError, match=f"^{tiny_disk / 'breakdown.json'}: cannot write \\(No space left"):
        save_result(tiny_disk, result)
    assert (tiny_disk / "breakdown.json").read_bytes() == before
    assert load_breakdown(tiny_disk).errors == json.loads(before)["errors"]
    assert sorted(p.name for p in tiny_disk.iterdir()) == ["breakdown.json", "filler"]


def test_a_read_only_out_is_one_line(tiny_disk):
    """Before any worker starts: the run directory cannot be made there."""
    subprocess.run(["mount", "-o", "remount,ro", str(tiny_disk)], check=True)
    p = cli("breakdown", str(ROOT / "models" / "mlp.py"), "--device", "cpu", "--out", str(tiny_disk / "run"))
    assert p.returncode == WRITE_ERROR
    assert only_line(p.stderr) == (
        f"inductor-bench: error: --out {tiny_disk / 'run'}: cannot create it (Read-only file system)")


# -- stdout -------------------------------------------------------------------------------------


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_stdout_on_a_full_device_is_one_line():
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", "inductor_bench.cli", "report", str(SAVED)], stdout=full,
                           stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=120)
    assert p.returncode == WRITE_ERROR
    assert only_line(p.stderr) == (
        "inductor-bench: error: stdout: cannot write the report (No space left on device)")


def test_a_closed_stdout_is_one_line():
    p = subprocess.run([sys.executable, "-m", "inductor_bench.cli", "report", str(SAVED)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=120,
                       preexec_fn=lambda: os.close(1))
    assert p.returncode == WRITE_ERROR
    assert only_line(p.stderr) == "inductor-bench: error: stdout: cannot write the report (stdout is closed)"


@pytest.mark.parametrize("unbuffered", ["", "1"], ids=["buffered", "PYTHONUNBUFFERED"])
def test_a_reader_that_closes_its_pipe_early_is_one_line_and_exit_74(unbuffered):
    """A reader that takes 10 bytes of a 115 KB JSON and closes its end: the write fails, and
    says so with exit 74, whether Python buffers stdout or not (unbuffered, its text layer
    wrote once and dropped what a partial write left: exit 0, the output cut at 64 KiB)."""
    run = FIXTURES / "runs" / "cuda_h200_transformer_train"
    env = dict(os.environ, PYTHONUNBUFFERED=unbuffered) if unbuffered else {
        k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    p = subprocess.Popen([sys.executable, "-m", "inductor_bench.cli", "report", str(run), "--format", "json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env=env)
    assert len(p.stdout.read(10)) == 10
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == WRITE_ERROR, err
    assert only_line(err) == "inductor-bench: error: stdout: cannot write the report (Broken pipe)"


def test_json_is_never_overwritten(tmp_path):
    """--json never overwrites a file, and leaves no temporary beside it."""
    from inductor_bench.commands.output import emit_json

    dest = tmp_path / "r.json"
    emit_json('{"a": 1}', dest)
    shutil.copy(dest, tmp_path / "copy.json")
    with pytest.raises(UsageError, match="already exists"):
        emit_json('{"a": 2}', dest)
    assert dest.read_text() == '{"a": 1}' and sorted(p.name for p in tmp_path.iterdir()) == ["copy.json", "r.json"]


# -- the compile cache --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["dangling link", "file"])
def test_a_cache_directory_that_is_not_one_is_one_line(tmp_path, kind):
    """Before any worker starts; the user's Inductor variables, which no worker gets, are named."""
    cache = tmp_path / "xdg" / "inductor-bench"
    cache.parent.mkdir()
    if kind == "file":
        cache.write_text("")
    else:
        cache.symlink_to(tmp_path / "gone")
    env = {**os.environ, "XDG_CACHE_HOME": str(cache.parent), "TORCHINDUCTOR_MAX_AUTOTUNE": "1"}
    p = subprocess.run([sys.executable, "-m", "inductor_bench.cli", "breakdown", str(ROOT / "models" / "mlp.py"),
                        "--device", "cpu", "--runs-dir", str(tmp_path / "runs")],
                       capture_output=True, text=True, cwd=ROOT, timeout=120, env=env)
    assert p.returncode == 2 and "Traceback" not in p.stderr and "internal error" not in p.stderr
    note, error = p.stderr.splitlines()
    prefix = "note: not passed to the workers, which set Inductor's flags and cache themselves: "
    assert note.startswith(prefix) and "TORCHINDUCTOR_MAX_AUTOTUNE" in note[len(prefix):].split(", ")
    what = "is a symbolic link" if kind == "dangling link" else "is not a directory"
    assert error.startswith(f"inductor-bench: error: cache directory {cache} {what}; refusing to use it")
