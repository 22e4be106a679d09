"""A compute ceiling is the best rate of any route (operand layout, oneDNN's linear) at any size
(``runner/peaks_matmul.py``): the layouts are the products they say, the routes near the fastest
probe are grown and the best rate of any of them at any size is the ceiling, and on this host
the bf16 ceiling is no lower than a linear layer's bf16 GEMM timed in a separate process that
uses none of the tool's code."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch

from inductor_bench.runner import peaks_matmul, probe_clock
from inductor_bench.runner.peaks_matmul import (
    LAYOUTS,
    ONEDNN,
    ONEDNN_INT8,
    _operands,
    candidates,
    matmul_tflops,
    route_probes,
    routes,
)

pytestmark = pytest.mark.usefixtures("host_counters_off")  # synthetic clocks: no real counters


@pytest.mark.parametrize("layout", routes("cpu"))
def test_each_layout_is_the_product_it_names(layout, monkeypatch):
    """The operands are drawn a then b; the layout transposes them as its name says (oneDNN's
    linear is ``a @ b.T``, on its own blocked copies of them)."""
    torch.manual_seed(0)
    fn = _operands("fp32", 8, "cpu", layout)
    torch.manual_seed(0)
    a, b = torch.randn(8, 8), torch.randn(8, 8)
    want = (a.t() if layout.startswith("a.T") else a) @ (b.t() if "b.T" in layout else b)
    got = fn()
    assert torch.allclose(got.to_dense() if got.is_mkldnn else got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("layout", routes("cpu", "int8"))
def test_each_int8_route_is_the_integer_product_it_names(layout):
    """``_int_mm`` with ``b`` as stored or transposed, and oneDNN's quantized linear (``a`` as
    uint8 at zero point 128, ``b`` packed as a weight, ``a @ b.T``): each the int8 product. (Small
    values: without VNNI, uint8 x int8 pairs add up in int16, which saturates for full-range
    operands in oneDNN's route and in torch 2.5's ``_int_mm``; the operation count, what the
    ceiling times, is the same.)"""
    torch.manual_seed(0)
    a = torch.randint(-8, 8, (32, 32), dtype=torch.int8)
    b = torch.randint(-8, 8, (32, 32), dtype=torch.int8)
    got = peaks_matmul._int8_product(a, b, layout)()
    a64, b64 = a.to(torch.int64), b.to(torch.int64)
    assert torch.equal(got.to(torch.int64), a64 @ (b64.t() if "b.T" in layout else b64))


def test_on_the_host_onednn_is_tried_beside_the_layouts():
    assert routes("cpu") == LAYOUTS + ((ONEDNN,) if torch.backends.mkldnn.is_available() else ())
    int8 = routes("cpu", "int8")
    assert int8[:2] == LAYOUTS[:2]
    assert (ONEDNN_INT8 in int8) == (torch.backends.mkldnn.is_available()
                                     and hasattr(torch.ops.onednn, "qlinear_prepack"))


def test_each_route_is_probed_and_a_route_the_cpu_lacks_is_passed_over(monkeypatch):
    """Synthetic timings per route: each probed; oneDNN refusing fp16 on a CPU without
    AVX512-FP16 leaves the layouts through mm."""
    seconds = {"a @ b": 0.7, "a @ b.T": 0.2, "a.T @ b": 0.09, "a.T @ b.T": 0.8}
    clock = _Clock()

    def operands(kind, n, device, layout="a @ b"):
        def call():
            if layout == ONEDNN:
                raise RuntimeError("mkldnn_linear: fp16 path needs the cpu support avx_ne_convert or avx512_fp16")
            clock.now += seconds[layout]
        return call

    monkeypatch.setattr(probe_clock, "time", clock)
    monkeypatch.setattr(peaks_matmul, "routes", lambda device, kind: LAYOUTS + (ONEDNN,))
    monkeypatch.setattr(peaks_matmul, "_operands", operands)
    assert route_probes("fp16", "cpu") == pytest.approx(seconds)


def test_the_routes_near_the_fastest_probe_are_grown_fastest_first():
    """Within 4x of the fastest probe (0.09 s): 0.09, 0.1, 0.2, 0.36; not 0.37 or 0.8."""
    probes = {"a @ b": 0.37, "a @ b.T": 0.2, "a.T @ b": 0.09, "a.T @ b.T": 0.8, ONEDNN: 0.1, "x": 0.36}
    assert candidates(probes) == ["a.T @ b", ONEDNN, "a @ b.T", "x"]


class _Clock:
    """A synthetic ``time`` whose ``perf_counter`` moves only by the synthetic calls' seconds,
    and whose ``process_time`` moves with it (the process ran through every call)."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now

    def process_time(self):
        return self.now


