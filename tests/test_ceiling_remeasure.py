"""A run whose kernels beat the measured compute ceiling measures it again: no cache lifts a
FLOP rate, so such a kernel proves the ceiling low (measured in a slow spell, or cached on a
busier day). And two runs that measured one device's ceilings apart are held against the same
set in a diff. The figures here are synthetic (hand-built kernels and ceilings); the worker
test measures a real matmul on this machine."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from inductor_bench.core.ceilings import Ceilings, Roofline, kernel_roof, widened
from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat
from inductor_bench.core.roofline import chart_points, to_measure_again
from inductor_bench.render.breakdown import render_breakdown
from inductor_bench.render.roofline import ceilings_lines
from inductor_bench.runner import roofline
from inductor_bench.runner.settings import RunSettings

CEIL = Ceilings("test device", gbps=100.0, tflops={"fp32": 1.0}, from_cache=True,
                measured_at="2026-11-27T22:32:03+00:00")  # ridge at 10 FLOP/byte


def gemm(name: str, tflops: float) -> KernelStat:
    """A compute-bound GEMM of 1 ms that runs at ``tflops``."""
    return KernelStat(name, "extern_gemm", 1.0, 1.0, bytes=1e6, flops=tflops * 1e9, compute="fp32")


def run_of(*kernels: KernelStat, ceilings: Ceilings = CEIL) -> BreakdownResult:
    return BreakdownResult("m", device="cpu", graphs=[GraphResult("0-forward", "forward", kernels=list(kernels),
                                                                 wall_ms=5.0)],
                           roofline=Roofline(replace(ceilings)))


def test_the_fastest_kernel_above_the_ceiling_asks_for_its_type_again():
    in_cache = KernelStat("copy", "cpp_pointwise", 1.0, 1.0, bytes=150e6)  # 150 GB/s: a cache, not a low ceiling
    r = run_of(gemm("a", 1.2), gemm("b", 1.5), gemm("near", 1.04), in_cache)
    assert to_measure_again(chart_points(r), r.roofline.measured) == {"fp32": pytest.approx(1.5)}
    assert to_measure_again(chart_points(run_of(gemm("near", 1.04), in_cache)), CEIL) == {}


def test_a_kernel_no_faster_than_the_last_one_that_asked_asks_no_more():
    """Each new try needs a kernel 5% faster than the one that made the last: a machine whose
    GEMMs really beat the square matmul is measured again a bounded number of times."""
    for checked, expected in ((1.5, {}), (1.45, {}), (1.4, {"fp32": pytest.approx(1.5)})):
        c = replace(CEIL, checked_against={"fp32": checked})
        r = run_of(gemm("b", 1.5), ceilings=c)
        assert to_measure_again(chart_points(r), c) == expected, checked


class FakeWorker:
    """``measure_ceilings`` as the worker answers it: the cached figures, then on a request to
    measure again a higher fp32 figure (``again_to``) or an error."""

    def __init__(self, again_to: float | None):
        self.again_to, self.calls = again_to, []

    def __call__(self, device, **kw):
        self.calls.append(kw)
        if not kw.get("again"):
            return replace(CEIL)
        if self.again_to is None:
            from inductor_bench.core.errors import WorkerError

            raise WorkerError("peaks_measure worker was killed by SIGKILL without a result")
        cur = kw["current"]
        return replace(cur, tflops={"fp32": self.again_to}, from_cache=False, remeasured_from={"fp32": 1.0},
                       checked_against=dict(kw["again"]))


def test_a_run_that_beats_the_cached_ceiling_measures_it_again_and_says_so(tmp_path, monkeypatch):
    fake = FakeWorker(again_to=1.3)
    monkeypatch.setattr(roofline, "measure_ceilings", fake)
    r = run_of(gemm("gemm", 1.2))
    roofline.add_roofline(r, tmp_path, RunSettings())
    assert [c.get("again") for c in fake.calls] == [None, {"fp32": pytest.approx(1.2)}]
    assert fake.calls[1]["current"].tflops == {"fp32": 1.0}
    assert r.roofline.measured.tflops == {"fp32": 1.3}
    assert json.loads((tmp_path / "peaks.json").read_text())["measured"]["tflops"] == {"fp32": 1.3}
    saved = json.loads((tmp_path / "breakdown.json").read_text())["extras"]["roofline"]
    assert saved["measured"]["tflops"] == {"fp32": 1.3}
    assert saved["kernels"][0]["pct"] == pytest.approx(100 * 1.2 / 1.3)
    text = render_breakdown(r)
    assert ("measured again, because kernels of this run ran above the ceiling: TFLOP/s fp32 1 -> 1.3 "
            "(the higher figure is kept, here and in the machine's cache)") in text
    assert "above the measured compute ceiling" not in text  # 92% of the new ceiling


def test_a_failed_new_try_keeps_the_ceilings_and_the_warning(tmp_path, monkeypatch):
    monkeypatch.setattr(roofline, "measure_ceilings", FakeWorker(again_to=None))
    r = run_of(gemm("gemm", 1.2))
    roofline.add_roofline(r, tmp_path, RunSettings())
    assert r.roofline.measured.tflops == {"fp32": 1.0} and r.status == "ok"
    text = render_breakdown(r)
    assert "measured again" not in text
    assert "WARNING: 1 compute-bound kernel(s) ran above the measured compute ceiling (up to 120%" in text


def test_a_run_within_the_ceiling_measures_nothing_again(tmp_path, monkeypatch):
    fake = FakeWorker(again_to=9.0)
    monkeypatch.setattr(roofline, "measure_ceilings", fake)
    roofline.add_roofline(run_of(gemm("gemm", 0.9)), tmp_path, RunSettings())
    assert len(fake.calls) == 1


def test_the_worker_measures_only_the_beaten_type_again_and_caches_what_asked(tmp_path):
    """The real worker, one thread: an fp32 ceiling of 1 MFLOP/s (absurdly low) measured again
    gives this machine's matmul rate; the bandwidth is not measured again; the cache keeps the
    new figure and the kernel's rate, and not the note that holds for this run only."""
    low = Ceilings("this machine", gbps=3.0, tflops={"fp32": 1e-6}, copy_gbps=3.0, threads=1,
                   measured_at="2026-11-27T22:32:03+00:00")
    got = roofline.measure_ceilings("cpu", cache_dir=tmp_path, reps=2, threads=1,
                                    again={"fp32": 5e-6}, current=low)
    assert got.tflops["fp32"] > 1e-3  # any CPU multiplies faster than a GFLOP/s
    assert got.gbps == 3.0 and got.copy_gbps == 3.0
    assert got.remeasured_from == {"fp32": 1e-6} and got.checked_against == {"fp32": 5e-6}
    assert got.measured_at != low.measured_at and not got.from_cache
    (entry,) = tmp_path.glob("*.json")
    cached = json.loads(entry.read_text())
    assert cached["tflops"]["fp32"] == got.tflops["fp32"] and cached["checked_against"] == {"fp32": 5e-6}
    assert cached["remeasured_from"] == {}


