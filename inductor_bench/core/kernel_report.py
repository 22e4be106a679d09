"""The kernel report: one kernel file's timed modes, its GB/s and FLOP/s against the peaks."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from .autotune import BASELINE, MAX_AUTOTUNE, VERDICT_MIN_REL, compare_modes, config_label, verdict
from .errors import ResultError
from .kernelfile import KernelFile
from .modes import KernelPatch
from .peaks import Peak
from .stats import Change
from .summaries import Summary, summarize
from .vocab import Verdict

REPORT_SCHEMA = "inductor-bench/kernel"
REPORT_SCHEMA_VERSION = 1


@dataclass
class Timing:
    """One launch config timed: per-repetition samples (ms) and the compiled resources."""

    config: dict[str, Any]
    samples_ms: list[float]
    regs: int | None = None
    spills: int | None = None
    shared: int | None = None  # bytes of shared memory per block

    @property
    def summary(self) -> Summary:
        return summarize(self.samples_ms)

    @property
    def ms(self) -> float:
        return self.summary.ms

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Timing:
        return cls(config=dict(d.get("config") or {}), samples_ms=list(d.get("samples_ms") or []),
                   regs=d.get("regs"), spills=d.get("spills"), shared=d.get("shared"))


@dataclass
class ModeRun:
    """A kernel autotuned under one mode, then timed with the config that won."""

    mode: str
    space: list[dict[str, Any]]  # the candidate configs the heuristic built
    tried: int  # configs benchmarked: the candidates plus coordinate-descent steps
    timing: Timing
    tune_s: float = 0.0  # first call: compile + autotune

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ModeRun:
        return cls(mode=d["mode"], space=list(d.get("space") or []), tried=int(d.get("tried", 0)),
                   timing=Timing.from_dict(d), tune_s=float(d.get("tune_s") or 0.0))


def same_config(base: ModeRun, tuned: ModeRun) -> bool:
    """Max-autotune launched the baseline's own config: one kernel, one launch config, timed
    twice, whatever the two times say."""
    return bool(base.timing.config) and base.timing.config == tuned.timing.config


def modes_verdict(base: ModeRun, tuned: ModeRun, change: Change) -> str:
    """``same code`` where max-autotune kept the baseline's config, else ``verdict``."""
    return Verdict.SAME_CODE if same_config(base, tuned) else verdict(change)



@dataclass
class KernelReport:
    kernel: KernelFile
    device: dict[str, Any]
    peak: Peak
    runs: list[ModeRun]
    all_configs: list[Timing] = field(default_factory=list)
    all_configs_mode: str | None = None
    versions: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    tuning: KernelPatch | None = None  # what max-autotune set, as the worker's torch defines it

    def run(self, mode: str) -> ModeRun | None:
        return next((r for r in self.runs if r.mode == mode), None)

    def same_config(self) -> bool:
        """Max-autotune kept the baseline's config (``same_config``)."""
        base, tuned = self.run(BASELINE), self.run(MAX_AUTOTUNE)
        return base is not None and tuned is not None and same_config(base, tuned)

    def comparison(self) -> Change | None:
        base, tuned = self.run(BASELINE), self.run(MAX_AUTOTUNE)
        if base is None or tuned is None:
            return None
        return compare_modes(base.timing.samples_ms, tuned.timing.samples_ms)

    def gbps(self, t: Timing) -> float | None:
        """Achieved bandwidth: Inductor's bytes-moved estimate over the time (the policy's figure)."""
        if not self.kernel.num_gb or t.ms <= 0:
            return None
        return self.kernel.num_gb / (t.ms / 1e3)

    def pct_of_peak_bw(self, t: Timing) -> float | None:
        g = self.gbps(t)
        return 100.0 * g / self.peak.gbps if g is not None and self.peak.gbps else None

    def tflops(self, t: Timing) -> float | None:
        if not self.kernel.flop or t.ms <= 0:
            return None
        return self.kernel.flop / (t.ms / 1e3) / 1e12

    @property
    def peak_tflops(self) -> float | None:
        """The device's peak for the kernel's compute type (fp32, tf32, fp16/bf16, fp8)."""
        return self.peak.flops_for(self.kernel.compute_type)

    def pct_of_peak_flops(self, t: Timing) -> float | None:
        f, peak = self.tflops(t), self.peak_tflops
        return 100.0 * f / peak if f is not None and peak else None

    def _timing_dict(self, t: Timing) -> dict[str, Any]:
        return {
            **asdict(t), "label": config_label(t.config), "ms": t.ms,
            "summary": t.summary.to_dict(), "gbps": self.gbps(t),
            "pct_of_peak_bw": self.pct_of_peak_bw(t), "tflops": self.tflops(t),
            "pct_of_peak_flops": self.pct_of_peak_flops(t),
        }

    def to_dict(self) -> dict[str, Any]:
        ch = self.comparison()
        return {
            "schema": REPORT_SCHEMA, "schema_version": REPORT_SCHEMA_VERSION,
            "kernel": self.kernel.to_dict(), "device": self.device, "versions": self.versions,
            "peak": self.peak.to_dict(),
            "peak_flops": {"compute_type": self.kernel.compute_type, "tflops": self.peak_tflops},
            "max_autotune_patch": self.tuning.to_dict() if self.tuning else None,
            "runs": [{"mode": r.mode, "space": r.space, "space_size": len(r.space),
                      "tried": r.tried, "tune_s": r.tune_s, **self._timing_dict(r.timing)}
                     for r in self.runs],
            "comparison": None if ch is None else {
                **ch.to_dict(), "speedup": ch.speedup,
                "verdict": Verdict.SAME_CODE if self.same_config() else verdict(ch),
                "threshold_rel": VERDICT_MIN_REL},
            "all_configs_mode": self.all_configs_mode,
            "all_configs": [self._timing_dict(t) for t in self.all_configs],
            "notes": self.notes,
        }


