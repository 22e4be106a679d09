"""Device peaks: memory bandwidth (GB/s) and dense throughput (TFLOP/s) per compute type.

Where a number comes from, in order: ``--peak-gbps``; a user peaks file (``--peaks-file``);
the datasheet table below; a measured device-to-device copy on the device itself (run by
the kernel worker when nothing else knows the device). Every figure a report shows says
which of these it came from.

A peaks file is JSON: ``{"<device name or regex>": {"gbps": 3350, "tflops": 989}, ...}``
(``tflops``: dense fp16/bf16; optional ``tflops_fp32``, ``tflops_tf32``, ``tflops_fp8``).
A key matches a device whose name (as ``torch.cuda.get_device_name()`` gives it) equals it,
or that the key, read as a case-insensitive regular expression, matches in full.

A kernel's FLOP/s is compared with the peak of its compute type (``compute_type``): the
dtype of its inputs, and for fp32 GEMM templates whether they use TF32.

Pure Python; the measurement itself is ``runner/peaks_measure.py``'s ``device_bandwidth``.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

from .dtypes import int8_operands
from .errors import UsageError

# Compute types a FLOP peak is quoted for.
FP32 = "fp32"  # FMA units, no tensor cores
TF32 = "tf32"
FP16 = "fp16/bf16"
FP8 = "fp8"
INT8 = "int8"  # integer multiply-adds (``_int_mm``), counted as operations: TOP/s; measured only
COMPUTE_TYPES = (FP32, TF32, FP16, FP8, INT8)


class Row(NamedTuple):
    """One datasheet entry: dense throughput (no sparsity), TFLOP/s; None where the part has
    no such unit or the figure is not published."""

    pattern: str  # full-match regex on the device name
    gbps: float
    fp16: float | None  # tensor cores, fp16/bf16 inputs, fp32 accumulate
    part: str
    fp32: float | None = None
    tf32: float | None = None
    fp8: float | None = None


# Vendor datasheet figures: HBM/GDDR bandwidth; throughput without sparsity.
DATASHEET: tuple[Row, ...] = (
    Row(r"NVIDIA B200", 8000.0, 2250.0, "B200", fp32=75.0, tf32=1125.0, fp8=4500.0),
    Row(r"NVIDIA H200(?: NVL)?", 4800.0, 989.0, "H200", fp32=67.0, tf32=495.0, fp8=1979.0),
    Row(r"NVIDIA H100 NVL", 3900.0, 835.0, "H100 NVL", fp32=60.0, tf32=418.0, fp8=1670.0),
    Row(r"NVIDIA H100 PCIe", 2000.0, 756.0, "H100 PCIe", fp32=51.0, tf32=378.0, fp8=1513.0),
    Row(r"NVIDIA H100(?: 80GB HBM3)?", 3350.0, 989.0, "H100 SXM", fp32=67.0, tf32=495.0,
        fp8=1979.0),
    Row(r"NVIDIA A100-SXM4-80GB", 2039.0, 312.0, "A100 SXM 80GB", fp32=19.5, tf32=156.0),
    Row(r"NVIDIA A100 80GB PCIe", 1935.0, 312.0, "A100 PCIe 80GB", fp32=19.5, tf32=156.0),
    Row(r"NVIDIA A100-(?:SXM4|PCIE)-40GB", 1555.0, 312.0, "A100 40GB", fp32=19.5, tf32=156.0),
    # An A100 SXM4 40GB on an NVIDIA board: NVIDIA's driver README (open-gpu-kernel-modules,
    # README.md, "Compatible GPUs") lists "NVIDIA A100-PG509-200" as PCI ID 20B0 10DE 1450, the
    # device ID of "NVIDIA A100-SXM4-40GB" (20B0). Its figures are that part's in NVIDIA's A100
    # datasheet (nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf, A100 40GB SXM column);
    # HolisticTraceAnalysis's traces of it name 108 SMs, compute 8.0 and 42.3e9 bytes.
    Row(r"NVIDIA A100-PG509-200", 1555.0, 312.0, "A100 SXM 40GB (PG509-200)", fp32=19.5,
        tf32=156.0),
    Row(r"NVIDIA L40S", 864.0, 362.0, "L40S", fp32=91.6, tf32=183.0, fp8=733.0),
    Row(r"NVIDIA L40", 864.0, 181.0, "L40", fp32=90.5, tf32=90.5, fp8=362.0),
    Row(r"NVIDIA L4", 300.0, 121.0, "L4", fp32=30.3, tf32=60.0, fp8=242.0),
    Row(r"NVIDIA A10", 600.0, 125.0, "A10", fp32=31.2, tf32=62.5),
    Row(r"Tesla V100-SXM2-(?:16|32)GB", 900.0, 125.0, "V100 SXM2", fp32=15.7),
    Row(r"Tesla T4", 320.0, 65.0, "T4", fp32=8.1),
    Row(r"NVIDIA GeForce RTX 4090", 1008.0, 165.0, "RTX 4090", fp32=82.6, tf32=82.6),
    Row(r"NVIDIA GeForce RTX 3090", 936.0, 71.0, "RTX 3090", fp32=35.6, tf32=35.6),
    Row(r"AMD Instinct MI300X", 5300.0, 1307.0, "MI300X", fp32=163.4, tf32=653.7, fp8=2615.0),
)

MEASURED = "measured: device-to-device copy"


@dataclass(frozen=True)
class Peak:
    gbps: float | None
    tflops: float | None  # dense fp16/bf16 tensor throughput
    source: str  # where the numbers come from, shown next to "% of peak"
    tflops_fp32: float | None = None
    tflops_tf32: float | None = None
    tflops_fp8: float | None = None

    def flops_for(self, compute: str | None) -> float | None:
        """The TFLOP/s peak of a compute type (``COMPUTE_TYPES``); None when not known."""
        return {FP32: self.tflops_fp32, TF32: self.tflops_tf32, FP16: self.tflops,
                FP8: self.tflops_fp8}.get(compute or "")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# A peaks file's fields: Peak's, by the same names.
FILE_FIELDS = ("gbps", "tflops", "tflops_fp32", "tflops_tf32", "tflops_fp8")


UNKNOWN = Peak(None, None, "unknown")


def _matches(key: str, name: str) -> bool:
    if key == name:
        return True
    try:
        return re.fullmatch(key, name.strip(), re.IGNORECASE) is not None
    except re.error:
        return False


def _number(entry: dict[str, Any], field: str, where: str) -> float | None:
    v = entry.get(field)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        raise UsageError(f"{where}: {field} must be a positive number, not {v!r}")  # JSON's NaN too
    return float(v)


def load_peaks_file(path: str | Path) -> dict[str, dict[str, float | None]]:
    """Read a user peaks file; UsageError naming the problem when it is malformed."""
    p = Path(path)
    if p.exists() and not p.is_file():  # never opened: a FIFO would wait, /dev/zero fill memory
        raise UsageError(f"--peaks-file {p}: not a regular file (a directory, device, FIFO or socket)")
    try:
        data = json.loads(p.read_text())
    except FileNotFoundError:
        raise UsageError(f"--peaks-file {p}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise UsageError(f"--peaks-file {p}: not readable as JSON ({e})") from None
    if not isinstance(data, dict) or not data:
        raise UsageError(f"--peaks-file {p}: expected an object of device name -> "
                         '{"gbps": ..., "tflops": ...}')
    table: dict[str, dict[str, float | None]] = {}
    for key, entry in data.items():
        where = f"--peaks-file {p}, {key!r}"
        if not isinstance(entry, dict):
            raise UsageError(f'{where}: expected {{"gbps": ..., "tflops": ...}}')
        unknown = set(entry) - set(FILE_FIELDS)
        if unknown:
            raise UsageError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
        values = {f: _number(entry, f, where) for f in FILE_FIELDS}
        if all(v is None for v in values.values()):
            raise UsageError(f"{where}: give gbps, tflops or both")
        table[key] = values
    return table


def lookup(name: str, user_table: dict[str, dict[str, float | None]] | None = None,
           user_source: str = "peaks file") -> Peak | None:
    """The user table's entry for the device, else the datasheet's, else None."""
    for key, entry in (user_table or {}).items():
        if _matches(key, name):
            return Peak(entry.get("gbps"), entry.get("tflops"), f"{user_source} ({key})",
                        entry.get("tflops_fp32"), entry.get("tflops_tf32"),
                        entry.get("tflops_fp8"))
    for row in DATASHEET:
        if _matches(row.pattern, name):
            return Peak(row.gbps, row.fp16, f"datasheet: {row.part}", row.fp32, row.tf32, row.fp8)
    return None


def resolve(name: str, *, override_gbps: float | None = None,
            user_table: dict[str, dict[str, float | None]] | None = None,
            measured_gbps: float | None = None, user_source: str = "peaks file") -> Peak:
    """The peak a report uses, with its source (see the module docstring for the order)."""
    known = lookup(name, user_table, user_source)
    if override_gbps is not None:
        if override_gbps <= 0:
            raise UsageError(f"--peak-gbps must be positive, not {override_gbps:g}")
        return replace(known or UNKNOWN, gbps=override_gbps, source="--peak-gbps")
    if known is not None and known.gbps is not None:
        return known
    if measured_gbps is not None:
        return replace(known or UNKNOWN, gbps=measured_gbps, source=MEASURED)
    return known or UNKNOWN


def needs_measurement(name: str, *, override_gbps: float | None,
                      user_table: dict[str, dict[str, float | None]] | None) -> bool:
    """True when no option, file or table entry gives the device's bandwidth."""
    if override_gbps is not None:
        return False
    known = lookup(name, user_table)
    return known is None or known.gbps is None