def test_a_kernel_that_still_beats_the_new_figure_is_said_to_outrun_the_square_matmul(tmp_path, monkeypatch):
    monkeypatch.setattr(roofline, "measure_ceilings", FakeWorker(again_to=1.1))
    r = run_of(gemm("gemm", 1.2))
    roofline.add_roofline(r, tmp_path, RunSettings())
    text = render_breakdown(r)
    assert "TFLOP/s fp32 1 -> 1.1 (the higher figure is kept" in text
    assert ("WARNING: 1 compute-bound kernel(s) ran above the measured compute ceiling (up to 109%: "
            "0-forward gemm), even measured again in this run: the square matmul") in text


def test_compare_measures_again_once_for_every_column_and_each_column_holds_the_new_figure(tmp_path, monkeypatch):
    """Two columns, the faster GEMM in the second: one new try, for the fastest kernel of
    either, and both columns against the same new ceilings."""
    from inductor_bench.core.compare import CompareResult, ModeResult

    fake = FakeWorker(again_to=1.6)
    monkeypatch.setattr(roofline, "measure_ceilings", fake)
    dirs = [tmp_path / "default", tmp_path / "max-autotune"]
    for d in dirs:
        d.mkdir()
    cols = [ModeResult("default", breakdown=run_of(gemm("gemm", 1.2)), run_dir=str(dirs[0])),
            ModeResult("max-autotune", breakdown=run_of(gemm("gemm", 1.5)), run_dir=str(dirs[1]))]
    result = CompareResult("m", modes=cols)
    roofline.add_compare_roofline(result, tmp_path, RunSettings())
    # each column's own breakdown directory holds its result with the same ceilings
    for d in dirs:
        saved = json.loads((d / "breakdown.json").read_text())
        assert saved["extras"]["roofline"]["measured"]["tflops"] == {"fp32": 1.6}
    assert [c.get("again") for c in fake.calls] == [None, {"fp32": pytest.approx(1.5)}]
    assert cols[0].breakdown.roofline is cols[1].breakdown.roofline
    assert cols[0].breakdown.roofline.measured.tflops == {"fp32": 1.6}
    saved = json.loads((tmp_path / "peaks.json").read_text())
    assert saved["measured"]["tflops"] == {"fp32": 1.6} and saved["measured"]["remeasured_from"] == {"fp32": 1.0}


