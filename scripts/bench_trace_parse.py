"""Throughput and peak memory of ``load_trace`` (and of the parsers it was chosen from) on
a large kineto trace.

Writes a trace of about ``--mb`` MB, plain and gzipped, into a temporary directory: by
default a synthetic CUDA-shaped one in kineto's layout (one key per line; python function,
cpu_op, launch, kernel and flow events in the proportions of a profiled transformer step);
with ``--shape kernel-heavy`` one with no Python events, a flow pair for every launch and a
``ProfilerStep#N`` every 1,000 launches (most of its bytes kernels and their launches); or,
with ``--replicate TRACE``, the events of a real trace repeated verbatim until the size
is reached. Then reads it in a fresh process per case and run (``--repeat``, fastest run
shown) and prints wall and CPU time, MB/s of *uncompressed* JSON, and the peak RSS of that
process (``VmHWM``, else ``resource.getrusage``) beside its RSS before reading (interpreter
and imports).
``--tracemalloc`` adds a run per case under ``tracemalloc`` (slower) for its Python peak.

Cases, by kind (``--kinds``): ``analyze`` (the whole ``analyze`` of one trace, plain and
gzipped, and the same at git ``--analyze-ref``, before it read traces into columns);
``hta``: HolisticTraceAnalysis's temporal and kernel breakdowns of the same files, run by
``--hta-python`` (an interpreter with ``traceinsight`` installed; skipped without one);
``new``: ``load_for_analysis`` and ``load_trace`` (plain and gzipped) and the decoding floor
(``load_trace`` keeping no category); ``old``: the previous stdlib-only streaming parser,
taken from git (``--old-ref``); ``candidate``: ``json.load``, ``orjson.loads``, msgspec
decoding the whole document into typed structs, ijson's C (yajl2_c) backend; ``inflate``:
gzip inflate alone (stdlib zlib vs ISA-L). A case whose package is missing is skipped.

Usage: python scripts/bench_trace_parse.py [--mb 300] [--shape kernel-heavy | --replicate TRACE]
           [--repeat 3] [--kinds analyze,hta,...] [--hta-python PY] [--tracemalloc] [--keep-files]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ["triton_poi_fused_add_gelu_{}", "triton_red_fused_sum_{}",
           "triton_per_fused_native_layer_norm_{}", "triton_tem_fused_mm_{}"]
GEMM = ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1"
        "_execute_segment_k_off_kernel__5x_cublas")
ANALYSIS = ("{'cpu_op', 'user_annotation', 'kernel', 'gpu_memcpy', 'gpu_memset', "
            "'cuda_runtime', 'cuda_driver'}")

# Candidates, each selecting what load_for_analysis keeps (complete events of the breakdown's
# categories) so that the work compares; "<events kept>" is what the child prints.
MSGSPEC_WHOLE = f"""
import msgspec
from typing import Any, Union
Args = msgspec.defstruct("Args", [("c", Any, None), ("e", Any, None)],
                         rename={{"c": "correlation", "e": "External id"}})
X = msgspec.defstruct("X", [("ts", float), ("cat", str, ""), ("name", str, ""), ("dur", float, 0.0),
                            ("pid", Any, 0), ("tid", Any, 0), ("args", Union[Args, None], None)],
                      tag_field="ph", tag="X", gc=False)
other = [msgspec.defstruct(f"P{{i}}", [], tag_field="ph", tag=c, gc=False)
         for i, c in enumerate("BEiICbneSTpFstfPONDMVvRc()")]
Doc = msgspec.defstruct("Doc", [("traceEvents", list[Union[(X, *other)]])])
with open(p, "rb") as f:
    doc = msgspec.json.Decoder(Doc).decode(f.read())
