"""The GPU validation, in parts that each fit one device command; ``scripts/gpu_validate.sh`` runs it.

    scripts/gpu_validate.sh --list-parts             # the parts, their steps and caps, the device calls
    scripts/gpu_validate.sh --part N OUT_DIR         # on a CUDA machine: one part, within its limit
    scripts/gpu_validate.sh --part N --dry-run OUT_DIR   # on CPU: that part's plumbing

Part 1 (``scripts/gpu_validate_parts.py`` holds the parts and every step's cap):

 1. ``breakdown --train`` of models/mlp.py and models/transformer_block.py, modes default and
    reduce-overhead; on each: exit status, busy <= 100%;
 2. on each: every graph's kernel time against a plain ``torch.profiler`` run of its compiled
    module, the step time against CUDA events around the model's step; the quiet-load reading;
 3. ``kernel --max-autotune`` on the slowest Triton kernel of each default run (config counts,
    the patch against torch's mode table), then those kernels against ``triton.testing.do_bench``;
    the unprofiled pipelined run against the profiled one; the measured ceilings against do_bench;
 4. ``pytest -m gpu`` (tests/test_gpu_breakdown.py, tests/test_kernel_gpu.py).

Part 2: ``compare --modes default,reduce-overhead``; mlp again beside another process on the
GPU (the tool must say so); the disturbance benchmark (``scripts/bench_disturbance.py``) on the
GPU. Part 3: every other example model, training and inference, default and reduce-overhead.

Each step runs within its own cap; the caps of a part add up to its budget less what starting
and finishing take, so every step of a part gets its whole share. A step that crashes or
overruns is recorded and the next one runs. Without ``--part`` every part runs in turn (a
machine without the device's 10-minute limit).

Every check prints one line ``PASS|FAIL|SKIPPED name: numbers``. OUT_DIR receives five files
(a device machine returns at most eight): ``report.md`` (device, versions, date, every figure,
every check with its numbers), ``results.json`` (the same, as data), ``fixtures.tar.gz``
(small real fixtures for the CPU suite: breakdown.json, traces, compiled modules, a few Triton
kernel files, the CLI outputs), ``logs.tar.gz`` and ``console.log``. The report is rewritten
after every step, so a kill loses only the step in flight. Exit status: 0 every check passed
or was skipped, 1 a check failed, 2 no GPU (without --dry-run), bad arguments, or OUT_DIR
not empty.

Nothing is installed: the checkout runs in place (``python -m inductor_bench.cli``, this
repository first on PYTHONPATH). Packages that the image lacks (msgspec) are installed from
wheels in ``.whl/`` (``--wheels``) into a private directory when they are missing.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import re
import select
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu_validate_checks as ck  # noqa: E402
import gpu_validate_parts as parts  # noqa: E402
import gpu_validate_report as rep  # noqa: E402
from gpu_validate_checks import FAIL, PASS, SKIPPED, Check, MeasureError, Run  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"
CHECKS_SCRIPT = Path(ck.__file__).resolve()
GPU_TESTS = ["tests/test_gpu_breakdown.py", "tests/test_kernel_gpu.py"]

FINISH_RESERVE_S = parts.RESERVE_S  # kept for a step's overrun (stopping it), the bundles and the report
WATCHDOG_S = parts.WATCHDOG_S  # past budget + this, the driver stops the step in flight and writes the report
MODEL_ORDER = ["mlp", "transformer_block", "densenet", "mixnet", "graph_break_script", "mlp_slow"]
# The runs of part 1, each with the independent checks: (key suffix, model, mode).
MAIN_RUNS = [
    ("mlp", "mlp", "default"),
    ("transformer", "transformer_block", "default"),
    ("mlp-ro", "mlp", "reduce-overhead"),
    ("transformer-ro", "transformer_block", "reduce-overhead"),
]
MATRIX_GPU = "train:default,train:reduce-overhead,inference:default,inference:reduce-overhead"
MATRIX_DRY = "inference:default"
# Profiling options per run: (GPU, dry run). The main runs are the reference figures.
PROFILE_MAIN = (["--iterations", "20", "--windows", "3"], ["--iterations", "3", "--windows", "1"])
PROFILE_MATRIX = (["--iterations", "10", "--windows", "2"], ["--iterations", "3", "--windows", "1"])
COMPARE_OPTS = (
    ["--repeat", "20", "--iterations", "10", "--windows", "2"],
    ["--repeat", "3", "--iterations", "3", "--windows", "1"],
)
# The disturbance benchmark in the validation: one round of mlp, quiet and beside each disturber.
DISTURBANCE_OPTS = (
    ["--models", "mlp", "--rounds", "1", "--kinds", "quiet,busy,stall"],
    ["--models", "mlp", "--rounds", "1", "--kinds", "busy"],
)


class Aborted(Exception):
    """SIGTERM / SIGINT / the watchdog: stop the step in flight, write what ran."""


class SkipStep(Exception):
    """The step cannot run (budget, or what it needs did not happen); the reason is the text."""


# -- time ----------------------------------------------------------------------------------


class Budget:
    def __init__(self, total_s: float, reserve_s: float = FINISH_RESERVE_S, t0: float | None = None) -> None:
        self.t0 = time.monotonic() if t0 is None else t0  # the driver's start: the probe counts too
        self.total_s, self.reserve_s = total_s, reserve_s

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def left(self) -> float:
        return self.total_s - self.reserve_s - self.elapsed()

    def grant(self, cap: float, need: float) -> float | None:
        """Seconds for a step that may use ``cap`` and is worth starting with ``need``."""
        t = min(cap, self.left())
        return t if t >= need else None


class Deadline:
    """One step's share of the budget; its commands take from it."""

    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return self.end - time.monotonic()

    def take(self, cap: float, need: float = 5.0) -> float:
        t = min(cap, self.left())
        if t < need:
            raise SkipStep(f"budget: {max(self.left(), 0):.0f} s left of this step's share")
        return t


# -- commands ------------------------------------------------------------------------------

_LIVE: set[subprocess.Popen] = set()
_LIVE_LOCK = threading.Lock()
_STOPPING = threading.Event()  # set when aborting: no new command starts