# -- two runs that measured one device's ceilings apart ------------------------------------------


def test_the_higher_of_two_measurements_takes_each_figure_from_the_side_that_has_it():
    from inductor_bench.core.ceilings import higher_of, shared_ceilings

    a = Ceilings("cpu0", 30.0, {"fp32": 0.134, "fp16/bf16": 0.8}, copy_gbps=30.0, triad_gbps=17.0, threads=2,
                 matmul_n={"fp32": 2048})
    b = Ceilings("cpu0", 25.0, {"fp32": 0.22, "fp16/bf16": 0.7}, copy_gbps=25.0, triad_gbps=19.0, threads=2,
                 matmul_n={"fp32": 1024}, checked_against={"fp32": 0.2})
    h = higher_of(a, b)
    assert (h.gbps, h.copy_gbps, h.triad_gbps) == (30.0, 30.0, 17.0)
    assert h.tflops == {"fp32": 0.22, "fp16/bf16": 0.8} and h.matmul_n == {"fp32": 1024}
    assert h.checked_against == {"fp32": 0.2} and a.tflops["fp32"] == 0.134  # a copy: a is unchanged
    assert shared_ceilings(a, b).tflops == h.tflops
    assert shared_ceilings(a, replace(a)) is None  # the same figures: nothing to share
    assert shared_ceilings(a, replace(b, device_name="cpu1")) is None  # another device
    assert shared_ceilings(a, replace(b, threads=1)) is None  # other threads: another limit


def _gemm_run(tflops: float, fp32_ceiling: float) -> BreakdownResult:
    r = run_of(gemm("aten::mm", tflops), ceilings=replace(CEIL, tflops={"fp32": fp32_ceiling}))
    r.device_name = "test device"
    return r


def test_diff_holds_both_runs_against_the_same_ceilings_where_they_were_measured_apart():
    """Base measured fp32 low (0.5), head high (1.0); the GEMM ran at 0.6 then 0.8 TFLOP/s.
    Against their own ceilings it would read 120% -> 80%, a move down for a faster kernel;
    held against the higher of each figure it reads 60% -> 80%."""
    from inductor_bench.core.diff import diff_results
    from inductor_bench.render.diff import render_diff

    base, head = _gemm_run(0.6, 0.5), _gemm_run(0.8, 1.0)
    d = diff_results(base, head)
    (s,) = d.sections
    (k,) = [k for k in s.kernels if k.name == "aten::mm"]
    assert (k.base_pct, k.head_pct) == (pytest.approx(60.0), pytest.approx(80.0))
    assert s.roofline_pct == (pytest.approx(60.0), pytest.approx(80.0))
    cb, ch, shared = s.roofline_ceilings
    assert (cb.tflops, ch.tflops, shared.tflops) == ({"fp32": 0.5}, {"fp32": 1.0}, {"fp32": 1.0})
    text = " ".join(render_diff(d).split())
    assert ("% of peak: the two runs measured this device's ceilings apart (base: 100 GB/s, TFLOP/s fp32 0.5; "
            "head: 100 GB/s, TFLOP/s fp32 1); both are held against the higher of each figure (100 GB/s, "
            "TFLOP/s fp32 1), so a move is the kernel's, not the measurement's") in text
    assert json.loads(json.dumps(s.to_dict()))["roofline_ceilings"]["shared"] == {"gbps": 100.0, "tflops": {"fp32": 1.0}}


