"""Read and validate an Inductor per-kernel Triton file (pure; no torch import).

A kernel file written with ``TORCHINDUCTOR_BENCHMARK_KERNEL=1`` holds one
``@triton_heuristics.<heuristic>(size_hints=..., triton_meta={...}, inductor_meta={...})``
decorated ``@triton.jit`` function, and a harness: ``get_args()``, ``call(args)``,
``benchmark_all_configs(args)`` and a ``__main__`` that prints ms, GB and GB/s. The file is
parsed with ``ast`` and the decorator's arguments are evaluated without running anything,
so a file can be checked on any machine before a worker loads it.
"""

from __future__ import annotations

import ast
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .categories import label
from .classify import classify
from .devices import HOST_BACKEND, kernel_timing_backends
from .digests import run_file
from .errors import DeviceError, UsageError
from .modparse import KernelInfo, is_compiled_module, parse_module
from .peaks import compute_type
from .si_units import with_prefix

HARNESS = ("get_args", "call")  # what a benchmark needs from the file
# Autotuning switches Inductor bakes into inductor_meta when it writes the file.
TUNING_FLAGS = ("max_autotune", "max_autotune_pointwise", "coordinate_descent_tuning")


@dataclass
class KernelFile:
    """What an Inductor Triton kernel file says about itself."""

    path: str
    name: str  # the @triton.jit function: what the harness launches
    heuristic: str  # pointwise, reduction, persistent_reduction, template, ...
    category: str  # a key of categories.CATEGORIES
    device: str | None  # a backend name (core/devices.py), from triton_meta's DeviceProperties
    size_hints: Any = None  # dict (torch >= 2.6) or list (2.5)
    triton_meta: dict[str, Any] = field(default_factory=dict)
    inductor_meta: dict[str, Any] = field(default_factory=dict)
    decorator_args: dict[str, Any] = field(default_factory=dict)  # the others (tile_hint ...)
    functions: list[str] = field(default_factory=list)  # module-level functions
    num_gb: float | None = None  # bytes moved per launch, in GB (Inductor's estimate)
    flop: int | None = None  # FLOPs per launch where Inductor counts them (templates)
    # the text parsed, which is the text a worker imports (never the file read again)
    text: str = field(default="", repr=False, compare=False)

    @property
    def has_harness(self) -> bool:
        return all(f in self.functions for f in HARNESS)

    @property
    def is_template(self) -> bool:
        return self.heuristic == "template"

    @property
    def tuning_flags(self) -> dict[str, bool]:
        """The autotuning switches baked into the file (absent = off)."""
        return {k: bool(self.inductor_meta.get(k)) for k in TUNING_FLAGS}

    @property
    def is_combo(self) -> bool:
        """A foreach or combo kernel: several kernels launched as one."""
        return self.heuristic == "foreach" or "combo_grid_meta" in self.inductor_meta

    @property
    def input_types(self) -> list[str]:
        """Element types of the pointers the kernel reads (``fp32``, ``bf16``, ``fp8e4nv``),
        from triton_meta's signature; outputs (``out_ptr*``) left out."""
        sig = self.triton_meta.get("signature")
        if not isinstance(sig, dict):
            return []
        return [t.lstrip("*") for name, t in sig.items()
                if isinstance(t, str) and t.startswith("*") and not str(name).startswith("out_ptr")]

    @property
    def compute_type(self) -> str | None:
        """The compute type its FLOP/s is measured against (``peaks.compute_type``)."""
        allow_tf32 = bool((self.inductor_meta.get("config_args") or {}).get("ALLOW_TF32"))
        return compute_type(self.input_types, allow_tf32=allow_tf32)

    @property
    def compile_config(self) -> dict[str, Any]:
        """A template's fixed launch config (its block sizes, warps, stages)."""
        cfg = dict(self.inductor_meta.get("config_args") or {})
        for k in ("num_warps", "num_stages"):
            if k in self.decorator_args:
                cfg[k] = self.decorator_args[k]
        return cfg

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("triton_meta")  # large, and not JSON-safe (tuple keys)
        d.pop("text")
        d["size_hints"] = _jsonable(self.size_hints)
        d["inductor_meta"] = _jsonable(self.inductor_meta)
        d["decorator_args"] = _jsonable(self.decorator_args)
        d["tuning_flags"] = self.tuning_flags
        d["compute_type"] = self.compute_type
        return d