@dataclass
class CmdResult:
    rc: int | None
    seconds: float
    timed_out: bool
    log: Path


def _stop(p: subprocess.Popen) -> None:
    """SIGINT to the command's process group first (the CLI then stops its own workers, which
    run in sessions of their own), SIGKILL 10 s later."""
    for sig, wait in ((signal.SIGINT, 10), (signal.SIGKILL, 5)):
        if p.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(p.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            p.wait(timeout=wait)


def stop_all() -> None:
    _STOPPING.set()
    with _LIVE_LOCK:
        live = list(_LIVE)
    for p in live:
        _stop(p)


def run_cmd(
    cmd: list[str], *, timeout: float, log: Path, env: dict[str, str], stdout: Path | None = None
) -> CmdResult:
    """Run ``cmd`` in the repository root, in a process group of its own; stderr (and stdout
    unless ``stdout`` is given) to ``log``."""
    if _STOPPING.is_set():
        raise Aborted("stopping")
    log.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    with open(log, "ab") as lf, open(stdout, "wb") if stdout else contextlib.nullcontext() as of:
        lf.write(f"$ {shlex.join(cmd)}   # timeout {timeout:.0f} s\n".encode())
        lf.flush()
        p = subprocess.Popen(
            cmd,
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=of or lf,
            stderr=lf,
            start_new_session=True,
        )
        with _LIVE_LOCK:
            _LIVE.add(p)
        timed_out = False
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _stop(p)
        except BaseException:
            _stop(p)
            raise
        finally:
            with _LIVE_LOCK:
                _LIVE.discard(p)
    return CmdResult(p.returncode, time.monotonic() - t0, timed_out, log)


def last_line(path: Path, skip: tuple[str, ...] = ("$ ",)) -> str:
    try:
        lines = [ln.strip() for ln in path.read_text(errors="replace").splitlines()]
    except OSError:
        return ""
    lines = [ln for ln in lines if ln and not ln.startswith(skip)]
    return lines[-1][:300] if lines else ""


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        d = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return d if isinstance(d, dict) else None


# -- the probe -----------------------------------------------------------------------------

PROBE = r"""
import importlib, json, platform, subprocess, sys
out = {"python": platform.python_version(), "executable": sys.executable, "modules": {}, "missing": {}}
try:
    import torch
    out["torch"] = torch.__version__
    out["cuda"] = bool(torch.cuda.is_available())
    out["cuda_version"] = torch.version.cuda
    if out["cuda"]:
        p = torch.cuda.get_device_properties(0)
        out["device_name"] = torch.cuda.get_device_name(0)
        out["capability"] = "%d.%d" % torch.cuda.get_device_capability(0)
        out["memory_gib"] = round(p.total_memory / 2**30, 1)
        out["sm_count"] = p.multi_processor_count
        out["device_count"] = torch.cuda.device_count()
except Exception as e:
    out["torch_error"] = "%s: %s" % (type(e).__name__, e)
try:  # the installed torch's own table of what each mode sets
    from torch._inductor import list_mode_options
    out["mode_table"] = {m: {k: repr(v) for k, v in list_mode_options(m).items()}
                         for m in ("max-autotune", "reduce-overhead")}
except Exception as e:
    out["mode_table_error"] = "%s: %s" % (type(e).__name__, e)
if "--need-cuda" in sys.argv and not out.get("cuda"):  # the refusal needs no more
    print("PROBE " + json.dumps(out))
    sys.exit(0)
for name in ("triton", "msgspec", "isal", "typer", "tabulate", "pytest", "inductor_bench.cli"):
    try:
        m = importlib.import_module(name)
        out["modules"][name] = str(getattr(m, "__version__", "ok"))
    except Exception as e:
        out["missing"][name] = "%s: %s" % (type(e).__name__, e)
if out.get("cuda"):
    try:
        q = "name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw"
        out["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=" + q, "--format=csv,noheader"],
                                           capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as e:
        out["nvidia_smi"] = "not available (%s)" % type(e).__name__
if out.get("cuda"):  # what NVML shows this process, which holds a CUDA context now
    try:
        import os, pynvml
        pynvml.nvmlInit()
        uuid = "GPU-%s" % torch.cuda.get_device_properties(0).uuid
        h = pynvml.nvmlDeviceGetHandleByUUID(uuid.encode())
        pids = sorted(p.pid for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h))
        out["nvml"] = {"version": str(getattr(pynvml, "__version__", "?")), "pids": pids,
                       "own_pid": os.getpid(), "own_listed": os.getpid() in pids}
    except Exception as e:
        out["nvml"] = {"error": "%s: %s" % (type(e).__name__, e)}
print("PROBE " + json.dumps(out))
"""


def probe(python: str, env: dict[str, str], need_cuda: bool = False) -> dict[str, Any]:
    try:
        p = subprocess.run(
            [python, "-c", PROBE, *(["--need-cuda"] if need_cuda else [])],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"torch_error": f"the probe did not finish: {e}"}
    for line in p.stdout.splitlines():
        if line.startswith("PROBE "):
            return json.loads(line[6:])
    tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
    return {"torch_error": f"the probe failed: {tail}"}


# -- records -------------------------------------------------------------------------------


@dataclass
class StepRecord:
    key: str
    title: str
    status: str = "not run"  # ok | failed | timeout | skipped | error | aborted | not run
    seconds: float = 0.0
    granted_s: float | None = None
    note: str = ""
    figures: list[str] = field(default_factory=list)  # markdown blocks


@dataclass(frozen=True)
class Step:
    key: str
    title: str
    fn: Callable[[Ctx, StepRecord, Deadline], None]
    cap_s: float  # the most it may take on a GPU
    need_s: float  # not started with less
    dry_cap_s: float  # the most it may take in a dry run on CPU


# -- the context ---------------------------------------------------------------------------


class Ctx:
    def __init__(self, a: argparse.Namespace, info: dict[str, Any], env: dict[str, str]) -> None:
        self.a, self.info, self.env = a, info, env
        self.dry: bool = a.dry_run
        self.device = "cpu" if self.dry else "cuda"
        self.python: str = a.python
        self.out = Path(a.out_dir).resolve()
        # never inside OUT_DIR: a device machine returns at most 8 files from there
        self.work = Path(a.work).resolve() if a.work else Path(tempfile.mkdtemp(prefix="gpu-validate-"))
        self.logs, self.cli, self.runs_dir = self.work / "logs", self.work / "cli", self.work / "runs"
        for d in (self.out, self.logs, self.cli, self.runs_dir):
            d.mkdir(parents=True, exist_ok=True)
        self.budget = Budget(a.budget, t0=a.t0)
        self.started = datetime.datetime.now(datetime.timezone.utc)
        self.steps: list[StepRecord] = []
        self.checks: list[Check] = []
        self.runs: dict[str, Run] = {}
        self.kernel_results: dict[str, dict[str, Any]] = {}  # graph/name -> kernel --json
        self.compare: dict[str, Any] | None = None
        self.pytest: dict[str, Any] | None = None
        self.aborted = ""
        self.fixture_files: list[tuple[str, int]] = []
        self.fixture_left_out: list[str] = []
        self._lock = threading.Lock()
        self._deadline = Deadline(0)
        self.share: float | None = None  # seconds for the run being checked (run_checks)
        self.banked_s = 0.0  # what the steps so far left unused of their caps
        self.main_labels = [label_of(model, True, mode) for _, model, mode in MAIN_RUNS]
        self._console = open(self.out / "console.log", "a")  # noqa: SIM115 (closed in finish)

    # output
    def say(self, text: str, *, stream=sys.stdout) -> None:
        with self._lock:
            print(text, file=stream, flush=True)
            self._console.write(text + "\n")
            self._console.flush()

    def progress(self, text: str) -> None:
        self.say(f"[{self.budget.elapsed():4.0f}s] {text}", stream=sys.stderr)

    def record(self, c: Check) -> None:
        with self._lock:
            self.checks.append(c)
        self.say(c.line())

    # the tool and the measurements
    def tool(self, *args: str) -> list[str]:
        return [self.python, "-m", "inductor_bench.cli", *args]

    def pick(self, pair: tuple[list[str], list[str]]) -> list[str]:
        return list(pair[1] if self.dry else pair[0])

    def measure(self, what: str, args: list[str], *, cap: float, label: str) -> dict[str, Any]:
        dl: Deadline = self._deadline
        # a run's share of the step when the step checks several runs; CPU compiles are slow
        want = self.share if self.share is not None else (dl.left() if self.dry else cap)
        t = dl.take(want if self.dry else min(cap, want), need=5.0)
        res = self.work / "measure" / f"{label}.json"
        res.parent.mkdir(parents=True, exist_ok=True)
        scratch = self.work / "measure" / "scratch-cache"
        cmd = [self.python, str(CHECKS_SCRIPT), what, "--out", str(res), "--scratch", str(scratch), *args]
        r = run_cmd(cmd, timeout=t, log=self.logs / f"measure-{label}.log", env=self.env)
        if r.timed_out:
            raise MeasureError(f"timed out after {t:.0f} s (log {r.log.name})")
        d = read_json(res)
        if r.rc != 0 or d is None:
            raise MeasureError(f"exit {r.rc}: {last_line(r.log)} (log {r.log.name})")
        return d

    def kernel_picks(self, run: Run) -> list[tuple[str, dict[str, Any]]]:
        return ck.triton_kernels(run.bd)[: self.a.top_kernels]

    # breakdown runs
    def breakdown(
        self,
        label: str,
        model: Path,
        train: bool,
        mode: str,
        dl: Deadline,
        profile: list[str],
        *,
        cap: float,
        summary: bool = False,
    ) -> Run:
        run = Run(label, model, train, mode, self.runs_dir / label)
        t = dl.take(cap, need=20.0)
        # the tool's own per-worker limit first, so that its workers stop by themselves
        cmd = self.tool(
            "breakdown",
            str(model.relative_to(ROOT)),
            "--device",
            self.device,
            "--mode",
            mode,
            "--out",
            str(run.dir),
            "--timeout",
            f"{max(t - 10, 10):.0f}",
            *profile,
        )
        if train:
            cmd.append("--train")
        if summary:
            cmd.append("--summary")
        run.cmd = ["inductor-bench", *cmd[3:]]
        r = run_cmd(
            cmd,
            timeout=t,
            log=self.logs / f"breakdown-{label}.log",
            env=self.env,
            stdout=self.cli / f"breakdown-{label}.txt",
        )
        run.rc, run.seconds = (None if r.timed_out else r.rc), r.seconds
        run.bd = read_json(run.dir / "breakdown.json")
        if r.rc != 0 or r.timed_out:
            run.cli_error = f"stopped at its time limit, {t:.0f} s" if r.timed_out else last_line(r.log)
        with self._lock:
            self.runs[label] = run
        for c in ck.check_run_ok(self, run) + ck.check_busy(self, run):
            self.record(c)
        return run

    # steps
    def run_step(self, step: Step) -> None:
        rec = StepRecord(step.key, step.title)
        self.steps.append(rec)
        cap = step.dry_cap_s if self.dry else step.cap_s
        if not selected(step.key, self.a.only, self.a.skip):
            rec.status, rec.note = "skipped", "not selected (--only / --skip)"
            self.banked_s += cap
            return
        # a step may use its cap and what the steps before it left of theirs: the later steps
        # keep their whole caps (the part's caps add up to its budget)
        grant = self.budget.grant(cap + self.banked_s, step.need_s)
        if grant is None:
            rec.status = "skipped"
            rec.note = f"budget: {max(self.budget.left(), 0):.0f} s left, the step needs {step.need_s:.0f} s"
            self.say(f"SKIPPED step {step.key}: {rec.note}")
            return
        rec.granted_s, rec.status = grant, "running"
        title = step.title.replace("MAIN", self.a.main_model)
        self.progress(f"{title} (up to {grant:.0f} s)")
        t0 = time.monotonic()
        self._deadline = Deadline(grant)
        try:
            step.fn(self, rec, self._deadline)
            if rec.status == "running":
                rec.status = "ok"
        except SkipStep as e:
            rec.status, rec.note = "skipped", str(e)
            self.say(f"SKIPPED step {step.key}: {e}")
        except Aborted:
            rec.status = "aborted"
            raise
        except Exception as e:
            rec.status, rec.note = "error", f"{type(e).__name__}: {e}"
            with open(self.logs / "driver.log", "a") as f:
                f.write(f"step {step.key}:\n{traceback.format_exc()}\n")
            self.record(Check(f"step {step.key}", FAIL, f"the step raised {rec.note} (logs/driver.log)"))
        finally:
            rec.seconds = time.monotonic() - t0
            self.banked_s = max(0.0, self.banked_s + cap - rec.seconds)
            self.progress(f"{title}: {rec.status} ({rec.seconds:.0f} s)")
            self.write_report()

    def failed(self) -> bool:
        return any(c.status == FAIL for c in self.checks)

    # the end
    def write_report(self) -> None:
        atomic_write(self.out / "report.md", rep.markdown(self))
        atomic_write(self.out / "results.json", json.dumps(rep.data(self), indent=1, default=str))

    def finish(self) -> None:
        for name, fn in (("fixtures", rep.bundle_fixtures), ("logs", rep.bundle_logs)):
            try:
                fn(self)
            except Exception as e:  # the report must still be written
                self.record(Check(f"bundle {name}", FAIL, f"{type(e).__name__}: {e}"))
        self.write_report()
        counts = {s: sum(c.status == s for c in self.checks) for s in (PASS, FAIL, SKIPPED)}
        self.say("")
        self.say(
            f"== gpu_validate summary ({self.info.get('device_name', self.device)}, "
            f"{self.budget.elapsed():.0f} s): {counts[PASS]} passed, {counts[FAIL]} failed, "
            f"{counts[SKIPPED]} skipped =="
        )
        for c in self.checks:
            if c.status != PASS:
                self.say(c.line()[:400])
        self.say(f"report: {self.out / 'report.md'}")
        self._console.close()


def atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def selected(key: str, only: list[str], skip: list[str]) -> bool:
    def hit(names: list[str]) -> bool:
        return any(key == n or key.startswith(n + ":") for n in names)

    return (not only or hit(only)) and not hit(skip)


# -- the steps -----------------------------------------------------------------------------


def _model(ctx: Ctx, name: str) -> Path:
    p = MODELS / f"{name}.py"
    if not p.exists():
        raise SkipStep(f"no model file {p.relative_to(ROOT)}")
    return p


def label_of(model: str, train: bool, mode: str) -> str:
    return f"{model}-{'train' if train else 'inference'}-{mode}"


def main_label(key: str) -> str:
    """The run label of a main run's key suffix (``mlp-ro`` -> ``mlp-train-reduce-overhead``)."""
    _, model, mode = next(r for r in MAIN_RUNS if r[0] == key)
    return label_of(model, True, mode)


def main_breakdown(key: str) -> Callable[[Ctx, StepRecord, Deadline], None]:
    _, model, mode = next(r for r in MAIN_RUNS if r[0] == key)

    def fn(ctx: Ctx, rec: StepRecord, dl: Deadline) -> None:
        label = label_of(model, True, mode)
        run = ctx.breakdown(
            label, _model(ctx, model), True, mode, dl, ctx.pick(PROFILE_MAIN), cap=dl.left() - 5
        )  # 5 s kept for re-rendering the result
        rec.figures.append(rep.breakdown_figures(ctx, run))
        for c in ck.check_pipelined_plain(ctx, run):  # the launch-bound verdict's two walls
            ctx.record(c)
        if run.bd is not None and dl.left() > 2:  # the saved result re-rendered (no torch)
            r = run_cmd(
                ctx.tool("report", str(run.dir), "--format", "markdown"),
                timeout=min(60, dl.left()),
                log=ctx.logs / f"report-{label}.log",
                env=ctx.env,
                stdout=ctx.cli / f"report-{label}.md",
            )
            if r.rc != 0:
                ctx.record(
                    Check(f"report {label}", FAIL, f"`inductor-bench report` exit {r.rc}: {last_line(r.log)}")
                )
        if run.rc != 0:
            rec.status, rec.note = "failed", run.cli_error

    return fn


def main_runs(ctx: Ctx, modes: tuple[str, ...] = ("default", "reduce-overhead")) -> list[Run]:
    """The main runs of this part that saved a result, in MAIN_RUNS order."""
    labels = [label_of(model, True, mode) for _, model, mode in MAIN_RUNS if mode in modes]
    return [ctx.runs[x] for x in labels if x in ctx.runs and ctx.runs[x].bd is not None]


def run_checks(
    fn: Callable[[Ctx, Run], list[Check]], modes: tuple[str, ...] = ("default", "reduce-overhead")
) -> Callable[[Ctx, StepRecord, Deadline], None]:
    """A step that runs one check function on every main run (of ``modes``) that saved a result;
    a run left for its last seconds gets a fair share of what remains."""

    def step(ctx: Ctx, rec: StepRecord, dl: Deadline) -> None:
        runs = main_runs(ctx, modes)
        if not runs:
            raise SkipStep("no main breakdown to check (their steps did not complete)")
        try:
            for i, run in enumerate(runs):
                ctx.share = dl.left() / (len(runs) - i)
                for c in fn(ctx, run):
                    ctx.record(c)
        finally:
            ctx.share = None

    return step


def step_quiet(ctx: Ctx, rec: StepRecord, dl: Deadline) -> None:
    run = ctx.runs.get(main_label("mlp"))
    if run is None or run.bd is None:
        raise SkipStep(f"no breakdown of {main_label('mlp')} to check")
    for c in ck.check_quiet(ctx, run):
        ctx.record(c)


def step_peaks(ctx: Ctx, rec: StepRecord, dl: Deadline) -> None:
    """The ceilings the mlp run measured (``peaks.json``; cached per machine, so every run of the
    part holds the same) against do_bench of a copy and matmuls (``check_peaks``)."""
    run = ctx.runs.get(main_label("mlp"))
    if run is None or run.bd is None:
        raise SkipStep(f"no breakdown of {main_label('mlp')} to check")
    ctx.share = dl.left()
    try:
        for c in ck.check_peaks(ctx, run):
            ctx.record(c)
    finally:
        ctx.share = None


def step_kernel(ctx: Ctx, rec: StepRecord, dl: Deadline) -> None:
    """``kernel --max-autotune`` (which times the baseline too) on the slowest Triton kernels of
    each default main run."""
    runs = main_runs(ctx, ("default",))
    if not runs:
        raise SkipStep("no default main breakdown")
    if ctx.device != "cuda":
        n = sum(len(ck.triton_kernels(r.bd)) for r in runs)
        ctx.record(
            Check(
                "kernel --max-autotune",
                SKIPPED,
                f"needs CUDA: `kernel` times Triton kernel files; these {ctx.device} breakdowns have "
                f"{n} Triton kernel(s) with a file",
            )
        )
        return
    picks = [(run, gid, k) for run in runs for gid, k in ctx.kernel_picks(run)]
    if not picks:
        ctx.record(Check("kernel --max-autotune", FAIL, "the CUDA breakdowns have no Triton kernel file"))
        return
    for i, (run, gid, k) in enumerate(picks):
        name = f"{gid}/{k['name']}"
        try:
            t = dl.take(dl.left() / (len(picks) - i), need=10)
        except SkipStep as e:
            ctx.record(Check(f"kernel --max-autotune {name}", SKIPPED, str(e)))
            continue
        js = ctx.cli / f"kernel-{k['name']}-max-autotune.json"
        r = run_cmd(
            ctx.tool("kernel", str(run.dir), name, "--max-autotune", "--timeout", f"{max(t - 5, 5):.0f}",
                     "--json", str(js)),
            timeout=t,
            log=ctx.logs / f"kernel-{k['name']}-max-autotune.log",
            env=ctx.env,
            stdout=ctx.cli / f"kernel-{k['name']}-max-autotune.txt",
        )
        d = read_json(js)
        if r.rc != 0 or d is None:
            why = "timed out" if r.timed_out else f"exit {r.rc}: {last_line(r.log)}"
            ctx.record(Check(f"kernel --max-autotune {name}", FAIL, why))
            continue
        ctx.record(ck.check_kernel_configs(name, d))
        ctx.record(ck.check_autotune_patch(name, d, ctx.info.get("mode_table", {}).get("max-autotune")))
        ctx.kernel_results[name] = d  # its baseline run is what `kernel` alone would time
        rec.figures.append(rep.kernel_figures(name, d, r.seconds, ["--max-autotune"]))


def step_compare(ctx: Ctx, rec: StepRecord, dl: Deadline) -> None:
    t = dl.take(dl.left(), need=30)
    model = _model(ctx, ctx.a.main_model)
    out, js = ctx.runs_dir / "compare", ctx.cli / "compare.json"
    cmd = ctx.tool(
        "compare",
        str(model.relative_to(ROOT)),
        "--train",
        "--modes",
        "default,reduce-overhead",
        "--device",
        ctx.device,
        "--out",
        str(out),
        "--json",
        str(js),
        "--timeout",
        f"{max(t - 10, 10):.0f}",
        *ctx.pick(COMPARE_OPTS),
    )
    r = run_cmd(cmd, timeout=t, log=ctx.logs / "compare.log", env=ctx.env, stdout=ctx.cli / "compare.txt")
    ctx.compare = read_json(js) or read_json(out / "compare.json")
    if ctx.compare is None:
        why = "timed out" if r.timed_out else f"exit {r.rc}: {last_line(r.log)}"
        ctx.record(Check("compare default,reduce-overhead", FAIL, f"no compare.json ({why})"))
        rec.status, rec.note = "failed", why
        return
    for m in ctx.compare.get("modes") or []:
        if not isinstance(m, dict):
            continue
        mode, status = m.get("mode"), m.get("status")
        samples = ck.column_samples(m)
        med = f"step median {statistics.median(samples):.4g} ms" if samples else "no step samples"
        # a mode the tool leaves out with a reason (CUDA graphs on a CPU) is no failure off a GPU
        result = SKIPPED if status == "skipped" and ctx.device != "cuda" else ck.verdict(status == "ok")
        ctx.record(
            Check(
                f"compare {mode}",
                result,
                f"status {status}, {med}" + (f": {m.get('reason')}" if m.get("reason") else ""),
            )
        )
        if isinstance(m.get("breakdown"), dict):
            sub = Run(f"compare-{mode}", model, True, str(mode), out / str(mode), bd=m["breakdown"])
            for c in ck.check_busy(ctx, sub):
                ctx.record(c)
    for c in ck.check_compare_quiet(ctx, ctx.compare):
        ctx.record(c)
    if r.rc != 0:
        ctx.record(Check("compare exit status", FAIL, f"exit {r.rc}: {last_line(r.log)}"))
    rec.figures.append(rep.compare_figures(ctx.compare, r.seconds))


# Another process that keeps the device busy for ``seconds`` (argv: device, seconds): on a GPU
# matmuls with a context of its own; on the host (dry run) a loop spinning on one core.
DISTURBER = r"""
import sys, time
device, end = sys.argv[1], time.monotonic() + float(sys.argv[2])
if device == "cuda":
    import torch
    x = torch.randn(2048, 2048, device="cuda")
    (x @ x).sum().item()
print("disturbing", flush=True)
while time.monotonic() < end:
    if device == "cuda":
        for _ in range(20):
            x @ x
        torch.cuda.synchronize()
"""
DISTURBER_START_S = 90.0


def step_load(ctx: Ctx, rec: StepRecord, dl: Deadline) -> None:
    """The main model's breakdown (its cache warm from compare) while another process keeps the
    device busy: the tool must say so, per graph and in its report (``check_disturbed``)."""
    main = label_of(ctx.a.main_model, True, "default")
    t = dl.take(dl.left(), need=20)
    log = ctx.logs / "disturber.log"
    with open(log, "ab") as lf:
        p = subprocess.Popen(
            [ctx.python, "-c", DISTURBER, ctx.device, f"{t + 30:.0f}"],
            cwd=ROOT, env=ctx.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=lf,
            start_new_session=True, text=True,
        )
    with _LIVE_LOCK:
        _LIVE.add(p)
    try:
        ready, _, _ = select.select([p.stdout], [], [], min(DISTURBER_START_S, dl.left()))
        line = p.stdout.readline() if ready else ""
        if "disturbing" not in line:
            why = "did not start in time" if not ready else f"exited: {last_line(log) or 'no output'}"
            ctx.record(Check(f"disturbed load {main}-disturbed", FAIL, f"the disturbing process {why}"))
            rec.status, rec.note = "failed", f"the disturbing process {why}"
            return
        ctx.progress(f"another process (pid {p.pid}) keeps the {ctx.device} busy")
        run = ctx.breakdown(f"{main}-disturbed", _model(ctx, ctx.a.main_model), True, "default", dl,
                            ctx.pick(PROFILE_MATRIX), cap=dl.left() - 5)
    finally:
        _stop(p)
        with _LIVE_LOCK:
            _LIVE.discard(p)
        if p.stdout is not None:
            p.stdout.close()
    text = (ctx.cli / f"breakdown-{run.label}.txt")
    for c in ck.check_disturbed(ctx, run, text.read_text(errors="replace") if text.exists() else ""):
        ctx.record(c)
    if run.rc != 0:
        rec.status, rec.note = "failed", run.cli_error


DISTURBANCE_TABLE_ROW = re.compile(r"^\| \d+ \| ")


def step_disturbance(ctx: Ctx, rec: StepRecord, dl: Deadline) -> None:
    """``scripts/bench_disturbance.py`` on this device: breakdowns of the main model quiet and
    beside each disturber, the figures compared with the quiet run's (docs/statistics.md). Its
    exit status is the verdict: 0 every comparison within its goal, 1 one missed, 2 a run failed."""
    t = dl.take(dl.left(), need=30)
    out = ctx.cli / "bench-disturbance.md"
    cmd = [ctx.python, str(ROOT / "scripts" / "bench_disturbance.py"), "--device", ctx.device,
           "--out", str(ctx.runs_dir / "disturbance"), "--timeout", f"{max(t / 4 - 5, 10):.0f}",
           *ctx.pick(DISTURBANCE_OPTS)]
    r = run_cmd(cmd, timeout=t, log=ctx.logs / "bench-disturbance.log", env=ctx.env, stdout=out)
    text = out.read_text(errors="replace") if out.exists() else ""
    rows = [ln for ln in text.splitlines() if DISTURBANCE_TABLE_ROW.match(ln)]
    numbers = f"{len(rows)} comparison(s) in {r.seconds:.0f} s: " + (
        "; ".join(" ".join(ln.split()) for ln in rows) if rows else "none")
    if r.timed_out:
        ctx.record(Check("disturbance benchmark", FAIL, f"stopped at its limit, {t:.0f} s; {numbers}"))
    elif r.rc == 2 or not rows:
        ctx.record(Check("disturbance benchmark", FAIL, f"exit {r.rc}: {last_line(r.log)}; {numbers}"))
    elif ctx.dry:  # the plumbing ran; a goal met or missed on a loaded 2-core CPU proves nothing
        ctx.record(Check("disturbance benchmark", SKIPPED, f"the goal is judged on a GPU (dry run, exit "
                                                            f"{r.rc}): {numbers}"))
    else:
        ctx.record(Check("disturbance benchmark", ck.verdict(r.rc == 0), numbers))
    rec.figures.append("### The disturbance benchmark (scripts/bench_disturbance.py)\n\n" + text.strip())


PYTEST_LINE = re.compile(r"^(tests/\S+::\S+)\s+(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b")
PYTEST_COLLECTED = re.compile(r"collected (\d+) items?(?: / (\d+) deselected)?")


def parse_pytest(text: str) -> dict[str, Any]:
    """Per-test outcomes from ``pytest -v`` output (what ran before any kill)."""
    tests: dict[str, str] = {}
    for line in text.splitlines():
        m = PYTEST_LINE.match(line.strip())
        if m:
            tests[m.group(1)] = m.group(2)
    m = PYTEST_COLLECTED.search(text)
    selected_n = int(m.group(1)) - int(m.group(2) or 0) if m else None
    counts: dict[str, int] = {}
    for v in tests.values():
        counts[v] = counts.get(v, 0) + 1
    return {"tests": tests, "counts": counts, "selected": selected_n}


def check_pytest(res: dict[str, Any], rc: int | None, timed_out: bool, seconds: float) -> Check:
    counts, tests = res["counts"], res["tests"]
    bad = [t for t, v in tests.items() if v in ("FAILED", "ERROR")]
    not_run = (res["selected"] - len(tests)) if res["selected"] is not None else None
    summary = ", ".join(f"{n} {k.lower()}" for k, n in sorted(counts.items())) or "no test ran"
    numbers = f"{summary} of {res['selected']} selected in {seconds:.0f} s"
    if not_run:
        numbers += f"; {not_run} not reached" + (" (budget ran out)" if timed_out else "")
    if bad:
        return Check(
            "pytest -m gpu", FAIL, numbers + "; failed: " + ", ".join(t.split("::")[-1] for t in bad)
        )
    if not tests or counts.get("SKIPPED", 0) == len(tests):
        return Check("pytest -m gpu", SKIPPED, numbers + (" (no CUDA here)" if tests else ""))
    if rc not in (0, None) and not timed_out:
        return Check("pytest -m gpu", FAIL, numbers + f"; pytest exit {rc}")
    return Check("pytest -m gpu", PASS if not not_run else SKIPPED, numbers)


def step_pytest(ctx: Ctx, rec: StepRecord, dl: Deadline) -> None:
    t = dl.take(dl.left(), need=20)
    out = ctx.cli / "pytest-gpu.txt"
    cmd = [
        ctx.python,
        "-m",
        "pytest",
        "-m",
        "gpu",
        "-v",
        "-rA",
        "-p",
        "no:cacheprovider",
        "--basetemp",
        str(ctx.work / "pytest-tmp"),
        *GPU_TESTS,
    ]
    r = run_cmd(cmd, timeout=t, log=ctx.logs / "pytest-gpu.log", env=ctx.env, stdout=out)
    res = parse_pytest(out.read_text(errors="replace") if out.exists() else "")
    ctx.pytest = {**res, "rc": r.rc, "timed_out": r.timed_out, "seconds": r.seconds}
    ctx.record(check_pytest(res, r.rc, r.timed_out, r.seconds))
    rec.figures.append(rep.pytest_figures(ctx.pytest))
    if r.timed_out:
        rec.status, rec.note = "timeout", f"stopped after {t:.0f} s; the tests that finished are reported"


def is_script(path: Path) -> bool:
    return re.search(r"^def make_workload\(", path.read_text(errors="replace"), re.M) is None


def model_names(spec: str) -> list[str]:
    have = sorted(p.stem for p in MODELS.glob("*.py") if not p.name.startswith("_"))
    names = have if spec == "all" else [m.strip() for m in spec.split(",") if m.strip()]
    order = {m: i for i, m in enumerate(MODEL_ORDER)}
    return sorted(names, key=lambda m: (order.get(m, len(order)), m))


def matrix_entries(ctx: Ctx) -> list[tuple[str, bool, str]]:
    """What the matrix runs: breadth first, every model once per kind, none that part 1 runs."""
    done = set(ctx.runs) | {label_of(model, True, mode) for _, model, mode in MAIN_RUNS}
    out = []
    for kind in ctx.a.matrix.split(","):
        what, _, mode = kind.strip().partition(":")
        train = what == "train"
        for m in model_names(ctx.a.models):
            label = label_of(m, train, mode or "default")
            if label not in done:
                out.append((m, train, mode or "default"))
                done.add(label)
    return out


def step_matrix(ctx: Ctx, rec: StepRecord, dl: Deadline) -> None:
    entries = matrix_entries(ctx)
    rows: list[dict[str, Any]] = []

    def one(entry: tuple[str, bool, str]) -> None:
        model, train, mode = entry
        label = label_of(model, train, mode)
        path = MODELS / f"{model}.py"
        row = {"label": label, "status": "not run", "note": ""}
        rows.append(row)
        if not path.exists():
            row["note"] = "no such model file"
            return
        if train and is_script(path):
            row["status"], row["note"] = "n/a", "a script runs as written (no --train)"
            return
        try:
            run = ctx.breakdown(label, path, train, mode, dl, ctx.pick(PROFILE_MATRIX), cap=240, summary=True)
        except SkipStep as e:
            row["status"], row["note"] = "skipped", str(e)
            ctx.say(f"SKIPPED run {label}: {e}")
            return
        except Exception as e:  # one run's trouble is its row's, not the other runs'
            row["status"], row["note"] = "error", f"{type(e).__name__}: {e}"
            ctx.record(Check(f"run {label}", FAIL, f"the script raised {row['note']}"))
            return
        row.update(rep.run_row(run))

    pool = ThreadPoolExecutor(max_workers=max(1, ctx.a.jobs))
    try:
        for fut in [pool.submit(one, e) for e in entries]:
            fut.result()
    except BaseException:
        stop_all()  # the runs in flight end now; the queued ones never start
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    order = {label_of(*e): i for i, e in enumerate(entries)}
    rows.sort(key=lambda r: order.get(r["label"], 0))
    rec.figures.append(rep.matrix_figures(rows, ctx.a.jobs, ctx.pick(PROFILE_MATRIX)))


STEPS: dict[str, tuple[str, Callable[[Ctx, StepRecord, Deadline], None]]] = {
    **{f"breakdown:{key}": (f"breakdown {model} --train ({mode})", main_breakdown(key))
       for key, model, mode in MAIN_RUNS},
    "check:quiet": ("no other GPU process in the quiet mlp run", step_quiet),
    "check:graph-time": ("graph kernel time vs a plain profiler run, every main run",
                         run_checks(ck.check_graph_kernel_time)),
    "check:step-time": ("step time vs CUDA events, every main run", run_checks(ck.check_step_time)),
    "kernel": ("kernel --max-autotune on the top Triton kernels", step_kernel),
    "check:do-bench": ("top Triton kernels vs triton.testing.do_bench",
                       run_checks(ck.check_do_bench, ("default",))),
    "check:peaks": ("the measured ceilings vs do_bench (copy, matmuls)", step_peaks),
    "pytest": ("pytest -m gpu", step_pytest),
    "compare": ("compare MAIN --train --modes default,reduce-overhead", step_compare),
    "load": ("breakdown MAIN --train beside another process on the device", step_load),
    "disturbance": ("the disturbance benchmark (scripts/bench_disturbance.py)", step_disturbance),
    "matrix": ("breakdown of the other example models", step_matrix),
}


def plan(numbers: list[int]) -> list[Step]:
    """The steps of the given parts, in order, with their caps."""
    return [Step(c.key, STEPS[c.key][0], STEPS[c.key][1], c.cap_s, c.need_s, c.dry_cap_s)
            for n in numbers for c in parts.part(n).steps]


# -- main ----------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="gpu_validate", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("out_dir", metavar="OUT_DIR", nargs="?",
                    help="where the report and the bundles go (new or empty)")
    ap.add_argument("--part", type=int, default=None, choices=[p.number for p in parts.PARTS],
                    help="run one part (one device command); default: every part in turn")
    ap.add_argument("--list-parts", action="store_true",
                    help="print the parts, their steps and caps, and exit")
    ap.add_argument(
        "--dry-run", action="store_true", help="on CPU: the same steps with --device cpu, tiny counts"
    )
    ap.add_argument("--budget", type=float, default=None,
                    help="seconds for everything (default: the part's, scripts/gpu_validate_parts.py)")
    ap.add_argument(
        "--models",
        default=None,
        help="comma-separated model names for the matrix, or 'all' (default: all; dry run: mlp)",
    )
    ap.add_argument("--main-model", default="mlp", help="the model of compare and the load runs")
    ap.add_argument(
        "--matrix",
        default=None,
        help=f"kinds of run for the matrix (default {MATRIX_GPU}; dry run {MATRIX_DRY})",
    )
    ap.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="matrix breakdowns at a time (default 3; dry run 1); the main runs always run alone",
    )
    ap.add_argument("--top-kernels", type=int, default=1,
                    help="Triton kernels of each default main run for kernel / do_bench")
    ap.add_argument("--only", default="", help="comma-separated step keys (or prefixes before ':') to run")
    ap.add_argument("--skip", default="", help="comma-separated step keys (or prefixes) to leave out")
    ap.add_argument("--work", default=None, help="working directory (default: a fresh temporary directory)")
    ap.add_argument("--wheels", default=str(ROOT / ".whl"), help="wheels for missing packages (msgspec)")
    ap.add_argument("--python", default=sys.executable, help="the interpreter for the tool and the tests")
    a = ap.parse_args(argv)
    if a.list_parts:
        return a
    if a.out_dir is None:
        ap.error("OUT_DIR is required")
    a.t0 = time.monotonic()
    a.argv = list(sys.argv[1:] if argv is None else argv)
    a.parts = [a.part] if a.part is not None else [p.number for p in parts.PARTS]
    chosen = [parts.part(n) for n in a.parts]
    a.budget = a.budget or sum(p.dry_budget_s if a.dry_run else p.budget_s for p in chosen)
    a.models = a.models or ("mlp" if a.dry_run else "all")
    a.matrix = a.matrix or (MATRIX_DRY if a.dry_run else MATRIX_GPU)
    a.jobs = a.jobs or (1 if a.dry_run else 3)
    a.only = [s.strip() for s in a.only.split(",") if s.strip()]
    a.skip = [s.strip() for s in a.skip.split(",") if s.strip()]
    steps = plan(a.parts)
    keys = {s.key for s in steps} | {s.key.split(":")[0] for s in steps}
    unknown = [s for s in a.only + a.skip if s not in keys]
    if unknown:
        ap.error(f"unknown step(s) {', '.join(unknown)}; steps: {', '.join(s.key for s in steps)}")
    return a