n = sum(1 for e in doc.traceEvents if type(e) is X and e.cat in {ANALYSIS})
"""
KEEP = f"e.get('ph') == 'X' and e.get('cat') in {ANALYSIS}"
COUNT = f"n = sum(1 for e in doc['traceEvents'] if {KEEP})"
IJSON = f"""
import ijson
assert ijson.backend == "yajl2_c", ijson.backend
n = sum(1 for e in ijson.items(open(p, "rb"), "traceEvents.item", use_float=True) if {KEEP})
"""
HTA = """
from hta.trace_analysis import TraceAnalysis
a = TraceAnalysis(trace_dir=str(Path(p).parent))
a.get_temporal_breakdown(visualize=False)
a.get_gpu_kernel_breakdown(visualize=False)
n = len(a.t.get_trace(0))
"""
ANALYZED = "n = sum(d.events for s in r.steps for d in s.devices)"
CASES = {
    # name: (file suffix, kind, code run in the child; sets n = events kept)
    "analyze": ("json", "analyze", f"r = analyze_file(p)\n{ANALYZED}"),
    "analyze, gzipped": ("json.gz", "analyze", f"r = analyze_file(p)\n{ANALYZED}"),
    "before: analyze (an Event per event)": ("json", "old-analyze",
                                             f"r = analyze_trace(load_for_analysis(p))\n{ANALYZED}"),
    "HTA (traceinsight): temporal + kernel breakdown": ("json", "hta", HTA),
    "HTA, gzipped": ("json.gz", "hta-gz", HTA),
    "load_for_analysis": ("json", "new", "n = len(load_for_analysis(p).events)"),
    "load_for_analysis, gzipped": ("json.gz", "new", "n = len(load_for_analysis(p).events)"),
    "load_trace (all events, all args)": ("json", "new", "n = len(load_trace(p).events)"),
    "load_trace (all events, all args), gzipped": ("json.gz", "new", "n = len(load_trace(p).events)"),
    "decoding floor (load_trace keeping nothing)": ("json", "new",
                                                    "n = len(load_trace(p, categories=(), args=()).events)"),
    "before: stdlib streaming, load_for_analysis": ("json", "old",
                                                    "n = len(old.load_for_analysis(p).events)"),
    "before: stdlib streaming, load_for_analysis, gzipped": ("json.gz", "old",
                                                             "n = len(old.load_for_analysis(p).events)"),
    "json.load (whole document)": ("json", "candidate", f"doc = json.load(open(p))\n{COUNT}"),
    "orjson.loads (whole document)": ("json", "candidate",
                                      f"import orjson\ndoc = orjson.loads(open(p, 'rb').read())\n{COUNT}"),
    "msgspec typed structs (whole document)": ("json", "candidate", MSGSPEC_WHOLE),
    "ijson yajl2_c (streaming dicts)": ("json", "candidate", IJSON),
    "inflate only: stdlib gzip (zlib)": ("json.gz", "inflate",
                                         "import gzip\nf = gzip.open(p, 'rb')\n"
                                         "while f.read(8 << 20):\n    pass\nn = 0"),
    "inflate only: isal igzip (ISA-L)": ("json.gz", "inflate",
                                         "from isal import igzip\nf = igzip.open(p, 'rb')\n"
                                         "while f.read(8 << 20):\n    pass\nn = 0"),
}
CHILD = """
import gc, json, resource, sys, time, tracemalloc
from pathlib import Path
sys.path[:0] = {paths!r}
try:
    from inductor_bench.core.trace import load_for_analysis, load_trace
    from inductor_bench.core.analyze import analyze_trace
    from inductor_bench.core.analyze import analyze_file
    import old_trace as old
except ImportError:
    pass


def peak_kb():
    # VmHWM: this process's own peak; ru_maxrss on Linux keeps the parent's peak across exec
    try:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


p = sys.argv[1]
gc.collect()
before = peak_kb()
if sys.argv[2] == "1":
    tracemalloc.start()
t0, c0 = time.perf_counter(), time.process_time()
{code}
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
traced = tracemalloc.get_traced_memory()[1] if tracemalloc.is_tracing() else 0
print(json.dumps([n, wall, cpu, before, peak_kb(), traced]))
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


def _launch_group(i: int, ts: float, kernel_heavy: bool = False) -> list[str]:
    """What kineto records around one kernel launch from Inductor's wrapper; kernel-heavy:
    without the Python events, a flow pair for every launch, a step marker every 1,000."""
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
    if kernel_heavy:
        out = out[2:]
        if i % 1000 == 0:
            out.append(_event("user_annotation", f"ProfilerStep#{i // 1000}", 4242, 4242, ts,
                              1000 * 13.0 - 1.0, {"External id": i, "Record function id": 0}))
    if kernel_heavy or i % 3 == 0:
        out.append(f'  {{"ph": "s", "id": {corr}, "pid": 4242, "tid": 4242, "ts": {ts + 2:.3f}, '
                   '"cat": "ac2g", "name": "ac2g"}')
        out.append(f'  {{"ph": "f", "id": {corr}, "pid": 0, "tid": 7, "ts": {ts + 20:.3f}, '
                   '"cat": "ac2g", "name": "ac2g", "bp": "e"}')
    return out


