"""The independent measurements, each in a process of its own: ``python
scripts/gpu_validate_checks.py MEASUREMENT ... --out FILE.json``. They never import
``inductor_bench``; torch and triton are imported inside the functions, so this file imports
nothing outside the standard library at module level."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
from pathlib import Path
from typing import Any

# -- the measurements (run in their own processes) -------------------------------------------


def _load(path: str, name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _first_call_values(m: Any, path: Path, args: list[Any]) -> None:
    """Set the harness's inputs and the module's constants to the values the model's first call
    gave the graph, read from the ``inputs.pt`` beside the module (what the tool profiles on:
    the harness's randn weights can make a kernel several times slower), with torch alone.
    A float input past the tool's budget is brought to its recorded mean and deviation."""
    import torch

    record = path.with_name("inputs.pt")
    if not record.exists():
        return
    data = torch.load(record, weights_only=True)
    for i, (mean, std) in ((int(i), v.tolist()) for i, v in (data.get("scales") or {}).items()):
        if i < len(args) and isinstance(args[i], torch.Tensor) and args[i].is_floating_point():
            args[i].mul_(std).add_(mean)
    for i, value in ((int(i), v) for i, v in (data.get("inputs") or {}).items()):
        if i < len(args) and isinstance(args[i], torch.Tensor) and args[i].shape == value.shape \
                and args[i].dtype == value.dtype:
            with contextlib.suppress(RuntimeError):  # an expanded harness input keeps its draw
                args[i].copy_(value)
    for name, value in ((data.get("constants") or {}).get("values") or {}).items():
        held = getattr(m, name, None)
        if isinstance(held, torch.Tensor) and held.shape == value.shape and held.dtype == value.dtype:
            setattr(m, name, value.to(held.device))


def measure_graph_time(a: argparse.Namespace) -> dict[str, Any]:
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = a.cache
    import torch

    if a.precision:
        torch.set_float32_matmul_precision(a.precision)
    return {"graphs": [_graph_time(a, path, i) for i, path in enumerate(a.module)]}


def _graph_time(a: argparse.Namespace, path: str, index: int) -> dict[str, Any]:
    import torch
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    cuda = a.device == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    m = _load(path, f"gpu_validate_graph_{index}")
    args = m.get_args()
    _first_call_values(m, Path(path), args)
    for _ in range(5):
        m.call(list(args))
    sync()
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    ms, events = [], []
    for _ in range(a.sessions):
        with profile(activities=acts) as p:
            for _ in range(a.calls):
                m.call(list(args))
            sync()
        evs = p.events()
        if cuda:  # kernels, memcpy, memset: device events that are not annotation spans
            dev = [
                e
                for e in evs
                if e.device_type == DeviceType.CUDA and not getattr(e, "is_user_annotation", False)
            ]
            total_us = sum(e.time_range.elapsed_us() for e in dev)
        else:  # dry run: the top-level ops of each call, as tests/test_e2e_breakdown.py
            dev = [e for e in evs if e.cpu_parent is None]
            total_us = sum(e.cpu_time_total for e in dev)
        ms.append(total_us / a.calls / 1e3)
        events.append(len(dev) / a.calls)
    return {"module": path, "ms": ms, "events": events, "calls": a.calls, "sessions": a.sessions}


_KERNEL_PATH = re.compile(r"^# kernel path: (\S+)\s*$", re.M)


def _original_kernel_file(copy: Path, module: Path) -> Path | None:
    """The file Inductor wrote (in the run's cache, a ``.best_config`` beside it) whose text is
    the copy's: named by a ``# kernel path:`` comment of the compiled module."""
    if not module.exists():
        return None
    text = copy.read_text()
    for p in _KERNEL_PATH.findall(module.read_text()):
        q = Path(p)
        if q.exists() and q.read_text() == text:
            return q
    return None


def measure_do_bench(a: argparse.Namespace) -> dict[str, Any]:
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = a.scratch
    if len(a.kernel) != len(a.module):
        raise SystemExit("do-bench: one --module (the graph's) per --kernel")
    return {"kernels": [_do_bench(k, m, i) for i, (k, m) in enumerate(zip(a.kernel, a.module, strict=True))]}


def _do_bench(kernel: str, module: str, index: int) -> dict[str, Any]:
    import torch
    import triton

    copy = Path(kernel)
    original = _original_kernel_file(copy, Path(module))
    path = original or copy
    pinned = original is not None and path.with_suffix(".best_config").exists()
    mod = _load(str(path), f"gpu_validate_kernel_{index}")
    tuners = [v for v in vars(mod).values() if hasattr(v, "launchers") and hasattr(v, "configs")]
    # read before the first call: torch 2.11's autotuner drops its configs (None) once it has launchers
    candidates = len(tuners[0].configs) if tuners and tuners[0].configs is not None else None
    args = mod.get_args()
    mod.call(args)
    torch.cuda.synchronize()
    bench = triton.testing.do_bench
    try:
        ms = bench(lambda: mod.call(args), warmup=25, rep=200, return_mode="median")
    except TypeError:  # older triton: no return_mode
        ms = bench(lambda: mod.call(args), warmup=25, rep=200, quantiles=[0.5])
        ms = ms[0] if isinstance(ms, (list, tuple)) else ms
    config = None
    with contextlib.suppress(Exception):  # the autotuner's internals vary between versions
        cfg = tuners[0].launchers[0].config
        # as `inductor-bench kernel` writes a config (runner/kernelbench.config_dict): comparable
        config = {**dict(cfg.kwargs), **{k: int(getattr(cfg, k)) for k in ("num_warps", "num_stages")
                                         if getattr(cfg, k, None) is not None}}
    return {
        "ms": float(ms),
        "path": str(path),
        "pinned": pinned,
        "config": config,
        "candidates": candidates,
    }


def _floating_sum(out: Any):
    import torch

    stack, tensors = [out], []
    while stack:
        x = stack.pop()
        if isinstance(x, torch.Tensor):
            if x.is_floating_point() and x.requires_grad:
                tensors.append(x)
        elif isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
        elif hasattr(x, "to_tuple"):
            stack.extend(x.to_tuple())
    if not tensors:
        raise SystemExit("--train: the model's output has no floating tensor that requires grad")
    return sum(t.float().sum() for t in tensors)


def measure_step_time(a: argparse.Namespace) -> dict[str, Any]:
    import inspect
    import runpy
    import time

    os.environ["TORCHINDUCTOR_CACHE_DIR"] = a.cache
    import torch

    factory = runpy.run_path(a.model, run_name="gpu_validate_model")["make_workload"]
    params = inspect.signature(factory).parameters
    offered = {"device": a.device, "dtype": torch.float32, "batch_size": a.batch_size}
    made = factory(**{k: v for k, v in offered.items() if k in params and v is not None})
    model, args = made[0], made[1]
    kwargs = made[2] if len(made) == 3 else {}
    args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    model.train(a.train)
    compiled = torch.compile(model, mode=None if a.mode == "default" else a.mode)
    cuda = a.device == "cuda"
    cudagraph_modes = ("reduce-overhead", "max-autotune")  # the modes that turn triton.cudagraphs on
    mark = getattr(torch.compiler, "cudagraph_mark_step_begin", None) if a.mode in cudagraph_modes else None

    def step() -> None:
        if a.train:
            _floating_sum(compiled(*args, **kwargs)).backward()
            model.zero_grad(set_to_none=True)
        else:
            with torch.no_grad():
                compiled(*args, **kwargs)

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize()

    t0 = time.perf_counter()
    step()
    sync()
    compile_s = time.perf_counter() - t0
    for _ in range(a.warmup):
        if mark:
            mark()
        step()
    sync()
    events, host = [], []
    for _ in range(a.steps):
        if mark:
            mark()
        if cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            t0 = time.perf_counter()
            start.record()
            step()
            end.record()
            torch.cuda.synchronize()
            host.append((time.perf_counter() - t0) * 1e3)
            events.append(start.elapsed_time(end))
        else:
            t0 = time.perf_counter()
            step()
            host.append((time.perf_counter() - t0) * 1e3)
    return {"events_ms": events, "host_ms": host, "compile_s": compile_s}
# The roofline's ceilings, measured with do_bench (``check_peaks`` compares them).
PEAKS_COPY_BYTES = 512 * 1024**2  # as the tool's device copy
PEAKS_MATMUL_N = 8192

def measure_peaks(a: argparse.Namespace) -> dict[str, Any]:
    """A device copy, fp32 (TF32 off) and bf16 matmuls and an int8 ``_int_mm``, each the best of
    do_bench's runs."""
    import torch
    import triton.testing

    def best_ms(fn: Any) -> float:
        try:
            return float(triton.testing.do_bench(fn, return_mode="min"))
        except TypeError:  # a triton without return_mode: the 0th quantile is the minimum
            return float(triton.testing.do_bench(fn, quantiles=[0.0, 0.5])[0])

    src = torch.empty(PEAKS_COPY_BYTES, dtype=torch.uint8, device=a.device)
    dst = torch.empty_like(src)
    gbps = 2 * PEAKS_COPY_BYTES / best_ms(lambda: dst.copy_(src)) / 1e6
    torch.backends.cuda.matmul.allow_tf32 = False
    n, tflops = PEAKS_MATMUL_N, {}
    for kind, dtype in (("fp32", torch.float32), ("fp16/bf16", torch.bfloat16)):
        x = torch.randn(n, n, device=a.device, dtype=dtype)
        y = torch.randn(n, n, device=a.device, dtype=dtype)
        tflops[kind] = 2.0 * n**3 / best_ms(lambda x=x, y=y: x @ y) / 1e9
    xi = torch.randint(-128, 128, (n, n), device=a.device, dtype=torch.int8)
    yi = torch.randint(-128, 128, (n, n), device=a.device, dtype=torch.int8).t()  # cuBLASLt's layout
    tflops["int8"] = 2.0 * n**3 / best_ms(lambda: torch._int_mm(xi, yi)) / 1e9  # TOP/s
    return {"gbps": gbps, "tflops": tflops}


MEASUREMENTS = {
    "graph-time": measure_graph_time,
    "do-bench": measure_do_bench,
    "step-time": measure_step_time,
    "peaks": measure_peaks,
}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Independent measurements for scripts/gpu_validate.py.")
    ap.add_argument("what", choices=sorted(MEASUREMENTS))
    ap.add_argument("--out", required=True, help="write the result JSON here")
    ap.add_argument("--module", action="append", default=[],
                    help="compiled module (graph-time), or the graph module of each --kernel (do-bench)")
    ap.add_argument("--kernel", action="append", default=[], help="kernel file (do-bench)")
    ap.add_argument("--model", help="model file (step-time)")
    ap.add_argument("--cache", default="", help="TORCHINDUCTOR_CACHE_DIR")
    ap.add_argument("--scratch", default="", help="a fresh TORCHINDUCTOR_CACHE_DIR (do-bench)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--mode", default="default")
    ap.add_argument("--train", action="store_true")
    ap.add_argument("--batch-size", type=int, default=None)
    ap.add_argument("--precision", default=None)
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--sessions", type=int, default=3)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    a = ap.parse_args(argv)
    result = MEASUREMENTS[a.what](a)
    Path(a.out).write_text(json.dumps(result))
    print(json.dumps(result)[:2000])
