"""The recording side of ``scripts/record_cuda_codegen.py``: runs in the venv of the torch version
it records, fakes the CUDA device (see that script's docstring), traces one example model with
Dynamo on the CPU and compiles each graph for the fake CUDA device with ``compile_fx``."""

from __future__ import annotations

import contextlib
import functools
import json
import runpy
import types
from pathlib import Path
from typing import Any

import torch

CAPABILITY = (9, 0)
SM_COUNT = 132


def fake_properties() -> Any:
    return types.SimpleNamespace(
        name="NVIDIA H100 80GB HBM3 (faked)", major=CAPABILITY[0], minor=CAPABILITY[1],
        multi_processor_count=SM_COUNT, total_memory=80 * 2**30, warp_size=32,
        max_threads_per_multi_processor=2048, max_threads_per_block=1024,
        regs_per_multiprocessor=65536, shared_memory_per_block_optin=232448,
        shared_memory_per_block=49152, shared_memory_per_multiprocessor=233472,
        L2_cache_size=50 * 2**20, clock_rate=1980000, memory_clock_rate=2619000,
        memory_bus_width=5120, gcnArchName="NVIDIA H100", is_integrated=False, uuid="fake",
        pci_bus_id=0, pci_device_id=0, pci_domain_id=0, is_multi_gpu_board=False,
    )


def fake_cuda() -> None:
    """The ``torch.cuda`` queries Dynamo and Inductor make while compiling."""
    c = torch.cuda
    c.is_available = lambda: True
    c.device_count = lambda: 1
    c.current_device = lambda: 0
    c.get_device_capability = lambda device=None: CAPABILITY
    c.get_device_properties = lambda device=None: fake_properties()
    c._get_device_properties = lambda device=None: fake_properties()  # behind bound references
    c.get_device_name = lambda device=None: fake_properties().name
    c.is_bf16_supported = lambda including_emulation=True: True
    c._lazy_init = lambda: None
    c.is_initialized = lambda: True
    c.get_rng_state = lambda device="cuda": torch.zeros(16, dtype=torch.uint8)
    c.set_rng_state = lambda state, device="cuda": None
    c.get_rng_state_all = lambda: [torch.zeros(16, dtype=torch.uint8)]
    c.set_rng_state_all = lambda states: None
    c._exchange_device = lambda device: 0
    c._maybe_exchange_device = lambda device: 0
    c.set_device = lambda device: None
    c.synchronize = lambda device=None: None
    torch._C._cuda_getDevice = lambda: 0
    torch._C._cuda_getDeviceCount = lambda: 1
    from torch._dynamo import device_interface as di

    cuda_if = di.CudaInterface  # its methods were bound to the real functions at import
    for name in ("current_device", "device_count", "get_device_properties", "synchronize",
                 "exchange_device", "maybe_exchange_device", "is_bf16_supported", "set_device"):
        real_name = {"exchange_device": "_exchange_device",
                     "maybe_exchange_device": "_maybe_exchange_device"}.get(name, name)
        setattr(cuda_if, name, staticmethod(getattr(c, real_name)))
    cuda_if.is_available = staticmethod(lambda: True)
    cuda_if.get_raw_stream = staticmethod(lambda device=None: 0)
    if hasattr(cuda_if, "raise_if_triton_unavailable"):
        cuda_if.raise_if_triton_unavailable = staticmethod(lambda device=None: None)
    from torch.utils import _triton

    for fn in (_triton.has_triton, getattr(_triton, "has_triton_package", None)):
        if hasattr(fn, "cache_clear"):
            fn.cache_clear()
    from torch._subclasses import fake_tensor

    if hasattr(fake_tensor, "init_gpu_context"):  # 2.11: makes a real CUDA tensor
        fake_tensor.init_gpu_context = lambda device: None
    with contextlib.suppress(Exception):
        torch.cuda.memory.mem_get_info = lambda device=None: (70 * 2**30, 80 * 2**30)


def fake_triton_driver() -> None:
    from triton.backends.compiler import GPUTarget
    from triton.runtime import driver

    class FakeDriver:
        """Never loads the real CUDA driver (its utils module needs libcuda)."""

        def get_current_target(self) -> Any:
            return GPUTarget("cuda", CAPABILITY[0] * 10 + CAPABILITY[1], 32)

        def get_current_device(self) -> int:
            return 0

        def is_active(self) -> bool:
            return True

        def get_current_stream(self, device: int | None = None) -> int:
            return 0

        def get_device_interface(self) -> Any:
            return torch.cuda

        def get_active_torch_device(self) -> Any:
            return torch.device("cuda", 0)

    driver.set_active(FakeDriver())


