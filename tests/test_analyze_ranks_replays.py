"""CUDA-graph replays per rank: each rank's line gives its typical step's graph launches, the
device events they replayed, their time and their share of its device's kernel time, as one
trace's header does (docs/analyze.md), in every format and in the JSON. Checked on HTA's real
A100 rank-0 trace of a torch.compile training run with CUDA graphs, beside its real NCCL trace
(no graph launches) as the other rank, against the raw JSON."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from inductor_bench.core.analyze_ranks import analyze_ranks
from inductor_bench.render.ranks import render_ranks

from .test_graph_replays import HTA, RANK0, _raw

OTHER = HTA / "nccl_parser_config_nccl_data.json.gz"


def _as_rank(src: Path, dst: Path, rank: int) -> Path:
    doc = json.loads(gzip.decompress(src.read_bytes()))
    doc["distributedInfo"] = {"rank": rank, "world_size": 2}
    dst.write_text(json.dumps(doc))
    return dst


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    folder = tmp_path_factory.mktemp("replays")
    return analyze_ranks([_as_rank(RANK0, folder / "rank0.json", 0), _as_rank(OTHER, folder / "rank1.json", 1)],
                         workers=1)


def test_a_rank_s_replays_per_step_against_the_raw_trace(ranks):
    names, raw = _raw(RANK0)
    zero, one = ranks.ranks
    assert [s.step for s in zero.steps] == names and zero.steady_indices() == [0, 1, 2, 3, 4]
    (g,) = zero.graph_replays
    assert g.device == zero.device == "0"
    assert g.launches == [len(raw[n][0]) for n in names] == [14] * 5
    assert g.events == [raw[n][1] for n in names] == [69] * 5
    assert g.ms == pytest.approx([raw[n][2] / 1000 for n in names], abs=1e-9)
    assert one.graph_replays == []
    doc = json.loads(ranks.to_json())
    assert doc["ranks"][0]["graph_replays"] == [{"device": "0", "launches": g.launches, "events": g.events,
                                                 "ms": [round(ms, 6) for ms in g.ms]}]  # JSON: to the ns
    assert doc["ranks"][1]["graph_replays"] == []


@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
def test_a_rank_s_line_gives_its_steady_mean_step_s_replays(ranks, fmt):
    names, raw = _raw(RANK0)
    ms = sum(raw[n][2] for n in names) / len(names) / 1000
    kernel = sum(raw[n][3] for n in names) / len(names) / 1000
    assert (round(ms, 3), round(100 * ms / kernel, 1)) == (21.093, 27.0)
    out = render_ranks(ranks, fmt)
    text = re.sub(r"<[^>]*>", "", out) if fmt == "html" else out
    assert text.count("CUDA-graph replays") == 1
    assert ("rank 0: CUDA-graph replays on device 0 (steady mean step): 14 graph launches replaying 69 "
            "device events, 21.093 ms, 27.0% of its kernel time") in text