def kernel_notes(kf: KernelFile, max_autotune: bool, peak: Peak,
                 tuning: KernelPatch | None = None) -> list[str]:
    """What a reader must know to read the numbers right."""
    notes = []
    if kf.is_template and max_autotune:
        notes.append(
            f"{kf.name} is a template kernel: its launch config ({config_label(kf.compile_config)})"
            " was chosen when the model compiled and max-autotune cannot re-tune it from this "
            "file. Recompile to search GEMM configs: inductor-bench compare MODEL.py --modes "
            "default,max-autotune (or breakdown --mode max-autotune)."
        )
    if max_autotune and not kf.is_template and kf.tuning_flags["max_autotune"]:
        adds = [k for k, v in (tuning.meta if tuning else {}).items()
                if v and k in kf.tuning_flags and not kf.tuning_flags[k]]
        notes.append("this kernel was generated with max_autotune on: its baseline already "
                     "searches the max-autotune configs ("
                     + (f"max-autotune adds {', '.join(adds)})" if adds else "max-autotune "
                        "adds nothing to its switches)"))
    if not kf.num_gb:
        notes.append("the file gives no kernel_num_gb: no GB/s")
    if peak.gbps is None:
        notes.append("no peak bandwidth known for this device: pass --peak-gbps or --peaks-file")
    if kf.flop and peak.flops_for(kf.compute_type) is None:
        what = kf.compute_type or f"inputs {'/'.join(kf.input_types) or 'unknown'}"
        notes.append(f"no {what} TFLOP/s peak known for this device: no % of peak FLOP/s "
                     "(a --peaks-file entry can give tflops, tflops_fp32, tflops_tf32, tflops_fp8)")
    return notes


def build_report(kf: KernelFile, response: dict[str, Any], peak: Peak, *,
                 max_autotune: bool = False) -> KernelReport:
    """The report of one kernel from its parsed file and the worker's response."""
    runs = [ModeRun.from_dict(r) for r in response.get("runs") or []]
    if not runs:
        raise ResultError("the kernel worker returned no timed run")
    patch = response.get("max_autotune_patch")
    tuning = KernelPatch.from_dict(patch) if patch else None
    return KernelReport(
        kernel=kf, device=dict(response.get("device") or {}), peak=peak, runs=runs,
        all_configs=[Timing.from_dict(t) for t in response.get("all_configs") or []],
        all_configs_mode=response.get("all_configs_mode"),
        versions=dict(response.get("versions") or {}),
        notes=kernel_notes(kf, max_autotune, peak, tuning), tuning=tuning,
    )