def _jsonable(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set, frozenset)):
        return [_jsonable(x) for x in v]
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return repr(v)


# --- evaluating the decorator's arguments without running the file ----------------------


class _Unknown(str):
    """An expression the reader does not evaluate; kept as its source text."""


def _value(node: ast.expr) -> Any:
    """Literals, dict/list/set/tuple displays, ``set()``, ``Name(k=v)`` calls (as dicts with
    a ``_type`` key: ``DeviceProperties``), ``Enum.MEMBER`` attributes (as text)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Dict):
        return {_key(k): _value(v) for k, v in zip(node.keys, node.values, strict=True) if k is not None}
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_value(e) for e in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.Set):
        return {_hashable(_value(e)) for e in node.elts}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _value(node.operand)
        return -v if isinstance(v, (int, float)) else _Unknown(ast.unparse(node))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id == "set" and not node.args and not node.keywords:
            return set()
        if not node.args:
            kwargs = {k.arg: _value(k.value) for k in node.keywords if k.arg}
            return {"_type": node.func.id, **kwargs}
    if isinstance(node, ast.Attribute):
        return ast.unparse(node)
    return _Unknown(ast.unparse(node))


def _key(node: ast.expr) -> Any:
    return _hashable(_value(node))


def _hashable(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, (set, frozenset)):
        return frozenset(v)
    if isinstance(v, dict):
        return _Unknown(repr(v))
    return v


# --- finding the kernel ------------------------------------------------------------------


def _heuristics_decorator(fn: ast.FunctionDef) -> ast.Call | None:
    for dec in fn.decorator_list:
        if (
            isinstance(dec, ast.Call)
            and isinstance(dec.func, ast.Attribute)
            and isinstance(dec.func.value, ast.Name)
            and dec.func.value.id == "triton_heuristics"
        ):
            return dec
    return None


def _is_jit(fn: ast.FunctionDef) -> bool:
    return any(
        isinstance(d, ast.Attribute) and d.attr == "jit" and ast.unparse(d.value) == "triton"
        for d in fn.decorator_list
    )


def _not_a_kernel_file(path: str, text: str, tree: ast.Module) -> UsageError:
    if is_compiled_module(text) and "# kernel path:" in text:
        return UsageError(
            f"{path}: this is a compiled module, not a kernel file{_its_kernels(text)}; pass one of the "
            "files its '# kernel path:' comments name, or a run directory and a kernel name"
        )
    if is_compiled_module(text):  # a CPU module: its C++ kernels are in it, no Triton kernel file
        return UsageError(
            f"{path}: this is a compiled module without Triton kernels (its kernels are C++, compiled "
            "into it): `kernel` benchmarks Inductor's Triton kernels; `breakdown` times these"
        )
    jitted = [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and _is_jit(n)]
    if jitted:
        return UsageError(
            f"{path}: {', '.join(jitted)} is a Triton kernel but not one Inductor generated "
            "(no @triton_heuristics.<heuristic>(...) decorator)"
        )
    return UsageError(
        f"{path}: not an Inductor Triton kernel file (no @triton_heuristics.<heuristic>(...) "
        "@triton.jit function)"
    )


def _its_kernels(text: str) -> str:
    """``; its 2 Triton kernels: triton_poi_fused_add_0 (Triton pointwise), ...``: a compiled
    module's Triton kernels, each with its category from its source's heuristic."""
    kernels = [(name, info) for name, info in parse_module(text).kernels.items() if info.kind == "triton"]
    if not kernels:
        return ""
    listed = ", ".join(f"{name} ({label(classify(name, info))})" for name, info in kernels)
    return f"; its {len(kernels)} Triton kernel{'s' if len(kernels) > 1 else ''}: {listed}"


def _a_count(num_gb: float | None) -> float | None:
    """Inductor's byte estimate where it is one: a combo (foreach) kernel's harness on an H200
    (torch 2.11) said ``num_gb = 0`` for lists of 4M floats, whose kernel moves 100 MB; zero is
    no count, and the kernel's buffers are counted instead (``core/roofline.py``)."""
    return num_gb if num_gb is not None and num_gb > 0 else None


