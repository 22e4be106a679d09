"""Record small, real Inductor Triton kernel files for the tests of `inductor-bench kernel`.

Compiles a handful of tiny functions, one per kind of Triton kernel (pointwise 1-D / 2-D /
3-D, reduction, persistent reduction, split scan, foreach, GEMM template), with
``benchmark_kernel`` on, each in a fresh Inductor cache directory, and copies the per-kernel
files Inductor wrote (decorator, ``@triton.jit`` function, ``get_args``/``call`` harness) to
``<out>/<kernel name>.py``. One more case is compiled without ``benchmark_kernel`` into
``<out>/no_harness/``: the file Inductor writes by default, which has no harness.

``--device cpu`` (the default) needs no GPU: Inductor generates Triton code for the CPU
(``cpu_backend = "triton"``). Nothing is launched: Triton has no CPU backend installed, so
the script stubs what would compile or run a kernel (the backend hash, precompilation, GEMM
autotuning benchmarks) and ignores the failure of the final call; the kernel files are
written before that point. It also fixes the indentation of the harness imports that
Inductor emits for the CPU device, which would not import otherwise. Besides the real
files it writes ``synthetic_cuda/``: the same files with the device rewritten to CUDA
(an H100's device properties, CUDA streams in the harness), labelled synthetic.

``--device cuda`` records on a GPU with no stubs at all: kernels compile, autotune and run.

Usage: python scripts/record_triton_kernels.py [--device cpu|cuda] [--out DIR] [--large] [--only TEXT]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "triton_kernels"

_HEURISTIC = re.compile(r"@triton_heuristics\.(\w+)\(")
_KERNEL_NAME = re.compile(r"'kernel_name': '(\w+)'")


@dataclass
class Case:
    what: str
    heuristic: str  # the decorator the kernel we keep must carry
    fn: Callable
    shapes: list[tuple[int, ...]]
    patches: dict = field(default_factory=dict)
    harness: bool = True  # compile with benchmark_kernel on
    subdir: str = ""
    large: list[tuple[int, ...]] | None = None  # --large: shapes that run for tens of µs
    indices: int = 0  # the last N inputs are int64 indices into the first input's rows


def _cases() -> list[Case]:
    import torch

    return [
        Case("pointwise 1-D", "pointwise", lambda x: torch.sin(x) + 1, [(4096,)],
             large=[(1 << 24,)]),
        Case("pointwise 2-D, square tile hint (one input, one output)", "pointwise",
             lambda x: x.t().contiguous() * 2, [(256, 128)], large=[(4096, 4096)]),
        Case("pointwise 2-D", "pointwise", lambda x, y: x.t() + y, [(256, 128), (128, 256)],
             large=[(4096, 2048), (2048, 4096)]),
        Case("pointwise 3-D", "pointwise",
             lambda x: x + x.permute(0, 2, 1) + x.permute(1, 0, 2), [(32, 32, 32)],
             {"triton.max_tiles": 3, "triton.prefer_nd_tiling": True}, large=[(256, 256, 256)]),
        Case("reduction", "reduction", lambda x: x.sum(-1), [(8, 65536)],
             large=[(4096, 8192)]),
        Case("persistent reduction", "persistent_reduction",
             lambda x: torch.softmax(x, -1), [(64, 128)], large=[(65536, 256)]),
        Case("split scan", "split_scan", lambda x: torch.cumsum(x, 0), [(65536,)],
             large=[(1 << 22,)]),
        Case("foreach", "foreach", lambda a, b: torch._foreach_add([a, b], [b, a]),
             [(1000,), (1000,)], {"benchmark_combo_kernel": True},
             large=[(1 << 22,), (1 << 22,)]),
        Case("GEMM template", "template", lambda a, b: a @ b, [(256, 256), (256, 256)],
             {"max_autotune": True, "max_autotune_gemm_backends": "TRITON",
              "benchmark_epilogue_fusion": False}, large=[(2048, 2048), (2048, 2048)]),
        Case("gather: an embedding lookup of 24 rows of a 1000 x 128 table", "pointwise",
             lambda table, ids: torch.nn.functional.embedding(ids, table) * 2, [(1000, 128), (24,)],
             indices=1, large=[(65536, 1024), (4096,)]),
        Case("slice: the first 64 of 1024 columns", "pointwise", lambda x: x[:, :64] * 2, [(256, 1024)],
             large=[(8192, 4096)]),
        Case("pointwise 1-D without benchmark harness", "pointwise",
             lambda x: torch.cos(x) * 3, [(4096,)], harness=False, subdir="no_harness",
             large=[(1 << 24,)]),
    ]


def _stub_cpu_codegen() -> None:
    """Let Inductor generate Triton code for the CPU on a machine with no Triton backend."""
    import torch.utils._triton as triton_utils
    from torch._inductor import select_algorithm
    from torch._inductor.codegen import triton as triton_codegen
    from torch._inductor.codegen import triton_combo_kernel
    from torch._inductor.runtime import triton_heuristics
    from torch._inductor.virtualized import V

    triton_utils.triton_hash_with_backend = lambda: "h"

    def harness_imports(self) -> str:
        # Inductor dedents a block that embeds the CPU device's multi-line
        # get_raw_stream definition, so its lines keep a stray indentation.
        stream = textwrap.dedent(V.graph.device_ops.import_get_raw_stream_as("get_raw_stream"))
        return ("\nfrom torch._dynamo.testing import rand_strided\n" + stream.strip()
                + "\nimport torch\n")

    triton_codegen.TritonKernel.imports_for_benchmark_kernel = harness_imports
    triton_combo_kernel.ComboKernel.imports_for_benchmark_kernel = harness_imports
    triton_heuristics.CachingAutotuner.precompile = lambda self, *a, **k: None

    def pick_triton_first(cls, choices, *args, **kwargs):
        return {c: (0.0 if c.name.startswith("triton") else 1.0) + i * 1e-3
                for i, c in enumerate(choices)}

    select_algorithm.AlgorithmSelectorCache.benchmark_choices = classmethod(pick_triton_first)


def _kernel_files(cache: Path, heuristic: str) -> list[tuple[str, str]]:
    """(kernel name, source) of the per-kernel files with ``heuristic`` under ``cache``. Where
    several files share a name (GEMM autotuning on a GPU writes one per candidate config), the
    one the compiled module runs is kept: its ``@triton.jit`` function is in the module."""
    found: dict[str, list[str]] = {}
    modules = []
    for path in sorted(cache.rglob("*.py")):
        text = path.read_text(errors="replace")
        if "async_compile" in text:
            modules.append(text)
            continue
        if "@triton.jit" not in text:
            continue  # compiled modules embed kernels; we want the kernel files
        hm, nm = _HEURISTIC.search(text), _KERNEL_NAME.search(text)
        if hm and nm and hm.group(1) == heuristic:
            found.setdefault(nm.group(1), []).append(text)
    return [(name, _the_one_run(texts, modules)) for name, texts in found.items()]


def _the_one_run(texts: list[str], modules: list[str]) -> str:
    """Of same-named kernel files, the one whose jit function a compiled module embeds (the
    first otherwise)."""
    for text in texts:
        body = text[text.index("@triton.jit"):].split("\ndef get_args", 1)[0].strip()
        if any(body in m for m in modules):
            return text
    return texts[0]


def _record_case(case: Case, device: str, cache: Path, large: bool) -> list[tuple[str, str]]:
    import torch
    import torch._inductor.config as inductor_config

    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(cache)
    torch._dynamo.reset()
    shapes = case.large if large and case.large else case.shapes
    n = len(shapes) - case.indices
    args = [torch.randn(s, device=device) for s in shapes[:n]]
    args += [torch.randint(0, shapes[0][0], s, device=device) for s in shapes[n:]]
    patches = {"benchmark_kernel": case.harness, "fx_graph_cache": False, **case.patches}
    failure: Exception | None = None
    with inductor_config.patch(patches):
        try:
            torch.compile(case.fn)(*args)
        except (IndexError, RuntimeError) as e:  # CPU: the call fails after codegen
            failure = e
    files = _kernel_files(cache, case.heuristic)
    if not files:
        raise SystemExit(f"{case.what}: no @{case.heuristic} kernel file was written"
                         + (f" ({type(failure).__name__}: {failure})" if failure else ""))
    if failure is not None and device != "cpu":
        raise failure
    return files


# --- synthetic CUDA variants -------------------------------------------------------------

H100_PROPS = ("DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, "
              "major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, "
              "max_threads_per_block=1024, warp_size=32)")
_CPU_PROPS = re.compile(r"DeviceProperties\(type='cpu'[^)]*\)")
_REWRITES = (
    ("triton_helpers.set_driver_to_cpu()", "triton_helpers.set_driver_to_gpu()"),
    ("def get_raw_stream(_):\n    return 0\n",
     "from torch._C import _cuda_getCurrentRawStream as get_raw_stream\n"),
    ("with torch._ops.contextlib.nullcontext():\n        pass\n",
     "with torch.cuda._DeviceGuard(0):\n        torch.cuda.set_device(0)\n"),
    ("raw_streamNone = get_raw_stream(None)", "stream0 = get_raw_stream(0)"),
    ("stream=raw_streamNone", "stream=stream0"),
    ("device='cpu', dtype=", "device='cuda:0', dtype="),
)
_BENCH_DEVICE = re.compile(r"device='cpu',(\s*)rep=")


def cuda_variant(source: str) -> str:
    """The CPU-generated kernel file with its device rewritten to CUDA (synthetic)."""
    out, n = _CPU_PROPS.subn(H100_PROPS, source)
    if n != 1:
        raise SystemExit("expected exactly one DeviceProperties(type='cpu', ...)")
    for old, new in _REWRITES:
        out = out.replace(old, new)
    out = _BENCH_DEVICE.sub(r"device='cuda',\1rep=", out)
    if "'cpu'" in out or "raw_streamNone" in out:
        raise SystemExit("a CPU-only line survived the CUDA rewrite")
    header = ("# SYNTHETIC: generated by Inductor for the CPU (cpu_backend='triton', torch "
              "2.13.0), device rewritten\n# to CUDA by scripts/record_triton_kernels.py. "
              "Not produced by a CUDA compile.\n")
    return header + out


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--out", type=Path, default=None,
                    help="default: tests/fixtures/triton_kernels/<device>")
    ap.add_argument("--synthetic-out", type=Path, default=FIXTURES / "synthetic_cuda",
                    help="--device cpu: where the CUDA-rewritten copies go")
    ap.add_argument("--only", default=None, help="record only the cases whose description has this text")
    ap.add_argument("--large", action="store_true",
                    help="shapes that run for tens of microseconds on a GPU (for timing checks)")
    opts = ap.parse_args()
    out: Path = opts.out or FIXTURES / opts.device
    import torch
    import torch._inductor.config as inductor_config

    if opts.device == "cpu":
        inductor_config.cpu_backend = "triton"
        _stub_cpu_codegen()
    elif not torch.cuda.is_available():
        print("--device cuda: no CUDA device", file=sys.stderr)
        return 2
    root = Path(tempfile.mkdtemp(prefix="ib-triton-kernels-"))
    written: set[Path] = set()
    try:
        for i, case in enumerate(_cases()):
            if opts.only and opts.only not in case.what:
                continue
            for name, source in _record_case(case, opts.device, root / str(i), opts.large):
                dest = out / case.subdir / f"{name}.py"
                if dest in written:
                    raise SystemExit(f"{dest}: two cases produced the same kernel name")
                written.add(dest)
                _write(dest, source)
                if opts.device == "cpu" and case.harness:
                    _write(opts.synthetic_out / f"{name}.py", cuda_variant(source))
                print(f"{dest}: {case.what}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