def test_diff_of_runs_with_the_same_ceilings_says_nothing_of_them():
    from inductor_bench.core.diff import diff_results
    from inductor_bench.render.diff import render_diff

    d = diff_results(_gemm_run(0.6, 1.0), _gemm_run(0.8, 1.0))
    assert d.sections[0].roofline_ceilings is None and "measured this device's ceilings apart" not in render_diff(d)
    assert d.sections[0].roofline_pct == (pytest.approx(60.0), pytest.approx(80.0))


def test_diff_of_two_thread_counts_or_two_devices_says_which_and_keeps_each_sides_ceilings():
    from inductor_bench.core.diff import diff_results
    from inductor_bench.render.diff import render_diff

    base, head = _gemm_run(0.6, 0.5), _gemm_run(0.8, 1.0)
    base.roofline.measured.threads, head.roofline.measured.threads = 1, 2
    d = diff_results(base, head)
    (k,) = [k for k in d.sections[0].kernels if k.name == "aten::mm"]
    assert (k.base_pct, k.head_pct) == (pytest.approx(120.0), pytest.approx(80.0))  # each its own ceiling
    text = " ".join(render_diff(d).split())
    assert ("% of peak: base and head ran on this device with different numbers of threads (1 thread(s): "
            "100 GB/s, TFLOP/s fp32 0.5; 2 thread(s): 100 GB/s, TFLOP/s fp32 1), each held against "
            "its own ceilings") in text
    head.device_name = "other device"
    head.roofline.measured.device_name = "other device"
    text = " ".join(render_diff(diff_results(base, head, allow_mismatch=True)).split())
    assert "% of peak: base and head ran on different devices (test device: " in text
    assert "other device: 100 GB/s, TFLOP/s fp32 1), each held against its own ceilings" in text


def test_diff_of_one_host_run_with_two_thread_counts_says_so_though_its_names_differ():
    """A host's device name says its threads (``AMD EPYC (2 cores, 1 thread)``, ``..., 2 threads)``,
    as ``cpu_mlp_train_roofline`` against a run of this machine with 2 threads): the same machine,
    not two devices."""
    from inductor_bench.core.diff import diff_results
    from inductor_bench.render.diff import render_diff

    base, head = _gemm_run(0.6, 0.5), _gemm_run(0.8, 1.0)
    for r, n in ((base, 1), (head, 2)):
        r.device_name = r.roofline.measured.device_name = f"AMD EPYC (2 cores, {n} thread{'s' if n > 1 else ''})"
        r.roofline.measured.threads = n
    text = " ".join(render_diff(diff_results(base, head, allow_mismatch=True)).split())
    assert ("% of peak: base and head ran on this device with different numbers of threads (AMD EPYC "
            "(2 cores, 1 thread): 100 GB/s, TFLOP/s fp32 0.5; AMD EPYC (2 cores, 2 threads): 100 GB/s, "
            "TFLOP/s fp32 1), each held against its own ceilings") in text


