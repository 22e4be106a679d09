"""A run's breakdown.json given where its directory belongs is named as what it is. JSON parses
as Python, so it read 'not an Inductor Triton kernel file'. On the run recorded on an H200
(tests/fixtures/README.md, runs/cuda_h200_transformer_train)."""

from __future__ import annotations

from inductor_bench.cli import main

from .conftest import FIXTURES

RUN = FIXTURES / "runs" / "cuda_h200_transformer_train"


def test_a_runs_breakdown_json_points_to_its_directory(capsys):
    result = RUN / "breakdown.json"
    try:
        main(["kernel", str(result), "triton_poi_fused_gelu_view_2"])
        code = 0
    except SystemExit as e:
        code = e.code
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert err.strip() == (f"inductor-bench: error: {result} is a run's result, not a kernel file: name "
                           f"its directory, inductor-bench kernel {RUN} KERNEL_NAME")
