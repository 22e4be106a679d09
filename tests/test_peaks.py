"""The peak table, user overrides, and the order in which a report's peak is chosen."""

from __future__ import annotations

import json

import pytest

from inductor_bench.core.errors import UsageError
from inductor_bench.core.peaks import (
    MEASURED,
    UNKNOWN,
    Peak,
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
    assert lookup(name) == Peak(gbps, tflops, f"datasheet: {part}")


@pytest.mark.parametrize("name", ["NVIDIA GeForce GTX 1080", "NVIDIA A1000", "NVIDIA L4X", ""])
def test_unknown_devices(name):
    assert lookup(name) is None


def test_user_table_wins_and_matches_by_name_or_regex():
    table = {"NVIDIA H100 80GB HBM3": {"gbps": 3000.0, "tflops": None},
             "nvidia rtx 6000 .*": {"gbps": 960.0, "tflops": 364.0}}
    assert lookup("NVIDIA H100 80GB HBM3", table, "my.json") == Peak(
        3000.0, None, "my.json (NVIDIA H100 80GB HBM3)")
    assert lookup("NVIDIA RTX 6000 Ada Generation", table) == Peak(
        960.0, 364.0, "peaks file (nvidia rtx 6000 .*)")
    assert lookup("NVIDIA L4", table).source == "datasheet: L4"
    assert lookup("NVIDIA L4", {"[": {"gbps": 1.0, "tflops": None}}).source == "datasheet: L4"


def test_resolve_order():
    h100 = "NVIDIA H100 80GB HBM3"
    assert resolve(h100, override_gbps=2500.0) == Peak(2500.0, 989.0, "--peak-gbps")
    assert resolve(h100, measured_gbps=2900.0) == Peak(3350.0, 989.0, "datasheet: H100 SXM")
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
    assert load_peaks_file(f) == {"NVIDIA L4": {"gbps": 280.0, "tflops": None},
                                  "X.*": {"gbps": None, "tflops": 50.5}}


@pytest.mark.parametrize("content,message", [
    (None, "no such file"),
    ("{", "not readable as JSON"),
    ("[]", "expected an object of device name"),
    ("{}", "expected an object of device name"),
    ('{"A": 3}', r"'A': expected \{\"gbps\""),
    ('{"A": {"gbps": -1}}', "'A': gbps must be a positive number, not -1"),
    ('{"A": {"gbps": true}}', "'A': gbps must be a positive number, not True"),
    ('{"A": {"bw": 1}}', r"'A': unknown field\(s\) bw"),
    ('{"A": {}}', "'A': give gbps, tflops or both"),
])
def test_bad_peaks_files(tmp_path, content, message):
    f = tmp_path / "peaks.json"
    if content is not None:
        f.write_text(content)
    with pytest.raises(UsageError, match=message):
        load_peaks_file(f)
