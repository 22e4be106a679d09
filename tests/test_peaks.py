"""The peak table, user overrides, and the order in which a report's peak is chosen."""

from __future__ import annotations

import json

import pytest

from inductor_bench.core.errors import UsageError
from inductor_bench.core.peaks import (
    FP8,
    FP16,
    FP32,
    INT8,
    MEASURED,
    TF32,
    UNKNOWN,
    Peak,
    compute_type,
    load_peaks_file,
    lookup,
    needs_measurement,
    resolve,
)


@pytest.mark.parametrize("name,gbps,tflops,part", [
    ("NVIDIA H100 80GB HBM3", 3350.0, 989.0, "H100 SXM"),
    ("NVIDIA H100 PCIe", 2000.0, 756.0, "H100 PCIe"),
    ("NVIDIA H100 NVL", 3900.0, 835.0, "H100 NVL"),
    ("NVIDIA H200", 4800.0, 989.0, "H200"),
    ("NVIDIA A100-SXM4-80GB", 2039.0, 312.0, "A100 SXM 80GB"),
    ("NVIDIA A100-SXM4-40GB", 1555.0, 312.0, "A100 40GB"),
    ("NVIDIA A10", 600.0, 125.0, "A10"),
    ("NVIDIA L4", 300.0, 121.0, "L4"),
    ("NVIDIA L40S", 864.0, 362.0, "L40S"),
    ("NVIDIA L40", 864.0, 181.0, "L40"),
])
def test_datasheet(name, gbps, tflops, part):
    p = lookup(name)
    assert (p.gbps, p.tflops, p.source) == (gbps, tflops, f"datasheet: {part}")
    assert p.flops_for(FP16) == tflops


# (fp32 on FMA units, tf32, fp16/bf16, fp8) dense TFLOP/s from the vendors' datasheets; the
# tensor figures are the datasheets' sparse ones halved where only those are printed.
@pytest.mark.parametrize("name,fp32,tf32,fp16,fp8", [
    ("NVIDIA H100 80GB HBM3", 67.0, 495.0, 989.0, 1979.0),
    ("NVIDIA H100 PCIe", 51.0, 378.0, 756.0, 1513.0),
    ("NVIDIA H200", 67.0, 495.0, 989.0, 1979.0),
    ("NVIDIA B200", 75.0, 1125.0, 2250.0, 4500.0),
    ("NVIDIA A100-SXM4-80GB", 19.5, 156.0, 312.0, None),  # no fp8 on Ampere
    ("NVIDIA L4", 30.3, 60.0, 121.0, 242.0),
    ("Tesla T4", 8.1, None, 65.0, None),  # no TF32 before Ampere
    ("AMD Instinct MI300X", 163.4, 653.7, 1307.0, 2615.0),
])
def test_datasheet_peaks_per_compute_type(name, fp32, tf32, fp16, fp8):
    p = lookup(name)
    assert [p.flops_for(c) for c in (FP32, TF32, FP16, FP8)] == [fp32, tf32, fp16, fp8]
    assert p.flops_for(None) is None


@pytest.mark.parametrize("types,allow_tf32,expected", [
    (["fp32", "fp32"], False, FP32),
    (["fp32", "fp32"], True, TF32),
    (["bf16", "bf16"], False, FP16),
    (["fp16", "fp16"], True, FP16),  # ALLOW_TF32 only matters to fp32 inputs
    (["fp8e4nv", "fp8e4nv"], False, FP8),
    (["fp8e5", "fp8e4nv"], False, FP8),
    (["fp8e4nv", "bf16"], False, FP16),  # mixed: the wider input sets the rate
    (["bf16", "fp32"], False, FP32),
    (["fp64", "fp64"], False, None),  # no fp64 peak quoted
    (["i8", "i8"], False, INT8),  # an int8 GEMM's operands (Triton's *i8; C++'s int8_t, uint8_t)
    (["*u8", "*i8", "*fp32", "*fp32"], False, INT8),  # whatever float scales follow
    (["uint8_t", "int8_t", "float"], False, INT8),
    (["fp32", "i8", "i8"], False, FP32),  # not its operands: a float kernel
    (["i8", "fp32"], False, FP32),
    (["fp32", "i64"], False, FP32),  # integer index tensors do not count
    ([], False, None),
])
def test_compute_type(types, allow_tf32, expected):
    assert compute_type(types, allow_tf32=allow_tf32) == expected


@pytest.mark.parametrize("name", ["NVIDIA GeForce GTX 1080", "NVIDIA A1000", "NVIDIA L4X", ""])
def test_unknown_devices(name):
    assert lookup(name) is None