def _num_gb_from_main(tree: ast.Module) -> float | None:
    """``num_gb = <number>`` in the harness's ``__main__`` block (older files only say it there)."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "num_gb"
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, (int, float))
        ):
            return float(node.value.value)
    return None


def _device_of(triton_meta: dict[str, Any]) -> str | None:
    dev = triton_meta.get("device")
    if isinstance(dev, dict) and isinstance(dev.get("type"), str):
        return dev["type"]
    dtype = triton_meta.get("device_type")  # torch < 2.3 wrote the device as an index
    return dtype if isinstance(dtype, str) else None


def _number(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def parse_kernel_source(text: str, path: str = "<kernel>") -> KernelFile:
    """Parse a kernel file's text; UsageError (one line) when it is not one."""
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        raise UsageError(f"{path}: not a Python file (line {e.lineno}: {e.msg})") from None
    kernels = [
        (n, dec)
        for n in tree.body
        if isinstance(n, ast.FunctionDef) and _is_jit(n) and (dec := _heuristics_decorator(n))
    ]
    if not kernels:
        raise _not_a_kernel_file(path, text, tree)
    if len(kernels) > 1:
        names = ", ".join(n.name for n, _ in kernels)
        raise UsageError(f"{path}: holds {len(kernels)} Inductor kernels ({names}); "
                         "a kernel file holds one")
    fn, dec = kernels[0]
    args = {k.arg: _value(k.value) for k in dec.keywords if k.arg}
    triton_meta = args.pop("triton_meta", None) or {}
    inductor_meta = args.pop("inductor_meta", None) or {}
    if not isinstance(triton_meta, dict) or not isinstance(inductor_meta, dict):
        raise UsageError(f"{path}: the @triton_heuristics decorator's triton_meta / "
                         "inductor_meta are not dict literals")
    heuristic = dec.func.attr  # type: ignore[attr-defined]
    num_gb = _number(inductor_meta.get("kernel_num_gb"))
    flop = _number(inductor_meta.get("kernel_flop"))
    return KernelFile(
        path=path,
        name=fn.name,
        heuristic=heuristic,
        category=classify(fn.name, KernelInfo(name=fn.name, kind="triton", heuristic=heuristic)),
        device=_device_of(triton_meta),
        size_hints=args.pop("size_hints", None),
        triton_meta=triton_meta,
        inductor_meta=inductor_meta,
        decorator_args={k: v for k, v in args.items() if k != "filename"},
        functions=[n.name for n in tree.body if isinstance(n, ast.FunctionDef)],
        num_gb=_a_count(num_gb if num_gb is not None else _num_gb_from_main(tree)),
        flop=int(flop) if flop else None,
        text=text,
    )


def read_kernel_file(path: str | Path) -> KernelFile:
    p = Path(path)
    if not p.exists():
        raise UsageError(f"{p}: no such file")
    if p.is_dir():
        raise UsageError(f"{p}: is a directory without a breakdown.json")
    if not p.is_file():  # never opened: a FIFO would wait for a writer, /dev/zero fill memory
        raise UsageError(f"{p}: not a regular file (a device, FIFO or socket): a kernel file is a .py file")
    try:
        data = p.read_bytes()
    except OSError as e:
        raise UsageError(f"{p}: not readable as text ({e})") from None
    return kernel_from_bytes(data, str(p))