# --- a kernel's compute type --------------------------------------------------------------

# Triton pointer element types (triton_meta's signature, ``*bf16``) -> compute type.
_TRITON_FLOAT = {"fp16": FP16, "bf16": FP16, "fp32": FP32}
_WIDTH = {FP8: 1, FP16: 2, TF32: 4, FP32: 4}


def compute_type(input_types: list[str], *, allow_tf32: bool = False) -> str | None:
    """The compute type whose peak a kernel's FLOP/s is measured against: int8 where its first
    two inputs are 8-bit integers (an int8 GEMM template's operands, whatever float scales
    follow); else that of its widest floating-point input (a mixed-precision GEMM runs at the
    wider type's rate), fp32 inputs with TF32 allowed counting as tf32. None when no input is a
    float type with a quoted peak (fp64, other integers)."""
    if int8_operands(input_types):
        return INT8
    return _float_compute_type(input_types, allow_tf32)


def _float_compute_type(input_types: list[str], allow_tf32: bool) -> str | None:
    types = set()
    for t in input_types:
        t = t.lstrip("*")
        kind = FP8 if t.startswith("fp8") else _TRITON_FLOAT.get(t)
        if kind is None and t.startswith(("fp", "bf")):
            return None  # fp64 and other float types: no peak quoted
        if kind is not None:
            types.add(TF32 if kind == FP32 and allow_tf32 else kind)
    return max(types, key=lambda k: (_WIDTH[k], k == FP32)) if types else None