class UnlaunchableKernel:
    """What ``async_compile.triton`` returns here: the source, never compiled."""

    def __init__(self, name: str, source: str) -> None:
        self.name, self.source = name, source

    def run(self, *a: Any, **kw: Any) -> None:
        raise RuntimeError(f"{self.name}: generated without a GPU, cannot launch")

    def __call__(self, *a: Any, **kw: Any) -> None:
        self.run()


def fake_async_compile() -> None:
    from torch._inductor.async_compile import AsyncCompile

    AsyncCompile.triton = lambda self, kernel_name, source_code, *a, **kw: UnlaunchableKernel(
        kernel_name, source_code)
    AsyncCompile.wait = lambda self, scope=None: None
    for name in ("warm_pool", "_warm_pool"):
        if hasattr(AsyncCompile, name):
            setattr(AsyncCompile, name, staticmethod(lambda *a, **k: None))


def no_cuda_during(module: Any, name: str) -> None:
    """The pattern passes' lazy setup makes real example tensors on CUDA when it is
    available, or on the graph's device: let it see none and trace them on the CPU (a pattern's
graph is the same on either device)."""
    fn = getattr(module, name, None)
    if fn is None:
        return

    def on_cpu(v: Any) -> Any:
        return torch.device("cpu") if isinstance(v, (torch.device, str)) and "cuda" in str(v) else v

    @functools.wraps(fn)
    def wrapped(*a: Any, **kw: Any) -> Any:
        real = torch.cuda.is_available
        torch.cuda.is_available = lambda: False
        try:
            return fn(*map(on_cpu, a), **{k: on_cpu(v) for k, v in kw.items()})
        finally:
            torch.cuda.is_available = real

    if hasattr(fn, "cache_clear"):
        wrapped = functools.lru_cache(None)(wrapped)
    setattr(module, name, wrapped)


def sdpa_as_on_sm90(q: Any, k: Any, v: Any, attn_mask: Any = None, dropout_p: float = 0.0,
                    is_causal: bool = False, scale: Any = None, enable_gqa: bool = False) -> Any:
    """What ``scaled_dot_product_attention`` runs on an sm90 device: flash attention for 16-bit
    inputs, memory-efficient attention otherwise (flash and cuDNN attention need 16-bit)."""
    ops = torch.ops.aten
    if q.dtype in (torch.float16, torch.bfloat16) and attn_mask is None:
        return ops._scaled_dot_product_flash_attention(
            q, k, v, dropout_p, is_causal, return_debug_mask=False, scale=scale)[0]
    lse = torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v))
    return ops._scaled_dot_product_efficient_attention(
        q, k, v, attn_mask, lse, dropout_p, is_causal, scale=scale)[0]


def route_sdpa(gm: Any) -> None:
    """SDPA picks its backend in C++ from the device's properties, through the real CUDA runtime
    (there is no device here): the graph calls the backend an sm90 device picks instead."""
    targets = {torch._C._nn.scaled_dot_product_attention, torch.nn.functional.scaled_dot_product_attention}
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in targets:
            node.target = sdpa_as_on_sm90
    gm.recompile()


def fake_pattern_setup() -> None:
    from torch._inductor.fx_passes import fuse_attention, misc_patterns, pad_mm

    no_cuda_during(fuse_attention, "_get_sfdp_patterns")
    no_cuda_during(misc_patterns, "_misc_patterns_init")
    no_cuda_during(pad_mm, "_pad_mm_init")


# ---------------------------------------------------------------- capture and compile


def capture_graphs(model_file: str, train: bool, batch: int, kwargs: dict) -> list[tuple[Any, list]]:
    """Every graph Dynamo makes of one step of the model on the CPU, with its example inputs."""
    graphs: list[tuple[Any, list]] = []

    def keep(gm: Any, example_inputs: list) -> Any:
        graphs.append((gm, list(example_inputs)))
        return gm.forward

    real_compile = torch.compile

    def compile_keeping(fn: Any = None, **kw: Any) -> Any:
        kw["backend"] = keep
        kw.pop("mode", None)
        return real_compile(**kw) if fn is None else real_compile(fn, **kw)

    torch._dynamo.reset()
    torch.manual_seed(0)
    # the stand-in runtime (training) reports a device: Dynamo on the CPU must see none
    real_available, torch.cuda.is_available = torch.cuda.is_available, lambda: False
    try:
        ns = runpy.run_path(model_file, run_name="record_cuda_codegen")
        if "make_workload" not in ns:
            torch.compile = compile_keeping
            try:
                runpy.run_path(model_file, run_name="__main__")
            finally:
                torch.compile = real_compile
            return graphs
        model, args = ns["make_workload"](device="cpu", batch_size=batch, **kwargs)[:2]
        compiled = torch.compile(model, backend=keep)
        with torch.no_grad() if not train else contextlib.nullcontext():
            compiled(*args)
        return graphs
    finally:
        torch.cuda.is_available = real_available