def _synthetic_rates(monkeypatch, rates):
    """``best_seconds`` of a (route, n) matmul: 2n³ / its rate (FLOP/s) in ``rates``, each call
    (the warm-up's too) moving a synthetic clock by as much; the probe's at n = 256. Records
    each (route, n) timed."""
    timed, clock = [], _Clock()

    def seconds(fn, device, reps):
        timed.append(fn)
        one = 2.0 * fn[1] ** 3 / rates[fn]
        clock.now += one * (reps + peaks_matmul.WARMUP)
        return one

    monkeypatch.setattr(probe_clock, "time", clock)
    monkeypatch.setattr(peaks_matmul, "routes", lambda device, kind: LAYOUTS + (ONEDNN,))
    monkeypatch.setattr(peaks_matmul, "_operands", lambda kind, n, device, layout="a @ b": (layout, n))
    monkeypatch.setattr(peaks_matmul, "best_seconds", seconds)
    monkeypatch.setattr(peaks_matmul, "fastest_in_rounds",
                        lambda fns, reps=peaks_matmul.PROBE_REPS: {k: seconds(f, "cpu", reps) for k, f in fns.items()})
    return timed


def test_the_ceiling_is_the_best_rate_of_any_route_at_any_size(monkeypatch):
    """Synthetic rates (GFLOP/s): oneDNN fastest at n = 1024 (980) and slower at 2048 (580),
    where a call first takes 20 ms; ``a @ b`` probes 5x slower than the fastest and is never
    grown. The ceiling is oneDNN's 980 at 1024, not its rate at the size where growing stops."""
    g = 1e9
    rates = {("a @ b", 256): 50 * g, ("a @ b.T", 256): 200 * g, ("a.T @ b", 256): 240 * g,
             ("a.T @ b.T", 256): 230 * g, (ONEDNN, 256): 250 * g,
             (ONEDNN, 1024): 980 * g, (ONEDNN, 2048): 580 * g,
             ("a @ b.T", 1024): 330 * g, ("a @ b.T", 2048): 620 * g,
             ("a.T @ b", 1024): 400 * g, ("a.T @ b", 2048): 430 * g,
             ("a.T @ b.T", 1024): 810 * g, ("a.T @ b.T", 2048): 430 * g}
    timed = _synthetic_rates(monkeypatch, rates)
    rate, n, layout = matmul_tflops("bf16", "cpu", 5)
    assert (layout, n) == (ONEDNN, 1024) and rate == pytest.approx(0.98)
    assert ("a @ b", 1024) not in timed and ("a @ b", 2048) not in timed
    assert {k for k in timed if k[1] == 4096} == set()  # 2048 takes over 20 ms in every route


def test_an_emulated_type_starts_smaller_and_keeps_to_its_budget(monkeypatch):
    """Synthetic: every route at 1 GFLOP/s. The five probes (3 calls and a warm-up each, 34 ms
    a call) take 0.67 s of the 1.5 s budget; each route's share of the rest is 0.17 s, and a
    call at n = 1024 (2.1 s) or 512 (0.27 s) would take more than a quarter of it: each route is
    timed at 256 only, once and then as often as its share allows, and the whole stays near the
    budget."""
    rates = {(lay, n): 1e9 for lay in LAYOUTS + (ONEDNN,) for n in (256, 512, 1024)}
    timed = _synthetic_rates(monkeypatch, rates)
    rate, n, _ = matmul_tflops("bf16", "cpu", 5)
    assert n == 256 and rate == pytest.approx(1e-3)
    assert max(k[1] for k in timed) == 256
    assert probe_clock.time.perf_counter() < 1.5 + 2 * 0.034


LINEAR_SIDE = r"""
import json, sys, time
import torch
torch.set_num_threads(int(sys.argv[1]))
x = torch.randn(512, 1024, dtype=torch.bfloat16)
w = torch.randn(1024, 1024, dtype=torch.bfloat16)
f = lambda: torch.nn.functional.linear(x, w)
f()
best = min(((time.perf_counter(), f(), time.perf_counter()) for _ in range(5)), key=lambda t: t[2] - t[0])
print(json.dumps(2.0 * 512 * 1024 * 1024 / (best[2] - best[0]) / 1e12))
"""


@pytest.mark.slow
def test_the_bf16_ceiling_is_no_lower_than_a_linear_layers_gemm():
    """Measured: on a CPU without native bf16 (AVX2), the square ``a @ b`` the ceiling was
    measured with ran at 1.4 GFLOP/s and a linear layer's ``x @ w.T`` at 10 GFLOP/s, so the
    model's GEMMs showed at 850-1,100% of peak. On a Xeon with AMX, the ceiling measured at
    n = 2048 alone read 0.31 TFLOP/s and the linear 0.82 (oneDNN's bf16 linear ran at 0.98 at
    n = 1024). The ceiling is a best of repetitions and so is the reference; other work slows
    either, so the bound is half (before: a tenth)."""
    threads = torch.get_num_threads()
    rate, n, layout = matmul_tflops("bf16", "cpu", 5)
    out = subprocess.run([sys.executable, "-c", LINEAR_SIDE, str(threads)], capture_output=True,
                         text=True, timeout=300, check=True)
    linear = json.loads(out.stdout)
    assert rate >= 0.5 * linear, f"ceiling {rate:.4f} TFLOP/s ({layout}, n={n}); a linear's GEMM {linear:.4f}"
