"""Dense matmul throughput of a device per compute type: the matmul ceilings
``runner/peaks_measure.py`` reports.

Square matmuls, 2·n³ FLOPs each, by every route the device has for the type: the four operand
layouts through ``torch.mm`` (on the host oneDNN's linear too; for int8 ``_int_mm`` and oneDNN's
quantized linear), each probed at ``PROBE_N``. The routes within ``CANDIDATE_SLACK`` of the
fastest probe are then timed at growing sizes from ``MIN_N`` until a call takes ``MIN_CALL_S``,
within ``MATMUL_BUDGET_S`` for the type, and the ceiling is the best rate of any route at any
size, with the size and route it was reached at. Work from other processes or a launch's fixed
cost only ever slows a timing, so the best is the closest to what the device does; and the
fastest size is not always the largest (on a 2-core Xeon VM with AMX, torch 2.13, 2026-12-03,
oneDNN's bf16 linear ran at 0.98 TFLOP/s at n = 1024 and 0.58 at n = 2048, and a model's
``512 x 1024 x 1024`` linear at 0.82, above a ceiling of 0.31 measured at n = 2048 alone).

On the host the probes are the first size of that: taken in rounds, one call of each route a
round, for at least ``PROBE_REPS`` rounds and until ``PROBE_BUDGET_S`` is spent, each route's
fastest call kept, and their rates count toward the ceiling. A neighbour that never stops
keeps one of the run's threads off its core for a scheduler slice at a time, and the other
waits for it at the GEMM's barrier: on the 2-core EPYC VM (2026-12-07) a call at n = 256 took
0.2 ms or 40-60 ms, in spells of a few hundred ms, and a call at 1024 never fit between two
slices (90-150 ms, where it takes 10 ms alone). Three calls of a route could all fall in a
spell (0.5-0.7 GFLOP/s), and the ceiling, grown from 1024, read 0.02-0.05 TFLOP/s against
0.198 quiet; many short calls in rounds catch the moments both threads run (the probes' best
reached 0.19), and a spell slows every route of a round alike, not one. A call during which
the process did not run (stopped, or every thread off its core) is made again, and its time
spends no budget (``runner/probe_clock.py``).
"""

from __future__ import annotations

from typing import Any

from ..core.devices import DEVICE, HOST, backend
from ..core.peaks import FP8, FP32, INT8, TF32
from .device import accelerator, synchronize
from .probe_clock import ProbeClock, timed

REPS = 7
WARMUP = 1
PROBE_N = 256
PROBE_REPS = 3
PROBE_BUDGET_S = 1.0  # host: the probes' rounds go on until this is spent (after PROBE_REPS)
PROBE_MAX_ROUNDS = 2000
# ... and on, up to PROBE_MAX_S, while every route's fastest call took over STALLED_S (33.5
# MFLOP at 3.4 GFLOP/s: a thread waiting for a core, as spells of a second and more did here)
STALLED_S, PROBE_MAX_S = 0.010, 3.0
CANDIDATE_SLACK = 4.0  # a route whose probe is this many times the fastest's is not grown
MIN_CALL_S = 0.02  # a matmul size is big enough once one call takes this long
MIN_N = {HOST: 1024, DEVICE: 4096}
MAX_N = {HOST: 4096, DEVICE: 16384}
MATMUL_BUDGET_S = 1.5  # per compute type: the routes, the sizes tried and the repetitions together


def best_seconds(fn: Any, device: str, reps: int = REPS, budget_s: float = 0.0) -> float:
    """The fastest of ``reps`` timed calls (after ``WARMUP`` untimed ones); on the host, more
    calls after those until ``budget_s`` is spent (up to ``PROBE_MAX_ROUNDS``)."""
    b = backend(device)
    for _ in range(WARMUP):  # on the host, a pause in it is counted too: it spends no budget
        timed(fn) if b.torch_module is None else fn()
    synchronize(device)
    if b.torch_module is None:
        times: list[float] = []
        clock = ProbeClock()
        while len(times) < reps or (len(times) < PROBE_MAX_ROUNDS and clock.spent() < budget_s):
            seconds, kept = timed(fn)
            if kept:  # a paused call is made again (``runner/probe_clock.py``)
                times.append(seconds)
        return min(times)
    ns = accelerator(b)
    pairs = [(ns.Event(enable_timing=True), ns.Event(enable_timing=True)) for _ in range(reps)]
    for start, end in pairs:
        start.record()
        fn()
        end.record()
    ns.synchronize()
    return min(s.elapsed_time(e) for s, e in pairs) / 1e3