def write_trace(path: Path, target_bytes: int, kernel_heavy: bool = False) -> int:
    """Write the synthetic trace; returns the number of trace events."""
    n = 0
    with open(path, "w") as f:
        f.write('{\n  "schemaVersion": 1,\n  "deviceProperties": [{"id": 0, "name": '
                '"NVIDIA H100 80GB HBM3", "numSms": 132}],\n  "traceEvents": [\n')
        i, ts = 0, 4457437588000.0
        first = True
        while f.tell() < target_bytes:
            group = _launch_group(i, ts, kernel_heavy)
            f.write(("" if first else ",\n") + ",\n".join(group))
            first = False
            n += len(group)
            i += 1
            ts += 13.0
        f.write('\n],\n  "traceName": "synthetic",\n  "displayTimeUnit": "ms",\n'
                '  "baseTimeNanoseconds": 1790857026000000000\n}\n')
    return n


def replicate_trace(source: Path, path: Path, target_bytes: int) -> int:
    """Write ``source``'s trace with its events repeated verbatim (same layout, same ts)
    until the file reaches ``target_bytes``; returns the number of trace events."""
    raw = source.read_bytes()
    text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8")
    start = text.index("[", text.index('"traceEvents"'))
    end = json.JSONDecoder().raw_decode(text, start)[1] - 1  # the list's closing "]"
    body = text[start + 1 : end].strip().encode()
    per_copy = len(json.loads(text[start : end + 1]))
    copies = 0
    with open(path, "wb") as f:
        f.write(text[: start + 1].encode() + b"\n")
        while f.tell() < target_bytes:
            f.write((b",\n" if copies else b"") + body)
            copies += 1
        f.write(b"\n" + text[end:].encode())
    return copies * per_copy


def old_parser(ref: str, into: Path) -> str | None:
    """Put the ``core/trace.py`` of git ``ref`` into ``into`` as ``old_trace``; a reason
    when it cannot be had."""
    r = subprocess.run(["git", "show", f"{ref}:inductor_bench/core/trace.py"], cwd=ROOT,
                       capture_output=True, text=True, check=False)
    if r.returncode != 0:
        return f"git show {ref} failed: {r.stderr.strip()[:80]}"
    text = r.stdout.replace("from .errors import", "from inductor_bench.core.errors import")
    (into / "old_trace.py").write_text(text)
    return None


def run_case(code: str, path: Path, paths: list[str], traced: bool, python: str = sys.executable
             ) -> list[float] | str:
    """[kept, wall s, cpu s, RSS before KB, peak RSS KB, tracemalloc peak B], or why not."""
    r = subprocess.run([python, "-c", CHILD.format(code=code, paths=paths), str(path),
                        "1" if traced else "0"], capture_output=True, text=True, check=False)
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["?"])[-1]
        return "skipped: " + last[:90]
    return json.loads(r.stdout.strip().splitlines()[-1])


def versions() -> str:
    out = []
    for mod in ("msgspec", "isal", "orjson", "ijson"):
        r = subprocess.run([sys.executable, "-c", f"import {mod}; print({mod}.__version__)"],
                           capture_output=True, text=True, check=False)
        out.append(f"{mod} {r.stdout.strip() or 'absent'}")
    return ", ".join(out)


def machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
        model = next(line.split(":", 1)[1].strip() for line in cpuinfo.splitlines()
                     if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return (f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"{platform.system()} {platform.release()}; load average {load}")


def options() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=300.0, help="size of the plain trace, MB")
    ap.add_argument("--shape", choices=("launch", "kernel-heavy"), default="launch",
                    help="the synthetic trace's shape")
    ap.add_argument("--replicate", type=Path, help="repeat the events of this real trace")
    ap.add_argument("--repeat", type=int, default=3, help="runs per case (fastest shown)")
    ap.add_argument("--kinds", default=",".join(KINDS), help=f"cases to run, of {','.join(KINDS)}")
    ap.add_argument("--no-baseline", action="store_true", help="only the kinds new and analyze")
    ap.add_argument("--old-ref", default="d2f35c2", help="git ref of the previous parser")
    ap.add_argument("--analyze-ref", default="4372b36",
                    help="git ref of analyze before it read traces into columns")
    ap.add_argument("--hta-python", default="", help="a Python with traceinsight installed")
    ap.add_argument("--tracemalloc", action="store_true", help="one more run per case, traced")
    ap.add_argument("--keep-files", action="store_true")
    ap.add_argument("--files", type=Path, help="keep the traces in this directory and reuse them")
    ap.add_argument("--plain-only", action="store_true", help="no case on the gzipped file")
    return ap.parse_args()


