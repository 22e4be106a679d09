"""Record the CUDA compiled modules a torch version generates, on a machine WITHOUT a GPU.

Inductor writes a compiled module's text before anything runs on the device, so a faked CUDA
device is enough to get the real code generation (graph partitions, Triton kernels, extern
calls, harness) of any torch version: the fixtures of ``tests/fixtures/codegen_<version>/``.
Nothing runs on a GPU; Triton kernels are never compiled to PTX, nothing is autotuned, and the
device properties in ``triton_meta`` are the faked ones (cc 90, 132 SMs).

How: each configuration runs in a process of its own, in the virtual environment of the torch
version it records (``--venv``). That process traces the example model with Dynamo on the CPU
(a backend that only keeps each graph, so graph breaks give several), makes fake CUDA inputs of
the same shapes and strides (``FakeTensorMode``), and hands each graph to
``torch._inductor.compile_fx.compile_fx``, the backend ``torch.compile`` calls, with
``triton.cudagraphs`` as the mode sets it; the text comes from ``GraphLowering.save_output_code``
(the hook ``run_and_get_code`` uses). Per compiled graph it also keeps torch's own CUDA-graph
state of the result (``disabled_cudagraphs_reason``, ``cudagraph_info.cudagraph_fail_reasons``,
the partition maps' static and mutated inputs) in the manifest.

A graph with a data-dependent size (``unbacked_infer_nocg``: a captured ``nonzero``) gets its fake
inputs in Dynamo's own fake mode, whose shape environment holds the unbacked symbols its nodes
are bound to; the other graphs in a fresh one.

Faked, in Python (``scripts/cuda_codegen_worker.py``; the same set for torch 2.11, 2.14.1 and
2.15): the ``torch.cuda`` queries (available, count, current device, capability, properties,
rng state, device exchange) and Dynamo's ``CudaInterface``, which bound the real ones at import;
``FakeTensor``'s ``init_gpu_context`` (2.11 made a real CUDA tensor there); Triton's active driver
(its target: cuda, cc 90, warp 32; the real one needs libcuda); ``AsyncCompile.triton`` (keeps
the source, never compiles); the pattern passes' lazy setup, which would make real CUDA tensors
(traced on the CPU instead); and SDPA's backend choice, which C++ makes from the device's
properties: the graph calls what an sm90 device picks (memory-efficient attention for fp32,
flash attention for 16-bit inputs). Dynamo's trace on the CPU sees no CUDA. For training, C++
autograd asks the CUDA runtime for the device and stream: a small stand-in runtime is preloaded
(``scripts/cuda_stubs/fake_cudart.c``, built with gcc into a temporary directory, its symbols
versioned like the venv's ``libcudart.so.N``, without that soname so that the real runtime still
loads for the rest) and a stub ``libcuda.so.1`` (``scripts/cuda_stubs/fake_libcuda.c``) is put
first on ``LD_LIBRARY_PATH``.

Usage:
  python scripts/record_cuda_codegen.py --venv ~/.cache/inductor-bench-venvs/torch-2.11.0
  python scripts/record_cuda_codegen.py --venv VENV --only mlp_infer_cg [--out DIR]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STUBS = Path(__file__).resolve().parent / "cuda_stubs"
FIXTURES = ROOT / "tests" / "fixtures"

# name -> (model file, train, cudagraphs, batch size, model keyword arguments)
CONFIGS: dict[str, tuple[str, bool, bool, int, dict]] = {
    "mlp_infer_nocg": ("models/mlp.py", False, False, 8, {}),
    "mlp_infer_cg": ("models/mlp.py", False, True, 8, {}),
    "mlp_train_nocg": ("models/mlp.py", True, False, 8, {}),
    "mlp_train_cg": ("models/mlp.py", True, True, 8, {}),
    "block_train_cg": ("models/transformer_block.py", True, True, 2, {}),
    "graphbreak_infer_cg": ("models/graph_break_script.py", False, True, 0, {}),
    "split_infer_cg": ("tests/fixtures/models/partition_split.py", False, True, 8, {}),
    # a data-dependent size (a captured nonzero): its fake inputs need a shape environment
    "unbacked_infer_nocg": ("tests/fixtures/models/unbacked_script.py", False, False, 0, {"unbacked": True}),
}


# ---------------------------------------------------------------- the driver (any Python)


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def cudart_version(venv: Path) -> str:
    """The soname version of the CUDA runtime the venv's torch links (``12``, ``13``)."""
    found = sorted(venv.glob("lib/python3*/site-packages/nvidia/**/libcudart.so.*"))
    for p in found:
        m = re.search(r"libcudart\.so\.(\d+)$", p.name)
        if m:
            return m.group(1)
    raise SystemExit(f"no libcudart.so.N under {venv}: not a CUDA build of torch")


