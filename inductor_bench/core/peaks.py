"""Device peaks: memory bandwidth (GB/s) and dense bf16/fp16 tensor throughput (TFLOP/s).

Where a number comes from, in order: ``--peak-gbps``; a user peaks file (``--peaks-file``);
the datasheet table below; a measured device-to-device copy on the device itself (run by
the kernel worker when nothing else knows the device). Every figure a report shows says
which of these it came from.

A peaks file is JSON: ``{"<device name or regex>": {"gbps": 3350, "tflops": 989}, ...}``.
A key matches a device whose name (as ``torch.cuda.get_device_name()`` gives it) equals it,
or that the key, read as a case-insensitive regular expression, matches in full.

Pure Python; the measurement itself is ``runner/device.py``'s ``measure_copy_gbps``.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .errors import UsageError

# (full-match regex on the device name, GB/s, dense bf16/fp16 TFLOP/s or None, which part).
# Vendor datasheet figures: HBM/GDDR bandwidth, tensor-core throughput without sparsity.
DATASHEET: tuple[tuple[str, float, float | None, str], ...] = (
    (r"NVIDIA B200", 8000.0, 2250.0, "B200"),
    (r"NVIDIA H200(?: NVL)?", 4800.0, 989.0, "H200"),
    (r"NVIDIA H100 NVL", 3900.0, 835.0, "H100 NVL"),
    (r"NVIDIA H100 PCIe", 2000.0, 756.0, "H100 PCIe"),
    (r"NVIDIA H100(?: 80GB HBM3)?", 3350.0, 989.0, "H100 SXM"),
    (r"NVIDIA A100-SXM4-80GB", 2039.0, 312.0, "A100 SXM 80GB"),
    (r"NVIDIA A100 80GB PCIe", 1935.0, 312.0, "A100 PCIe 80GB"),
    (r"NVIDIA A100-(?:SXM4|PCIE)-40GB", 1555.0, 312.0, "A100 40GB"),
    (r"NVIDIA L40S", 864.0, 362.0, "L40S"),
    (r"NVIDIA L40", 864.0, 181.0, "L40"),
    (r"NVIDIA L4", 300.0, 121.0, "L4"),
    (r"NVIDIA A10", 600.0, 125.0, "A10"),
    (r"Tesla V100-SXM2-(?:16|32)GB", 900.0, 125.0, "V100 SXM2 (fp16)"),
    (r"Tesla T4", 320.0, 65.0, "T4 (fp16)"),
    (r"NVIDIA GeForce RTX 4090", 1008.0, 165.0, "RTX 4090"),
    (r"NVIDIA GeForce RTX 3090", 936.0, 71.0, "RTX 3090"),
    (r"AMD Instinct MI300X", 5300.0, 1307.0, "MI300X"),
)

MEASURED = "measured: device-to-device copy"


@dataclass(frozen=True)
class Peak:
    gbps: float | None
    tflops: float | None
    source: str  # where the numbers come from, shown next to "% of peak"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
        raise UsageError(f"{where}: {field} must be a positive number, not {v!r}")
    return float(v)


def load_peaks_file(path: str | Path) -> dict[str, dict[str, float | None]]:
    """Read a user peaks file; UsageError naming the problem when it is malformed."""
    p = Path(path)
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
        unknown = set(entry) - {"gbps", "tflops"}
        if unknown:
            raise UsageError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
        gbps, tflops = _number(entry, "gbps", where), _number(entry, "tflops", where)
        if gbps is None and tflops is None:
            raise UsageError(f"{where}: give gbps, tflops or both")
        table[key] = {"gbps": gbps, "tflops": tflops}
    return table


def lookup(name: str, user_table: dict[str, dict[str, float | None]] | None = None,
           user_source: str = "peaks file") -> Peak | None:
    """The user table's entry for the device, else the datasheet's, else None."""
    for key, entry in (user_table or {}).items():
        if _matches(key, name):
            return Peak(entry.get("gbps"), entry.get("tflops"), f"{user_source} ({key})")
    for pattern, gbps, tflops, part in DATASHEET:
        if _matches(pattern, name):
            return Peak(gbps, tflops, f"datasheet: {part}")
    return None


def resolve(name: str, *, override_gbps: float | None = None,
            user_table: dict[str, dict[str, float | None]] | None = None,
            measured_gbps: float | None = None, user_source: str = "peaks file") -> Peak:
    """The peak a report uses, with its source (see the module docstring for the order)."""
    known = lookup(name, user_table, user_source)
    if override_gbps is not None:
        if override_gbps <= 0:
            raise UsageError(f"--peak-gbps must be positive, not {override_gbps:g}")
        return Peak(override_gbps, known.tflops if known else None, "--peak-gbps")
    if known is not None and known.gbps is not None:
        return known
    if measured_gbps is not None:
        return Peak(measured_gbps, known.tflops if known else None, MEASURED)
    return known or UNKNOWN


def needs_measurement(name: str, *, override_gbps: float | None,
                      user_table: dict[str, dict[str, float | None]] | None) -> bool:
    """True when no option, file or table entry gives the device's bandwidth."""
    if override_gbps is not None:
        return False
    known = lookup(name, user_table)
    return known is None or known.gbps is None