def base_env(dry: bool) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    if dry:
        env.setdefault("OMP_NUM_THREADS", "1")  # steadier CPU timings on a shared machine
    return env


def install_wheels(ctx: Ctx) -> str:
    """Install the wheels in --wheels into a private directory when a package is missing."""
    missing = [m for m in ("msgspec", "isal") if m in ctx.info.get("missing", {})]
    wheels = sorted(Path(ctx.a.wheels).glob("*.whl")) if Path(ctx.a.wheels).is_dir() else []
    if not missing or not wheels:
        return ""
    site = ctx.work / "site"
    r = run_cmd(
        [
            ctx.python,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-index",
            "--no-deps",
            "--no-compile",
            "--no-cache-dir",
            "--upgrade",
            "--target",
            str(site),
            *map(str, wheels),
        ],
        timeout=120,
        log=ctx.logs / "wheels.log",
        env=ctx.env,
    )
    if r.rc == 0:
        ctx.env["PYTHONPATH"] = os.pathsep.join((str(site), ctx.env["PYTHONPATH"]))
        ctx.info.update({k: v for k, v in probe(ctx.python, ctx.env).items() if k in ("modules", "missing")})
    return f"installed {len(wheels)} wheel(s) from {ctx.a.wheels} for {', '.join(missing)} (exit {r.rc})"


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    if a.list_parts:
        print(parts.listing())
        return 0
    env = base_env(a.dry_run)
    info = probe(a.python, env, need_cuda=not a.dry_run)
    if "torch_error" in info:
        print(f"gpu_validate: torch is not usable with {a.python}: {info['torch_error']}", file=sys.stderr)
        return 2
    if not a.dry_run and not info.get("cuda"):
        print(
            f"gpu_validate: no CUDA GPU here (torch {info.get('torch')}: torch.cuda.is_available() is "
            "False); nothing was run. Use --dry-run to check the script's plumbing on CPU.",
            file=sys.stderr,
        )
        return 2
    out = Path(a.out_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        print(f"gpu_validate: {out} already exists and is not an empty directory", file=sys.stderr)
        return 2
    ctx = Ctx(a, info, env)

    def on_signal(signum: int, _frame: Any) -> None:
        raise Aborted(f"{signal.Signals(signum).name} after {ctx.budget.elapsed():.0f} s")

    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM):
        signal.signal(s, on_signal)
    signal.alarm(
        max(1, int(a.budget + WATCHDOG_S - (time.monotonic() - a.t0)))
    )  # the watchdog: past the budget, stop and write the report
    try:
        note = install_wheels(ctx)
        if note:
            ctx.progress(note)
        ctx.info["wheels"] = note
        if "inductor_bench.cli" in ctx.info.get("missing", {}):
            ctx.record(
                Check(
                    "import inductor_bench",
                    FAIL,
                    ctx.info["missing"]["inductor_bench.cli"]
                    + " (carry the missing wheels: scripts/gpu_validate.sh --fetch-wheels)",
                )
            )
        ctx.write_report()
        for step in plan(a.parts):
            ctx.run_step(step)
    except Aborted as e:
        ctx.aborted = str(e)
        stop_all()
        running = next((s.key for s in ctx.steps if s.status == "aborted"), "none")
        ctx.record(
            Check(
                "validation run", FAIL, f"stopped by {e} during step {running}; the later steps did not run"
            )
        )
    finally:
        signal.alarm(0)
        for s in (signal.SIGTERM, signal.SIGINT):
            signal.signal(s, signal.SIG_IGN)
        signal.signal(signal.SIGALRM, lambda *_: os._exit(1))
        signal.alarm(int(FINISH_RESERVE_S + 10))  # finishing may not hang either
        ctx.finish()
        signal.alarm(0)
    return 1 if ctx.failed() or ctx.aborted else 0


if __name__ == "__main__":
    sys.exit(main())