def run_kernel_file(run_dir: Path, rel: str) -> KernelFile:
    """A kernel file the run wrote, as checked (``rundir.run_file``) and parsed from the same
    bytes, or ResultError."""
    path, data = run_file(run_dir, rel)
    return kernel_from_bytes(data, str(path))


def kernel_from_bytes(data: bytes, path: str) -> KernelFile:
    """A kernel file's bytes, as read once (and checked, for a run's file), parsed."""
    try:
        text = data.decode()
    except UnicodeDecodeError as e:
        raise UsageError(f"{path}: not readable as text ({e})") from None
    return parse_kernel_source(text, path)


def check_name(kf: KernelFile, wanted: str | None) -> None:
    if wanted and wanted != kf.name:
        raise UsageError(f"{kf.path} holds kernel {kf.name}, not {wanted}")


def file_says(kf: KernelFile) -> str:
    """What a refused kernel file tells without running anything: its category, size hints,
    Inductor's bytes and FLOPs a launch, a template's fixed config, and the tuning switches
    it was generated with (the candidate configs of the others are built by Inductor's
    heuristics as the file loads, from these)."""
    parts = [label(kf.category)]
    hints = kf.size_hints
    if isinstance(hints, dict) and hints:
        parts.append("size hints " + " ".join(f"{k}={v}" for k, v in hints.items()))
    elif isinstance(hints, (list, tuple)) and hints:
        parts.append("size hints " + "x".join(str(v) for v in hints))
    if kf.num_gb is not None:
        parts.append(f"{with_prefix(kf.num_gb * 1e9, 'B', 4)} a launch (Inductor's estimate)")
    if kf.flop:
        parts.append(f"{with_prefix(kf.flop, 'FLOP', 4)} a launch")
    if kf.is_template and kf.compile_config:
        parts.append("its config fixed at compile time: "
                     + " ".join(f"{k}={v}" for k, v in kf.compile_config.items()))
    on = [k for k, v in kf.tuning_flags.items() if v]
    parts.append(f"generated with {' and '.join(on)} on" if on else "generated with no autotuning switch on")
    return f"the file says: {', '.join(parts)}"


def no_harness_reason(kf: KernelFile) -> str | None:
    """Why the file's own harness cannot launch the kernel (None: it can)."""
    missing = [f for f in HARNESS if f not in kf.functions]
    if not missing:
        return None
    if kf.is_combo:
        return (f"{kf.name} is a foreach/combo kernel without a benchmark harness "
                f"({', '.join(missing)} missing): Inductor writes one only with "
                "torch._inductor.config.benchmark_combo_kernel = True, which no environment "
                "variable sets (breakdown's capture does not)")
    return (f"{kf.name} has no benchmark harness ({', '.join(missing)} missing); Inductor "
            "writes one when compiling with TORCHINDUCTOR_BENCHMARK_KERNEL=1")


def require_benchmarkable(kf: KernelFile) -> None:
    """The file can be loaded and launched by its own harness."""
    why = no_harness_reason(kf)
    if why:
        raise UsageError(f"{kf.path}: {why}; {file_says(kf)}")


def require_timeable(kf: KernelFile) -> None:
    """The kernel was generated for a device whose Triton kernels this tool times (CUDA)."""
    if kf.device in kernel_timing_backends():
        return
    where = {
        HOST_BACKEND.name: "the CPU (Inductor's Triton CPU backend)",
        None: "an unknown device (triton_meta names none)",
    }.get(kf.device, f"device {kf.device!r}")
    raise DeviceError(f"{kf.path}: {kf.name} was generated for {where}; "
                      "inductor-bench kernel benchmarks CUDA kernels")