def test_a_hosts_half_precision_ceiling_is_no_lower_than_its_fp32_one():
    """Synthetic figures in the proportions of an AMD EPYC with AVX2 (torch 2.13): bf16's own
    routes at 0.024 TFLOP/s, fp32's at 0.171. A CPU can widen bf16 to fp32 and multiply at
    fp32's rate (Inductor's bf16 GEMM templates ran at 0.055 there, 220% of 0.024): the bf16
    ceiling is fp32's, and says so. Faster half-precision routes (native bf16), or an
    accelerator, are left as they were."""
    slow = Ceilings("cpu", gbps=30.0, tflops={"fp32": 0.171, "fp16/bf16": 0.024, "int8": 0.3},
                    matmul_n={"fp32": 2048, "fp16/bf16": 512}, matmul_layout={"fp32": "a @ b.T (oneDNN linear)",
                                                                              "fp16/bf16": "a.T @ b"})
    got = widened(Ceilings.from_dict(slow.to_dict()), host=True)
    assert got.tflops == {"fp32": 0.171, "fp16/bf16": 0.171, "int8": 0.3} and got.matmul_n["fp16/bf16"] == 2048
    assert got.matmul_layout["fp16/bf16"] == ("widened to fp32 (a @ b.T (oneDNN linear): its own fastest, "
                                              "a.T @ b, 0.024 TFLOP/s)")
    assert widened(Ceilings.from_dict(got.to_dict()), host=True).to_dict() == got.to_dict()  # once is enough
    # fp32 measured again, faster (a run's kernels beat it): bf16 follows it, its own figure kept once
    again = Ceilings.from_dict(got.to_dict())
    again.tflops["fp32"], again.matmul_layout["fp32"] = 0.174, "a.T @ b.T"
    again = widened(again, host=True)
    assert again.tflops["fp16/bf16"] == 0.174 and again.matmul_layout["fp16/bf16"] == (
        "widened to fp32 (a.T @ b.T: its own fastest, a.T @ b, 0.024 TFLOP/s)")
    unmeasured = Ceilings("cpu", gbps=30.0, tflops={"fp32": 0.171}, matmul_layout={"fp32": "a.T @ b"})
    twice = widened(widened(unmeasured, host=True), host=True)
    twice.tflops["fp32"] = 0.2
    assert widened(twice, host=True).matmul_layout["fp16/bf16"] == "widened to fp32 (a.T @ b)"
    assert widened(Ceilings.from_dict(slow.to_dict()), host=False).to_dict() == slow.to_dict()
    native = replace(slow, tflops={"fp32": 0.171, "fp16/bf16": 0.6})
    assert widened(Ceilings.from_dict(native.to_dict()), host=True).tflops["fp16/bf16"] == 0.6
    k = KernelStat("cpp_fused_addmm_0", "cpp_template", 1.0, 1.0, bytes=361e3, flops=55e6, compute="fp16/bf16")
    assert kernel_roof(k, slow, "cpu").pct > 200 and kernel_roof(k, got, "cpu").pct == pytest.approx(32.2, abs=0.1)


def test_the_ceilings_line_says_a_half_precision_figure_is_fp32s_where_it_was_widened():
    """Synthetic: bf16's own routes read 0.1 TFLOP/s beside fp32's 0.168 (on a 2-core VM under
    load, where unloaded they read 0.26), so its ceiling is fp32's and the two read alike; the
    TFLOP/s list says which of them is fp32's figure, not measured on its own. A figure
    measured on its own says nothing more."""
    slow = Ceilings("cpu", gbps=30.0, tflops={"fp32": 0.168, "fp16/bf16": 0.1},
                    matmul_layout={"fp32": "a @ b", "fp16/bf16": "a @ b"}, measured_at="2026-12-07")
    line = ceilings_lines(Roofline(widened(Ceilings.from_dict(slow.to_dict()), host=True)))[0]
    assert line.startswith("measured ceilings: 30 GB/s; TFLOP/s fp32 0.168, fp16/bf16 0.168 (fp32's: widened) (")
    own = replace(slow, tflops={"fp32": 0.168, "fp16/bf16": 0.261})
    line = ceilings_lines(Roofline(widened(Ceilings.from_dict(own.to_dict()), host=True)))[0]
    assert line.startswith("measured ceilings: 30 GB/s; TFLOP/s fp32 0.168, fp16/bf16 0.261 (")


def test_the_worker_holds_a_bf16_kernel_against_no_less_than_the_fp32_rate(tmp_path):
    """The real worker, one thread: whatever this CPU's bf16 routes do, the bf16 ceiling is at
    least the fp32 one it measured beside it."""
    got = roofline.measure_ceilings("cpu", cache_dir=tmp_path, reps=2, threads=1)
    assert got.tflops["fp16/bf16"] >= got.tflops["fp32"] > 1e-3
