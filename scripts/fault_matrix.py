"""The fault matrix: every fault of docs/reliability.md tried on the installed tool, one line
each, PASS or FAIL with the evidence (exit status, the line printed). Exit 1 if any failed.

    python scripts/fault_matrix.py            # the fast probes (seconds each)
    python scripts/fault_matrix.py --e2e      # also SIGTERM mid-compile and mid-profile of
                                              # models/mlp.py --train (compiles: minutes)

Probes that need root (a tmpfs) say SKIP without it. The same faults are tests (tests/
test_signals.py, test_run_files.py, test_model_files.py, test_kernel_provenance.py,
test_escaping.py, test_bad_values.py); this script shows them together, on any machine.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MLP = ROOT / "models" / "mlp.py"
SAVED = ROOT / "tests" / "fixtures" / "results" / "cpu_mlp_slow_train" / "breakdown.json"
RUN = ROOT / "tests" / "fixtures" / "runs" / "cpu_fft_inference"  # a recorded run: profiles, digests
SIN = ROOT / "tests" / "fixtures" / "triton_kernels" / "synthetic_cuda" / "triton_poi_fused_add_sin_0.py"
Probe = Callable[[Path], tuple[bool | None, str]]  # (passed, None = skipped; the evidence)
PROBES: list[tuple[str, Probe]] = []


def probe(name: str, e2e: bool = False) -> Callable[[Probe], Probe]:
    def add(fn: Probe) -> Probe:
        PROBES.append((("e2e: " if e2e else "") + name, fn))
        return fn

    return add


def cli(*args: str, **kw) -> subprocess.CompletedProcess:
    """The tool run as a user runs it, in an environment without the Inductor variables it
    would note it does not pass on (a line before the one each probe judges)."""
    from inductor_bench.runner.worker import scrubbed_variables

    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("env", {k: v for k, v in os.environ.items() if k not in scrubbed_variables()})
    return subprocess.run([sys.executable, "-m", "inductor_bench.cli", *args], stderr=subprocess.PIPE,
                          text=True, cwd=kw.pop("cwd", ROOT), timeout=kw.pop("timeout", 120), **kw)


def one_line(p: subprocess.CompletedProcess, code: int, *words: str) -> tuple[bool, str]:
    """Whether ``p`` exited ``code`` with one error line on stderr holding ``words``; the notes
    a command says of its input before it (``note: ...``, e.g. a saved result judged by older
    statistics rules) are no part of the error."""
    lines = [ln for ln in p.stderr.strip().splitlines() if not ln.startswith("note:")]
    last = lines[-1] if lines else ""
    ok = p.returncode == code and len(lines) == 1 and all(w in last for w in words)
    more = f" (and {len(lines) - 1} line(s) before it, the first: {lines[0][:120]})" if len(lines) > 1 else ""
    return ok, f"exit {p.returncode}: {last[:160]}{more}"


@contextlib.contextmanager
def tmpfs(where: Path, size: str = "64k") -> Iterator[Path | None]:
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                             capture_output=True).returncode == 0
    try:
        yield where if mounted else None
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(where)], check=False)


# -- model files and options --------------------------------------------------------------------


@probe("model path a link to /dev/zero")
def _zero(tmp: Path):
    (tmp / "zero.py").symlink_to("/dev/zero")
    return one_line(cli("breakdown", str(tmp / "zero.py")), 2, "not a regular file")


@probe("model path a FIFO")
def _fifo(tmp: Path):
    os.mkfifo(tmp / "pipe.py")
    return one_line(cli("breakdown", str(tmp / "pipe.py")), 2, "not a regular file")


@probe("model file over 16 MiB")
def _big(tmp: Path):
    with open(tmp / "big.py", "wb") as f:
        f.truncate((16 << 20) + 1)
    return one_line(cli("breakdown", str(tmp / "big.py")), 2, "too large")


@probe("--timeout nan, 0, -1")
def _timeouts(tmp: Path):
    runs = [cli("breakdown", str(MLP), "--timeout", v, cwd=tmp) for v in ("nan", "0", "-1")]
    results = [one_line(p, 2, "--timeout") for p in runs]
    return all(ok for ok, _ in results), results[0][1]


# -- saved results ------------------------------------------------------------------------------


@probe("saved result holding NaN")
def _nan(tmp: Path):
    bad = tmp / "breakdown.json"
    bad.write_text(SAVED.read_text().replace('"wall_ms": ', '"wall_ms": NaN, "x": ', 1))
    return one_line(cli("report", str(bad), "--format", "json"), 2, "NaN")


@probe("saved result nested 100,000 deep")
def _deep(tmp: Path):
    bad = tmp / "breakdown.json"
    bad.write_text('{"schema": ' + "[" * 100_000 + "]" * 100_000 + "}")
    return one_line(cli("report", str(bad)), 2, "nested too deeply")


@probe("saved result naming a kernel file javascript:...")
def _javascript(tmp: Path):
    data = json.loads(SAVED.read_text())
    data["graphs"][0]["kernels"][0]["file"] = "javascript:alert(1)"
    (tmp / "breakdown.json").write_text(json.dumps(data))
    return one_line(cli("report", str(tmp), "--format", "html"), 2, "outside the run directory")


@probe("kernel RUN NAME on a kernel file changed after the run")
def _tampered(tmp: Path):
    sys.path.insert(0, str(ROOT))
    from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat
    from inductor_bench.runner.rundir import record_digests

    rel = "graphs/0-forward/kernels/k.py"
    (tmp / rel).parent.mkdir(parents=True)
    shutil.copyfile(SIN, tmp / rel)
    record_digests(tmp, [tmp / rel])
    k = KernelStat(name="triton_poi_fused_add_sin_0", category="triton_pointwise", calls=1, ms=1.0, file=rel)
    g = GraphResult(id="0-forward", role="forward", kernels=[k], wall_ms=1.0, kernel_ms=1.0)
    (tmp / "breakdown.json").write_text(BreakdownResult(model="m", device="cuda", graphs=[g]).to_json())
    mark = tmp / "imported"
    with open(tmp / rel, "a") as f:
        f.write(f"\nopen({str(mark)!r}, 'w').close()\n")
    ok, evidence = one_line(cli("kernel", str(tmp), k.name), 2, "changed since the run wrote it")
    return ok and not mark.exists(), evidence


@probe("report --reanalyze, the run's digests.json torn")
def _torn_digests(tmp: Path):
    run = tmp / "run"
    shutil.copytree(RUN, run)
    (run / "digests.json").write_text((run / "digests.json").read_text()[:40])
    ok, evidence = one_line(cli("report", str(run), "--reanalyze"), 2, "digests.json: damaged",
                            "none is analysed unchecked")
    return ok and not (run / "breakdown.before-reanalysis.json").exists(), evidence


@probe("report --reanalyze of a run being written, then SIGKILL")
def _being_written(tmp: Path):
    run = tmp / "run"
    holder = ("import sys, time\nfrom pathlib import Path\n"
              "from inductor_bench.runner.rundir import lock_writing, writing\n"
              "with writing():\n    lock_writing(Path(sys.argv[1]))\n    print('held', flush=True)\n"
              "    time.sleep(120)\n")  # a breakdown mid-run, as far as the run directory shows
    shutil.copytree(RUN, run)
    p = subprocess.Popen([sys.executable, "-c", holder, str(run)], cwd=ROOT, stdout=subprocess.PIPE,
                         text=True)
    try:
        p.stdout.readline()
        ok, evidence = one_line(cli("report", str(run), "--reanalyze"), 2, "still being written")
    finally:
        p.kill()
        p.wait()
    after = cli("report", str(run), "--reanalyze").returncode
    return ok and after == 0, f"{evidence}; after the SIGKILL: exit {after}"


@probe("markdown of a kernel named <img ...>|`x`\\n# h")
def _markdown(tmp: Path):
    data = json.loads(SAVED.read_text())
    data["graphs"][0]["kernels"][0]["name"] = "k<img src=x onerror=alert(1)>|`x`\n# injected"
    (tmp / "breakdown.json").write_text(json.dumps(data))
    p = cli("report", str(tmp), "--format", "markdown")
    injected = [ln for ln in p.stdout.splitlines() if ln.startswith("# injected")]
    outside_code = re.sub(r"(`+).+?\1", "", p.stdout)  # a code span shows its text as written
    return p.returncode == 0 and "<img" not in outside_code and not injected, f"exit {p.returncode}"


# -- the disk and stdout ------------------------------------------------------------------------


@probe("two runs given one --out at once (6 processes)")
def _same_out(tmp: Path):
    code = ("import sys\nfrom inductor_bench.runner.rundir import new_run_dir\ntry:\n"
            "    print(new_run_dir('m', 'default', out=sys.argv[1]))\nexcept Exception as e:\n"
            "    print('refused')\n")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp / "same")], stdout=subprocess.PIPE,
                              text=True, cwd=ROOT) for _ in range(6)]
    said = sorted(p.communicate()[0].strip() for p in procs)
    return said.count("refused") == 5, f"{6 - said.count('refused')} of 6 got the directory"


@probe("stdout on /dev/full")
def _dev_full(tmp: Path):
    with open("/dev/full", "w") as full:
        return one_line(cli("report", str(SAVED), stdout=full), 74, "stdout")


@probe("stdout closed")
def _closed(tmp: Path):
    return one_line(cli("report", str(SAVED), stdout=subprocess.DEVNULL, preexec_fn=lambda: os.close(1)),
                    74, "stdout is closed")


@probe("cache directory a dangling link")
def _cache_link(tmp: Path):
    (tmp / "inductor-bench").symlink_to(tmp / "gone")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp)}
    p = cli("breakdown", str(MLP), "--device", "cpu", "--runs-dir", str(tmp / "runs"), env=env)
    lines = [ln for ln in p.stderr.splitlines() if not ln.startswith("note:")]
    ok = p.returncode == 2 and len(lines) == 1 and "is a symbolic link" in lines[0]
    return ok, f"exit {p.returncode}: {lines[-1][:160] if lines else ''}"


@probe("read-only --out (tmpfs, root)")
def _read_only(tmp: Path):
    with tmpfs(tmp / "ro") as mnt:
        if mnt is None:
            return None, "no tmpfs here"
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        return one_line(cli("breakdown", str(MLP), "--device", "cpu", "--out", str(mnt / "run")), 74,
                        "Read-only file system")


@probe("full disk while saving a result (64 KiB tmpfs, root)")
def _full(tmp: Path):
    with tmpfs(tmp / "full") as mnt:
        if mnt is None:
            return None, "no tmpfs here"
        sys.path.insert(0, str(ROOT))
        from inductor_bench.core.rundir import load_breakdown
        from inductor_bench.runner.rundir import WriteError, save_result

        result = load_breakdown(SAVED)
        save_result(mnt, result)
        fd = os.open(mnt / "filler", os.O_CREAT | os.O_WRONLY)
        with contextlib.suppress(OSError):
            while True:
                os.write(fd, b"x" * 4096)
        os.close(fd)
        try:
            save_result(mnt, result)
            return False, "saved on a full disk?"
        except WriteError as e:
            kept = load_breakdown(mnt).model == result.model
            return kept, f"{e} (the saved one still reads: {kept})"


# -- signals (e2e) ------------------------------------------------------------------------------


def _signal_when(tmp: Path, marker: str, sig: int, extra: list[str]) -> tuple[int, float, str, list[int]]:
    cmd = ["breakdown", str(MLP), "--train", "--device", "cpu", "--runs-dir", str(tmp / "runs"), *extra]
    p = subprocess.Popen([sys.executable, "-m", "inductor_bench.cli", *cmd], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, cwd=ROOT)
    seen = ""
    while marker not in seen:
        line = p.stderr.readline()
        if not line:
            break
        seen += line
    time.sleep(0.5)
    sys.path.insert(0, str(ROOT))
    from inductor_bench.runner.machine import descendants

    below = descendants(p.pid)
    t0 = time.monotonic()
    p.send_signal(sig)
    _, err = p.communicate(timeout=120)
    time.sleep(0.2)
    left = [pid for pid in below if Path(f"/proc/{pid}").exists()]
    return p.returncode, time.monotonic() - t0, (seen + err).strip().splitlines()[-1], left


@probe("SIGTERM mid-compile", e2e=True)
def _term_compile(tmp: Path):
    rc, took, last, left = _signal_when(tmp, "compiling mlp.py", signal.SIGTERM, ["--fresh-cache"])
    evidence = f"exit {rc} after {took:.2f} s, {len(left)} left: {last[:120]}"
    return rc == 143 and took < 2 and not left, evidence


@probe("SIGTERM mid-profile", e2e=True)
def _term_profile(tmp: Path):
    rc, took, last, left = _signal_when(tmp, "profiling graph 0-backward", signal.SIGTERM, ["--windows", "5"])
    (run,) = (tmp / "runs").iterdir()
    result = json.loads((run / "breakdown.json").read_text())
    rendered = cli("report", str(run)).returncode == 0
    ok = rc == 143 and took < 2 and not left and result["status"] == "interrupted" and result["graphs"]
    return bool(ok and rendered), (f"exit {rc} after {took:.2f} s, {len(left)} left, graphs "
                                   f"{[g['id'] for g in result['graphs']]}, report renders: {rendered}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--e2e", action="store_true", help="also the probes that compile models/mlp.py")
    args = ap.parse_args()
    failed = 0
    for name, fn in PROBES:
        if name.startswith("e2e: ") and not args.e2e:
            continue
        with tempfile.TemporaryDirectory(prefix="fault-matrix-") as tmp:
            try:
                ok, evidence = fn(Path(tmp))
            except Exception as e:  # a probe that breaks is a failure, with what broke it
                ok, evidence = False, f"{type(e).__name__}: {e}"
        word = "SKIP" if ok is None else "PASS" if ok else "FAIL"
        failed += ok is False
        print(f"{word}  {name:55s} {evidence}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