def test_user_table_wins_and_matches_by_name_or_regex():
    table = {"NVIDIA H100 80GB HBM3": {"gbps": 3000.0, "tflops": None},
             "nvidia rtx 6000 .*": {"gbps": 960.0, "tflops": 364.0}}
    assert lookup("NVIDIA H100 80GB HBM3", table, "my.json") == Peak(
        3000.0, None, "my.json (NVIDIA H100 80GB HBM3)")
    fp8 = {"X": {"gbps": None, "tflops": 100.0, "tflops_fp8": 200.0}}
    assert lookup("X", fp8).flops_for(FP8) == 200.0
    assert lookup("X", fp8).flops_for(FP32) is None
    assert lookup("NVIDIA RTX 6000 Ada Generation", table) == Peak(
        960.0, 364.0, "peaks file (nvidia rtx 6000 .*)")
    assert lookup("NVIDIA L4", table).source == "datasheet: L4"
    assert lookup("NVIDIA L4", {"[": {"gbps": 1.0, "tflops": None}}).source == "datasheet: L4"


def test_resolve_order():
    h100 = "NVIDIA H100 80GB HBM3"
    assert resolve(h100, override_gbps=2500.0) == Peak(2500.0, 989.0, "--peak-gbps", 67.0,
                                                       495.0, 1979.0)
    assert resolve(h100, measured_gbps=2900.0) == Peak(3350.0, 989.0, "datasheet: H100 SXM",
                                                       67.0, 495.0, 1979.0)
    assert resolve("Some GPU", measured_gbps=2900.0) == Peak(2900.0, None, MEASURED)
    assert resolve("Some GPU") == UNKNOWN
    only_flops = {"Some GPU": {"gbps": None, "tflops": 100.0}}
    assert resolve("Some GPU", user_table=only_flops, measured_gbps=500.0) == Peak(
        500.0, 100.0, MEASURED)
    with pytest.raises(UsageError, match="--peak-gbps must be positive"):
        resolve(h100, override_gbps=0.0)


def test_needs_measurement():
    assert not needs_measurement("NVIDIA L4", override_gbps=None, user_table=None)
    assert needs_measurement("Some GPU", override_gbps=None, user_table=None)
    assert not needs_measurement("Some GPU", override_gbps=100.0, user_table=None)
    assert not needs_measurement("Some GPU", override_gbps=None,
                                 user_table={"Some GPU": {"gbps": 1.0, "tflops": None}})
    assert needs_measurement("Some GPU", override_gbps=None,
                             user_table={"Some GPU": {"gbps": None, "tflops": 1.0}})


def test_load_peaks_file(tmp_path):
    f = tmp_path / "peaks.json"
    f.write_text(json.dumps({"NVIDIA L4": {"gbps": 280}, "X.*": {"tflops": 50.5}}))
    none = {"tflops_fp32": None, "tflops_tf32": None, "tflops_fp8": None}
    assert load_peaks_file(f) == {"NVIDIA L4": {"gbps": 280.0, "tflops": None, **none},
                                  "X.*": {"gbps": None, "tflops": 50.5, **none}}
    f.write_text(json.dumps({"Y": {"tflops_tf32": 400, "tflops_fp8": 1600}}))
    assert load_peaks_file(f) == {"Y": {"gbps": None, "tflops": None, "tflops_fp32": None,
                                        "tflops_tf32": 400.0, "tflops_fp8": 1600.0}}


@pytest.mark.parametrize("content,message", [
    (None, "no such file"),
    ("{", "not readable as JSON"),
    ("[]", "expected an object of device name"),
    ("{}", "expected an object of device name"),
    ('{"A": 3}', r"'A': expected \{\"gbps\""),
    ('{"A": {"gbps": -1}}', "'A': gbps must be a positive number, not -1"),
    ('{"A": {"gbps": true}}', "'A': gbps must be a positive number, not True"),
    # Python's json reads NaN and Infinity: a peak of nan GB/s and a % peak of nan, where refused
    ('{"A": {"gbps": NaN}}', "'A': gbps must be a positive number, not nan"),
    ('{"A": {"tflops": Infinity}}', "'A': tflops must be a positive number, not inf"),
    ('{"A": {"bw": 1}}', r"'A': unknown field\(s\) bw"),
    ('{"A": {}}', "'A': give gbps, tflops or both"),
])
def test_bad_peaks_files(tmp_path, content, message):
    f = tmp_path / "peaks.json"
    if content is not None:
        f.write_text(content)
    with pytest.raises(UsageError, match=message):
        load_peaks_file(f)
