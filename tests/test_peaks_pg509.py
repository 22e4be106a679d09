"""The parts HolisticTraceAnalysis's GPU traces name, as the peak table reads them.

The A100 that HolisticTraceAnalysis's traces name "NVIDIA A100-PG509-200" has the datasheet
peaks of an A100 SXM4 40GB: NVIDIA's driver README lists that name under PCI device 20B0, the
A100-SXM4-40GB's, and the traces' deviceProperties agree (108 SMs, compute 8.0, 40 GB class).
Before, analyze's GEMMs by shape on such a trace read "-" under % peak and "not in the table"."""

from __future__ import annotations

import gzip
import json

import pytest

from inductor_bench.core.analyze import analyze_file
from inductor_bench.core.peaks import FP16, FP32, TF32, lookup
from inductor_bench.core.typical_step import steady_shaped_ops
from inductor_bench.render.analyze import render_analyze

from .conftest import FIXTURES

PG509 = "NVIDIA A100-PG509-200"
# HTA's NCCL trace (real, A100-PG509-200): its deviceProperties as recorded
NCCL = FIXTURES / "hta" / "nccl_parser_config_nccl_data.json.gz"
# HTA's rank-0 trace (real, A100-SXM4-80GB) with GEMMs by shape on device 0
A100 = FIXTURES / "hta" / "negative_queue_length_values_check_rank0.json.gz"


def test_the_pg509_board_has_the_a100_sxm4_40gb_datasheet_figures():
    p = lookup(PG509)
    assert p is not None
    assert (p.gbps, p.flops_for(FP32), p.flops_for(TF32), p.flops_for(FP16)) == (1555.0, 19.5, 156.0, 312.0)
    assert p.source == "datasheet: A100 SXM 40GB (PG509-200)"
    forty = lookup("NVIDIA A100-SXM4-40GB")
    assert [forty.flops_for(c) for c in (FP32, TF32, FP16)] == [p.flops_for(c) for c in (FP32, TF32, FP16)]
    assert forty.gbps == p.gbps


def test_the_recorded_pg509_properties_are_an_a100_40gb():
    with gzip.open(NCCL) as f:
        props = json.load(f)["deviceProperties"]
    assert {(d["name"], d["numSms"], d["computeMajor"], d["computeMinor"]) for d in props} == {(PG509, 108, 8, 0)}
    assert {round(d["totalGlobalMem"] / 1e9, 1) for d in props} == {42.3}  # 40 GB HBM2 less ECC, as the 40GB parts
    assert analyze_file(NCCL).device_names["0"] == PG509


def test_gemms_by_shape_on_a_pg509_get_their_percent_of_peak(tmp_path):
    """HTA's A100 trace with every device renamed as HTA's PG509 traces name theirs: every row
    has a % peak, its TFLOP/s over 156 (tf32, an s1688 tensor-op GEMM) or 19.5 (a SIMT sgemm)."""
    with gzip.open(A100) as f:
        doc = json.load(f)
    doc["deviceProperties"] = [p | {"name": PG509, "totalGlobalMem": 42297524224} for p in doc["deviceProperties"]]
    path = tmp_path / "pg509.json"
    path.write_text(json.dumps(doc))
    r = analyze_file(path)
    rows = steady_shaped_ops(r)
    assert len(rows) == 5
    for t in rows:
        peak = 156.0 if "s1688" in t.row.kernel else 19.5
        assert t.pct == pytest.approx(100 * t.tflops / peak)
    text = " ".join(render_analyze(r, "text", top=5).split())
    assert "Peaks used: fp32 19.5 TFLOP/s, tf32 156 TFLOP/s (datasheet: A100 SXM 40GB (PG509-200))." in text
    assert "A100-PG509-200, not in the table" not in text


@pytest.mark.parametrize("name,part", [("Tesla V100-SXM2-16GB", "V100 SXM2"), ("Tesla T4", "T4")])
def test_a_part_label_names_no_compute_type(name, part):
    """Every figure a report shows names its compute type (fp32 15.7 TFLOP/s, fp16/bf16 125):
    the V100's and T4's labels said "(fp16)" beside their fp32 figures, as in HTA's V100 trace's
    'Peaks used: fp32 15.7 TFLOP/s (datasheet: V100 SXM2 (fp16))'."""
    assert lookup(name).source == f"datasheet: {part}"


def test_the_v100_peaks_note_reads_its_fp32_figure_by_the_part_alone(tmp_path):
    """HTA's A100 trace renamed as HTA's V100 trace names its GPU: the SIMT sgemm rows are of
    the V100's fp32 peak, the tensor-op ones of none (no TF32 on Volta)."""
    with gzip.open(A100) as f:
        doc = json.load(f)
    doc["deviceProperties"] = [p | {"name": "Tesla V100-SXM2-16GB"} for p in doc["deviceProperties"]]
    path = tmp_path / "v100.json"
    path.write_text(json.dumps(doc))
    r = analyze_file(path)
    assert {t.pct is None for t in steady_shaped_ops(r)} == {True, False}
    text = " ".join(render_analyze(r, "text", top=5).split())
    assert "Peaks used: fp32 15.7 TFLOP/s (datasheet: V100 SXM2)." in text