def fake_inputs(example_inputs: list, mode: Any) -> list:
    out = []
    with mode:
        for t in example_inputs:
            if not isinstance(t, torch.Tensor):
                out.append(t)
                continue
            f = torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device="cuda")
            if t.requires_grad:
                f = torch.nn.Parameter(f) if isinstance(t, torch.nn.Parameter) else f.requires_grad_(True)
            out.append(f)
    return out


def cudagraph_state(compiled: Any, graph_kwargs: dict[str, Any]) -> dict[str, Any]:
    """Torch's own CUDA-graph state of one compiled graph (a ``CompiledFxGraph``) as its
    ``post_compile`` receives it: what ``cudagraph_partition_post_compile`` decides from."""
    info = getattr(compiled, "cudagraph_info", None)
    maps = getattr(compiled, "partition_maps", None)
    cudagraphs = graph_kwargs.get("cudagraphs")
    return {
        "cudagraphs_requested": bool(cudagraphs) if cudagraphs is not None else None,
        "disabled_cudagraphs_reason": getattr(compiled, "disabled_cudagraphs_reason", None),
        "cudagraph_fail_reasons": list(getattr(info, "cudagraph_fail_reasons", None) or []),
        "static_input_idxs": sorted(graph_kwargs.get("static_input_idxs") or []),
        "mutated_input_idxs": sorted(getattr(compiled, "mutated_input_idxs", None) or []),
        "device_types": sorted(getattr(compiled, "device_types", None) or []),
        "partition_maps": None if maps is None else [
            {"input_index_mapping": list(pm.input_index_mapping),
             "output_index_mapping": [list(o) if isinstance(o, (list, tuple)) else o
                                      for o in pm.output_index_mapping]}
            for pm in maps
        ],
    }


def record(name: str, config: tuple, out: Path) -> None:
    model_file, train, cudagraphs, batch, kwargs = config
    graphs = capture_graphs(model_file, train, batch, kwargs)
    fake_cuda()  # after the capture on the CPU: Dynamo must see no CUDA there
    fake_triton_driver()
    fake_async_compile()
    fake_pattern_setup()
    from torch._functorch import config as functorch_config
    from torch._inductor import compile_fx as cfx
    from torch._inductor import config as inductor_config
    from torch._inductor import output_code
    from torch._inductor.graph import GraphLowering
    from torch._subclasses.fake_tensor import FakeTensorMode

    texts: list[str] = []
    states: dict[str, dict[str, Any]] = {}  # module text -> its state
    GraphLowering.save_output_code = staticmethod(texts.append)
    real_post_compile = output_code.CompiledFxGraph.post_compile

    def post_compile(self: Any, example_inputs: Any, constants: Any, graph_kwargs: Any) -> Any:
        states[getattr(self, "source_code", "")] = cudagraph_state(self, dict(graph_kwargs))
        return real_post_compile(self, example_inputs, constants, graph_kwargs)

    output_code.CompiledFxGraph.post_compile = post_compile
    rows = []
    patches = {"triton.cudagraphs": cudagraphs, "benchmark_kernel": True}
    fc_patches = {"force_non_lazy_backward_lowering": True} if hasattr(
        functorch_config, "force_non_lazy_backward_lowering") else {}
    for frame, (gm, inputs) in enumerate(graphs):
        first = len(texts)
        # a graph whose sizes depend on its data makes unbacked symbols: they need Dynamo's own
        # shape environment, which its nodes' bindings name
        own = _dynamo_fake_mode(gm) if kwargs.get("unbacked") else None
        mode = own or FakeTensorMode(allow_non_fake_inputs=True)
        fakes = fake_inputs(inputs, mode)
        route_sdpa(gm)
        with inductor_config.patch(patches), functorch_config.patch(fc_patches), (
                torch.no_grad() if not train else contextlib.nullcontext()):
            cfx.compile_fx(gm, fakes)
        for text in texts[first:]:
            role = _role(text)
            fname = f"{name}_{frame}_{role}.py"
            (out / fname).write_text(text)
            state = states.get(text)
            rows.append({"file": fname, "config": name, "model": model_file, "train": train,
                         "cudagraphs": cudagraphs,
                         "mode": "reduce-overhead" if cudagraphs else "default",
                         "graph": frame, "role": role, "cudagraph_state": state})
    (out / f".{name}.rows.json").write_text(json.dumps(rows))


def _dynamo_fake_mode(gm: Any) -> Any:
    """The fake mode Dynamo traced ``gm`` in (its placeholders' values), or None."""
    for n in gm.graph.nodes:
        val = (n.meta.get("val") or n.meta.get("example_value")) if n.op == "placeholder" else None
        if getattr(val, "fake_mode", None) is not None:
            return val.fake_mode
    return None


def _role(text: str) -> str:
    import re

    m = re.search(r"^# AOT ID: \['[^']*?_(forward|backward|inference)'\]", text, re.M)
    return m.group(1) if m else "unknown"