KINDS = ("analyze", "old-analyze", "hta", "hta-gz", "new", "old", "candidate", "inflate")


def write_files(opts: argparse.Namespace, tmp: Path) -> tuple[str, int, dict[str, Path]]:
    """The trace, plain and gzipped, each alone in a directory (HTA reads a directory)."""
    files = {s: (opts.files or tmp) / s / f"trace.{s}" for s in ("json", "json.gz")}
    if all(f.exists() for f in files.values()):
        return f"{opts.files}", 0, files
    for f in files.values():
        f.parent.mkdir(parents=True, exist_ok=True)
    if opts.replicate:
        total = replicate_trace(opts.replicate, files["json"], int(opts.mb * 1e6))
        what = f"{opts.replicate.name} replicated"
    else:
        total = write_trace(files["json"], int(opts.mb * 1e6), opts.shape == "kernel-heavy")
        what = f"synthetic ({opts.shape})"
    with open(files["json"], "rb") as src, gzip.open(files["json.gz"], "wb", 6) as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    return what, total, files


def old_package(ref: str, into: Path) -> str | None:
    """The package at git ``ref`` under ``into``; a reason when it cannot be had."""
    into.mkdir()
    r = subprocess.run(f"git archive {ref} inductor_bench | tar -x -C {into}", shell=True, cwd=ROOT,
                       capture_output=True, text=True, check=False)
    return None if r.returncode == 0 else f"git archive {ref} failed: {r.stderr.strip()[:80]}"


def row(name: str, kind: str, code: str, path: Path, paths: list[str], opts, mb: float) -> list[str]:
    python = opts.hta_python if kind.startswith("hta") else sys.executable
    if not python:
        return [name, "skipped: no --hta-python"]
    runs = [run_case(code, path, paths, False, python) for _ in range(max(1, opts.repeat))]
    if isinstance(runs[0], str):
        return [name, runs[0]]
    kept, wall, cpu, before, _, _ = min(runs, key=lambda r: r[1])
    peak = max(r[4] for r in runs) / 1024
    traced = ""
    if opts.tracemalloc:
        t = run_case(code, path, paths, True, python)
        traced = f"{t[5] / 1e6:,.0f}" if not isinstance(t, str) else "-"
    return [name, f"{kept:,}" if kind != "inflate" else "-", f"{wall:.2f}", f"{cpu:.2f}",
            f"{mb / wall:.0f}", f"{before / 1024:.0f}", f"{peak:,.0f}", f"{peak / mb:.2f}", traced]


def main() -> int:
    opts = options()
    kinds = {"new", "analyze"} if opts.no_baseline else set(opts.kinds.split(","))
    tmp = Path(tempfile.mkdtemp(prefix="ib-bench-trace-"))
    try:
        t0 = time.perf_counter()
        what, total, files = write_files(opts, tmp)
        size = {s: f.stat().st_size / 1e6 for s, f in files.items()}
        print(f"{what} trace: {total:,} events, {size['json']:.0f} MB plain, {size['json.gz']:.1f} MB "
              f"gzipped (written in {time.perf_counter() - t0:.0f} s)")
        print(f"machine: {machine()}\npackages: {versions()}")
        missing = {"old": old_parser(opts.old_ref, tmp),
                   "old-analyze": old_package(opts.analyze_ref, tmp / "before")}
        rows = []
        for name, (suffix, kind, code) in CASES.items():
            if kind not in kinds or (opts.plain_only and suffix != "json"):
                continue
            if missing.get(kind):
                rows.append([name, missing[kind]])
                continue
            paths = [str(tmp / "before")] if kind == "old-analyze" else [str(ROOT), str(tmp)]
            rows.append(row(name, kind, code, files[suffix], paths, opts, size["json"]))
        print(tabulate(rows, headers=["case", "events kept", "wall s", "cpu s", "MB/s (plain)",
                                      "RSS before MB", "peak RSS MB", "peak / plain size",
                                      "tracemalloc peak MB"]))
        print("MB/s: MB of uncompressed JSON per wall second, gzipped files included. Candidates "
              "count the events load_for_analysis would keep, without building them; analyze the "
              "device events in its steps; HTA the rows of its trace table.")
        print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        if opts.keep_files:
            print(f"files kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