def build_stubs(venv: Path, tmp: Path) -> dict[str, str]:
    """Build the stand-in runtime and driver; the environment that loads them."""
    ver = cudart_version(venv)
    vscript = tmp / "cudart.map"
    vscript.write_text(f"libcudart.so.{ver} {{ global: *; }};\n")
    cudart = tmp / "libfakecudart.so"
    # no soname of libcudart's own: the real runtime still loads for every call not faked here
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", f"-Wl,--version-script={vscript}",
                    "-o", str(cudart), str(STUBS / "fake_cudart.c")], check=True)
    driver_dir = tmp / "driver"
    driver_dir.mkdir()
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-Wl,-soname,libcuda.so.1", "-o",
                    str(driver_dir / "libcuda.so.1"), str(STUBS / "fake_libcuda.c")], check=True)
    lib_path = os.pathsep.join(p for p in (str(driver_dir), os.environ.get("LD_LIBRARY_PATH", "")) if p)
    return {"LD_PRELOAD": str(cudart), "LD_LIBRARY_PATH": lib_path}


def run_one(venv: Path, name: str, out: Path, stub_env: dict[str, str], timeout: float) -> list[dict]:
    """Record one configuration in a process of its own; its manifest rows."""
    train = CONFIGS[name][1]
    env = dict(os.environ, PYTHONHASHSEED="0", OMP_NUM_THREADS="1",
               TORCHINDUCTOR_CACHE_DIR=str(out / ".cache"), TRITON_CACHE_DIR=str(out / ".cache" / "triton"),
               TORCHINDUCTOR_FX_GRAPH_CACHE="0", TORCHINDUCTOR_AUTOGRAD_CACHE="0")
    if train:
        env.update(stub_env)
    rows_file = out / f".{name}.rows.json"
    cmd = [str(venv_python(venv)), str(Path(__file__).resolve()), "--worker", name, "--out", str(out)]
    proc = subprocess.run(cmd, env=env, cwd=ROOT, timeout=timeout, capture_output=True, text=True)
    if proc.returncode != 0 or not rows_file.exists():
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-6000:])
        raise SystemExit(f"{name}: recording failed (exit {proc.returncode})")
    rows = json.loads(rows_file.read_text())
    rows_file.unlink()
    return rows


def driver(args: argparse.Namespace) -> None:
    venv = Path(args.venv).expanduser()
    probe = subprocess.run([str(venv_python(venv)), "-c", "import torch, triton;"
                            "print(torch.__version__, triton.__version__)"],
                           capture_output=True, text=True, check=True)
    torch_version, triton_version = probe.stdout.split()[-2:]
    short = torch_version.split("+")[0]
    out = Path(args.out) if args.out else FIXTURES / f"codegen_{short}"
    out.mkdir(parents=True, exist_ok=True)
    names = args.only or list(CONFIGS)
    manifest_path = out / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {"modules": []}
    manifest.update({
        "generated_without_gpu": True,
        "torch": torch_version,
        "triton": triton_version,
        "date": datetime.date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPU cores, no GPU (CUDA device faked)",
        "recorder": "scripts/record_cuda_codegen.py",
    })
    with tempfile.TemporaryDirectory() as tmp:
        stub_env = build_stubs(venv, Path(tmp))
        for name in names:
            print(f"recording {name} with torch {torch_version} ...", flush=True)
            rows = run_one(venv, name, out, stub_env, args.timeout)
            manifest["modules"] = [r for r in manifest["modules"] if r["config"] != name] + rows
            manifest["modules"].sort(key=lambda r: r["file"])
            manifest_path.write_text(json.dumps(manifest, indent=1) + "\n")
            print(f"  {len(rows)} module(s)", flush=True)
    shutil.rmtree(out / ".cache", ignore_errors=True)
    write_readme(out, manifest)