# The operands' layouts a matmul can meet, in the order tried: both row-major, the second
# transposed (a linear layer's weight), the first transposed (a weight gradient), both.
LAYOUTS = ("a @ b", "a @ b.T", "a.T @ b", "a.T @ b.T")
FP8_LAYOUT = "a @ b.T"  # the one layout _scaled_mm takes; and _int_mm's fast one on a GPU (cuBLASLt)
# On the host, oneDNN's linear on its own blocked operands is tried beside aten's mm (MKL): on
# an AMD EPYC with AVX-512 (torch 2.13, one thread, 2026-11-29) MKL's fp32 GEMM ran at 107
# GFLOP/s in every layout, numpy's OpenBLAS at 125 and oneDNN's at 242. A ceiling measured
# through MKL alone was half the machine's, and any fp32 kernel faster than MKL read over 100%.
ONEDNN = "a @ b.T (oneDNN linear)"
# For int8, oneDNN's quantized linear beside ``_int_mm``: on an AMD EPYC with AVX2, no VNNI
# (torch 2.13) ``_int_mm`` ran at 2-6 GOP/s and oneDNN's at 170-300 (n = 256-1024).
ONEDNN_INT8 = "a @ b.T (oneDNN int8 linear)"


def _operands(kind: str, n: int, device: str, layout: str = LAYOUTS[0]) -> Any:
    """A zero-argument matmul of n x n operands of the compute type, in the layout."""
    import torch

    if kind == FP8:
        a = torch.randn(n, n, device=device).to(torch.float8_e4m3fn)
        b = torch.randn(n, n, device=device).to(torch.float8_e4m3fn).t()
        one = torch.ones((), device=device)
        return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    if kind == INT8:  # int8 by int8 into int32
        a = torch.randint(-128, 128, (n, n), device=device, dtype=torch.int8)
        b = torch.randint(-128, 128, (n, n), device=device, dtype=torch.int8)
        return _int8_product(a, b, layout)
    dtype = {FP32: torch.float32, TF32: torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[kind]
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    if layout == ONEDNN:
        am, bm = a.to_mkldnn(), b.to_mkldnn()
        return lambda: torch._C._nn.mkldnn_linear(am, bm)
    a = a.t() if layout.startswith("a.T") else a
    b = b.t() if layout.endswith("b.T") else b
    out = torch.empty(n, n, device=device, dtype=dtype)  # a new result each call: page faults on the host
    return lambda: torch.mm(a, b, out=out)


def _int8_product(a: Any, b: Any, layout: str) -> Any:
    """The int8 matmul of ``a`` and ``b`` by the route the layout names."""
    import torch

    if layout == ONEDNN_INT8:  # a @ b.T, a as uint8 at zero point 128, b packed as a weight
        x = (a.to(torch.int16) + 128).to(torch.uint8)
        w = torch.ops.onednn.qlinear_prepack(b, x.shape)
        ws, wz = torch.ones(b.shape[0]), torch.zeros(b.shape[0], dtype=torch.int64)
        return lambda: torch.ops.onednn.qlinear_pointwise(x, 1.0, 128, w, ws, wz, None, 1.0, 0, torch.float32,
                                                          "none", [], "")
    b = b.t() if layout.endswith("b.T") else b
    return lambda: torch._int_mm(a, b)


def routes(device: str, kind: str = FP32) -> tuple[str, ...]:
    """The ways of running the matmul that are tried: the four layouts through ``torch.mm``
    (int8: ``_int_mm`` with ``b`` as stored or transposed), and on the host oneDNN's linear (its
    quantized one for int8) where this torch has oneDNN."""
    import torch

    onednn = backend(device).torch_module is None and torch.backends.mkldnn.is_available()
    if kind == INT8:
        quantized = onednn and hasattr(torch.ops.onednn, "qlinear_prepack")
        return LAYOUTS[:2] + ((ONEDNN_INT8,) if quantized else ())
    return LAYOUTS + ((ONEDNN,) if onednn else ())


def fastest_in_rounds(fns: dict[str, Any], reps: int = PROBE_REPS, budget_s: float = PROBE_BUDGET_S,
                      max_rounds: int = PROBE_MAX_ROUNDS) -> dict[str, float]:
    """Each host call's fastest seconds, timed in rounds (one call of each a round, after one
    untimed call of each) for at least ``reps`` rounds and until ``budget_s`` is spent (or, while
    every call took over ``STALLED_S``, ``PROBE_MAX_S``) or ``max_rounds`` are done. A function
    that raises on its untimed call is left out."""
    ready = {}
    for name, fn in fns.items():
        try:
            timed(fn)  # a pause in it is counted: it spends no budget
        except (RuntimeError, TypeError):
            if name in LAYOUTS:  # torch.mm itself failing is the type's error, said by the caller
                raise
            continue
        ready[name] = fn
    best = dict.fromkeys(ready, float("inf"))
    clock, rounds = ProbeClock(), 0

    def more() -> bool:
        spent = clock.spent()
        stalled = spent < PROBE_MAX_S and min(best.values(), default=0.0) > STALLED_S
        return rounds < reps or (rounds < max_rounds and (spent < budget_s or stalled))

    while more():
        whole = True
        for name, fn in ready.items():
            seconds, kept = timed(fn)
            if kept:
                best[name] = min(best[name], seconds)
            whole = whole and kept
        rounds += whole  # a round with a paused call is made again (``runner/probe_clock.py``)
    return best


def route_probes(kind: str, device: str, n: int = PROBE_N) -> dict[str, float]:
    """Each route's seconds for an n x n matmul of the kind (on the host ``fastest_in_rounds``;
    on an accelerator the best of ``PROBE_REPS``, which its events time without the host's
    scheduler). The
    route can matter more than anything: on a CPU without native bf16 (AVX2), torch's bf16
    ``a @ b`` took 0.7 s at n = 1024 and ``a.T @ b`` 0.09 s, and a model's linear layers run
    ``a @ b.T``; a ceiling measured in one layout would sit below the model's own GEMMs. A route
    the CPU lacks (oneDNN's fp16 without AVX512-FP16) is passed over."""
    if kind == FP8 or (kind == INT8 and backend(device).timeline == DEVICE):
        return {FP8_LAYOUT: best_seconds(_operands(kind, n, device, FP8_LAYOUT), device, PROBE_REPS)}
    if backend(device).torch_module is None:
        return fastest_in_rounds({lay: _operands(kind, n, device, lay) for lay in routes(device, kind)})
    times = {}
    for lay in routes(device, kind):
        try:
            times[lay] = best_seconds(_operands(kind, n, device, lay), device, PROBE_REPS)
        except (RuntimeError, TypeError):
            if lay in LAYOUTS:  # torch.mm itself failing is the type's error, said by the caller
                raise
    return times


def candidates(probes: dict[str, float]) -> list[str]:
    """The routes worth timing at full size, fastest probe first: those within
    ``CANDIDATE_SLACK`` of the fastest (a probe is small and noisy; a route many times slower
    is not the device's limit, and growing it would spend the budget)."""
    fastest = min(probes.values())
    return sorted((k for k, s in probes.items() if s <= CANDIDATE_SLACK * fastest), key=lambda k: probes[k])


def _start_n(timeline: str, rate: float, budget_s: float) -> int:
    """``MIN_N``, halved while one call at the predicted rate would take over a quarter of the
    budget (a type the device only emulates)."""
    n = MIN_N[timeline]
    while n > PROBE_N and 2.0 * n**3 / rate > budget_s / 4:
        n //= 2
    return n


def grown_rate(kind: str, device: str, layout: str, rate: float, reps: int,
               budget_s: float) -> tuple[float, int]:
    """(best FLOP/s, its n) of the route over sizes doubling from ``_start_n`` until a call
    takes ``MIN_CALL_S``, n reaches ``MAX_N`` or the budget is spent; each size the best of up
    to ``reps`` calls (small calls measure a launch, or the threads' start and join, and so
    read slow, never fast)."""
    timeline = backend(device).timeline
    clock = ProbeClock()
    n, best = _start_n(timeline, rate, budget_s), (0.0, 0)
    while True:
        fn = _operands(kind, n, device, layout)
        one = best_seconds(fn, device, 1)
        left = budget_s - clock.spent()
        seconds = min(one, best_seconds(fn, device, max(1, min(reps, int(left / max(one, 1e-6))))))
        best = max(best, (2.0 * n**3 / seconds, n))
        if one >= MIN_CALL_S or n >= MAX_N[timeline] or clock.spent() >= budget_s:
            return best
        n *= 2


def matmul_tflops(kind: str, device: str, reps: int) -> tuple[float, int, str]:
    """Dense TFLOP/s of square matmuls of the kind (``FP32``, ``TF32``, ``bf16``, ``fp16``,
    ``INT8``, ``FP8``), with the n and the route it was reached at: the best of the candidate
    routes (``candidates``), each grown in its share of ``MATMUL_BUDGET_S``."""
    import torch

    old = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = kind == TF32
    try:
        clock = ProbeClock()
        probes = route_probes(kind, device)
        chosen = candidates(probes)
        best = max((2.0 * PROBE_N**3 / max(probes[lay], 1e-9), PROBE_N, lay) for lay in chosen)
        for i, lay in enumerate(chosen):
            share = max(0.0, MATMUL_BUDGET_S - clock.spent()) / (len(chosen) - i)
            rate, n = grown_rate(kind, device, lay, 2.0 * PROBE_N**3 / max(probes[lay], 1e-9), reps, share)
            best = max(best, (rate, n, lay))
        return best[0] / 1e12, best[1], best[2]
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old


