"""The driver's context (``Ctx``): the options, the output, the checks and runs recorded, the
breakdown runs, the step runner and the report; the records of the steps."""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gpu_validate_checks as ck
import gpu_validate_report as rep
from gpu_validate_checks import FAIL, PASS, SKIPPED, Check, MeasureError, Run
from gpu_validate_commands import ROOT, Aborted, Budget, Deadline, SkipStep, last_line, read_json, run_cmd

MODELS = ROOT / "models"
CHECKS_SCRIPT = Path(ck.__file__).resolve()
# The runs of part 1, each with the independent checks: (key suffix, model, mode).
MAIN_RUNS = [
    ("mlp", "mlp", "default"),
    ("transformer", "transformer_block", "default"),
    ("mlp-ro", "mlp", "reduce-overhead"),
    ("transformer-ro", "transformer_block", "reduce-overhead"),
]

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
        self.gpu_test_traces = self.work / "gpu-test-traces"  # what pytest -m gpu keeps (bundled)
        for d in (self.out, self.logs, self.cli, self.runs_dir, self.gpu_test_traces):
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
        for c in ck.check_run_ok(self, run) + ck.check_busy(self, run) + ck.check_outside_python(self, run):
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

def label_of(model: str, train: bool, mode: str) -> str:
    return f"{model}-{'train' if train else 'inference'}-{mode}"