WHAT = {
    "mlp_infer_nocg": "`models/mlp.py`, inference (`no_grad`), CUDA graphs off (mode default)",
    "mlp_infer_cg": "`models/mlp.py`, inference, CUDA graphs on (mode reduce-overhead)",
    "mlp_train_nocg": "`models/mlp.py`, a training step's forward and backward, CUDA graphs off",
    "mlp_train_cg": "`models/mlp.py`, training, CUDA graphs on",
    "block_train_cg": "`models/transformer_block.py` (SDPA), training, CUDA graphs on",
    "graphbreak_infer_cg": "`models/graph_break_script.py` (a graph break: two graphs), CUDA graphs on",
    "split_infer_cg": "`tests/fixtures/models/partition_split.py`: a custom op tagged "
                      "`cudagraph_unsafe` between two partitions, CUDA graphs on",
    "unbacked_infer_nocg": "`tests/fixtures/models/unbacked_script.py`: rows picked by a captured "
                           "`nonzero`, then a matmul (a data-dependent size, `u0`), CUDA graphs off",
}


MARK = "<!-- the part below is written by scripts/record_cuda_codegen.py -->"


def write_readme(out: Path, manifest: dict) -> None:
    """The folder's README: a README written otherwise is kept, this part appended below it."""
    readme = out / "README.md"
    title = f"# codegen_{manifest['torch'].split('+')[0]}: CUDA compiled modules generated without a GPU"
    kept = readme.read_text().split(MARK)[0].rstrip() if readme.exists() else ""
    kept = "" if kept == title else kept  # a README this script wrote: written again whole
    rows = manifest["modules"]
    listed = {r["file"] for r in rows}
    older = sorted(p.name for p in out.glob("*.py") if p.name not in listed)
    lines = [
        *([kept, "", MARK, "", "## Recorded by `scripts/record_cuda_codegen.py`"] if kept else [title]),
        "",
        f"**Generated without a GPU** — not recorded on a GPU. Inductor's own output for CUDA (the "
        f"module text it writes to its code cache, captured through `GraphLowering.save_output_code`), "
        f"made by torch {manifest['torch']} with triton {manifest['triton']} on {manifest['machine']}, "
        f"{manifest['date']}, by `{manifest['recorder']}` (its docstring says what was faked and how). "
        "Nothing ran on a GPU: the Triton kernels were never compiled to PTX and nothing was autotuned; "
        "the device properties in `triton_meta` are the faked ones (cc 90, 132 SMs). Compiled with "
        "`benchmark_kernel` on, as the tool compiles (each kernel's source carries its harness).",
        "",
        "Each graph is traced by Dynamo on the CPU and compiled by `compile_fx` for the faked device, so "
        "input names are `arg*_1` / `primals_*` as in a real run; the CUDA-graph wrapping itself "
        "(cudagraph trees) is never built. `manifest.json` lists every module with its model, mode, "
        "role and torch's own CUDA-graph state of it (`cudagraph_state`: `disabled_cudagraphs_reason`, "
        "`cudagraph_fail_reasons`, `static_input_idxs`, `partition_maps`, read from the "
        "`CompiledFxGraph` in its `post_compile`).",
        "",
        "| file | what |",
        "|---|---|",
    ]
    lines += [f"| `{r['file']}` | {WHAT.get(r['config'], r['config'])}; {r['role']} graph {r['graph']} |"
              for r in rows]
    if older and not kept:
        lines += ["", "Also here, recorded earlier without this script: "
                  + ", ".join(f"`{n}`" for n in older) + "."]
    lines += ["", "Used by `tests/test_codegen_fixtures.py` (every parser and the replay planner); "
              "their kernels also by the Triton-interpreter tests."]
    if not kept:
        lines.insert(1, "")
        lines.insert(2, MARK)
    readme.write_text("\n".join(lines) + "\n")


# ---------------------------------------------------------------- the worker (the venv's torch)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--venv", help="virtual environment of the torch version to record")
    ap.add_argument("--only", nargs="*", choices=list(CONFIGS), help="configurations (default: all)")
    ap.add_argument("--out", help="output folder (default tests/fixtures/codegen_<version>)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per configuration")
    ap.add_argument("--readme-only", action="store_true",
                    help="only write the folder's README from its manifest.json")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from cuda_codegen_worker import record

        record(args.worker, CONFIGS[args.worker], Path(args.out))
        return
    if args.readme_only:
        if not args.out:
            ap.error("--readme-only needs --out")
        write_readme(Path(args.out), json.loads((Path(args.out) / "manifest.json").read_text()))
        return
    if not args.venv:
        ap.error("--venv is required")
    driver(args)


if __name__ == "__main__":
    main()
