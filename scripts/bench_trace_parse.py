"""Throughput and peak memory of ``load_trace`` on a large synthetic kineto trace.

Writes a synthetic CUDA-shaped chrome trace (kineto's layout: one key per line, python
function, cpu_op, launch, kernel and flow events in the proportions of a profiled
transformer step) of about ``--mb`` MB, plain and gzipped, into a temporary directory, then
reads it in a fresh process per case and prints events/s, MB/s and the peak RSS of that
process (``resource.getrusage``). ``json.load`` of the same file is the baseline.

Usage: python scripts/bench_trace_parse.py [--mb 300] [--no-baseline] [--keep-files]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tabulate import tabulate

KERNELS = ["triton_poi_fused_add_gelu_{}", "triton_red_fused_sum_{}",
           "triton_per_fused_native_layer_norm_{}", "triton_tem_fused_mm_{}"]
GEMM = ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1"
        "_execute_segment_k_off_kernel__5x_cublas")

CASES = {
    # name: (file suffix, code run in the child; prints "<events kept>")
    "load_trace (keep everything)": ("json", "len(load_trace(p).events)"),
    "load_for_analysis": ("json", "len(load_for_analysis(p).events)"),
    "load_for_analysis, gzipped": ("json.gz", "len(load_for_analysis(p).events)"),
    "json.load (baseline)": ("json", "len(json.load(open(p))['traceEvents'])"),
}
CHILD = """
import json, resource, sys, time
from inductor_bench.core.trace import load_for_analysis, load_trace
p = sys.argv[1]
t0 = time.perf_counter()
n = {code}
dt = time.perf_counter() - t0
print(n, dt, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def _event(cat: str, name: str, pid: int, tid: int, ts: float, dur: float, args: dict) -> str:
    """One complete event, laid out line by line as kineto writes it."""
    head = [("ph", '"X"'), ("cat", json.dumps(cat)), ("name", json.dumps(name)),
            ("pid", pid), ("tid", tid), ("ts", f"{ts:.3f}")]
    lines = ["  {"] + [f'    "{k}": {v},' for k, v in head]
    lines += [f'    "dur": {dur:.3f}', "    ,", '    "args": {']
    lines.append("      " + ",".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in args.items()))
    lines += ["    }", "  }"]
    return "\n".join(lines)


def _launch_group(i: int, ts: float) -> list[str]:
    """What kineto records around one kernel launch from Inductor's wrapper."""
    name = GEMM if i % 5 == 4 else KERNELS[i % 4].format(i % 97)
    op = "aten::mm" if i % 5 == 4 else name
    api = "cudaLaunchKernel" if i % 5 == 4 else "cuLaunchKernelEx"
    corr = 1_000_000 + i
    out = [
        _event("python_function", "torch/_inductor/runtime/triton_heuristics.py(1248): run",
               4242, 4242, ts, 9.0, {"Python parent id": i * 2, "Python id": i * 2 + 1,
                                     "Python thread": 0}),
        _event("python_function", "<built-in method _RecordFunctionFast>", 4242, 4242,
               ts + 0.5, 8.0, {"Python parent id": i * 2 + 1, "Python id": i * 2 + 2}),
        _event("cpu_op", op, 4242, 4242, ts + 1.0, 6.0,
               {"External id": i, "Record function id": 0, "Ev Idx": i}),
        _event("cuda_runtime" if api.startswith("cuda") else "cuda_driver", api, 4242, 4242,
               ts + 2.0, 3.0, {"External id": i, "cbid": 211, "correlation": corr}),
        _event("kernel", name, 0, 7, ts + 20.0, 12.5,
               {"queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": corr,
                "External id": i, "registers per thread": 128, "shared memory": 49152,
                "blocks per SM": 1.0, "warps per SM": 8.0, "grid": [132, 1, 1],
                "block": [256, 1, 1], "est. achieved occupancy %": 25}),
    ]
    if i % 3 == 0:
        out.append(f'  {{"ph": "s", "id": {corr}, "pid": 4242, "tid": 4242, "ts": {ts + 2:.3f}, '
                   '"cat": "ac2g", "name": "ac2g"}')
        out.append(f'  {{"ph": "f", "id": {corr}, "pid": 0, "tid": 7, "ts": {ts + 20:.3f}, '
                   '"cat": "ac2g", "name": "ac2g", "bp": "e"}')
    return out


def write_trace(path: Path, target_bytes: int) -> int:
    """Write the synthetic trace; returns the number of trace events."""
    n = 0
    with open(path, "w") as f:
        f.write('{\n  "schemaVersion": 1,\n  "deviceProperties": [{"id": 0, "name": '
                '"NVIDIA H100 80GB HBM3", "numSms": 132}],\n  "traceEvents": [\n')
        i, ts = 0, 4457437588000.0
        first = True
        while f.tell() < target_bytes:
            group = _launch_group(i, ts)
            f.write(("" if first else ",\n") + ",\n".join(group))
            first = False
            n += len(group)
            i += 1
            ts += 13.0
        f.write('\n],\n  "traceName": "synthetic",\n  "displayTimeUnit": "ms",\n'
                '  "baseTimeNanoseconds": 1790857026000000000\n}\n')
    return n


def run_case(code: str, path: Path) -> tuple[int, float, int]:
    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", CHILD.format(code=code), str(path)],
                       capture_output=True, text=True, env=env, check=False)
    if r.returncode != 0:
        raise SystemExit(f"benchmark child failed:\n{r.stderr}")
    kept, secs, rss_kb = r.stdout.split()
    return int(kept), float(secs), int(rss_kb)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=300.0, help="size of the plain trace, MB")
    ap.add_argument("--no-baseline", action="store_true", help="skip json.load")
    ap.add_argument("--keep-files", action="store_true")
    opts = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ib-bench-trace-"))
    try:
        plain = tmp / "trace.json"
        t0 = time.perf_counter()
        total = write_trace(plain, int(opts.mb * 1e6))
        with open(plain, "rb") as src, gzip.open(tmp / "trace.json.gz", "wb", 6) as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        sizes = {s: (tmp / f"trace.{s}").stat().st_size / 1e6 for s in ("json", "json.gz")}
        print(f"synthetic trace: {total:,} events, {sizes['json']:.0f} MB plain, "
              f"{sizes['json.gz']:.0f} MB gzipped (written in {time.perf_counter() - t0:.0f} s)")
        rows = []
        for name, (suffix, code) in CASES.items():
            if opts.no_baseline and name.startswith("json.load"):
                continue
            kept, secs, rss_kb = run_case(code, tmp / f"trace.{suffix}")
            rows.append([name, f"{kept:,}", f"{secs:.1f}", f"{total / secs / 1e3:,.0f}",
                         f"{sizes['json'] / secs:.1f}", f"{rss_kb / 1024:,.0f}"])
        print(tabulate(rows, headers=["case", "events kept", "s", "k events/s",
                                      "MB/s (plain size)", "peak RSS MB"]))
    finally:
        if opts.keep_files:
            print(f"files kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
