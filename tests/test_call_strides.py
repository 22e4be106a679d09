"""An extern call's input whose strides are not the contiguous ones of its size (a linear's
weight passed as a transposed view: ``reinterpret_tensor(w, (256, 512), (1, 256), 0)``) shows
them beside its shape (``256x512 (strides 1x256)``), wherever the shapes are shown and in the
JSON; and diff counts a change of strides alone as a change of shapes."""

from __future__ import annotations

import copy
import json
import re

import sympy

from inductor_bench import cli
from inductor_bench.core.result_json import result_json
from inductor_bench.core.results import BreakdownResult
from inductor_bench.core.sources import call_shapes
from inductor_bench.core.symbols import shapes_at
from inductor_bench.render.breakdown import render_breakdown
from inductor_bench.runner.sources import _strides, contiguous

from .conftest import ROOT

RUN = ROOT / "tests/fixtures/runs/cpu_mlp_train_stalled/breakdown.json"


def saved_before_strides() -> dict:
    """The recorded run's result as a version that recorded no input strides saved it (its
    ``breakdown.json`` holds them since: its re-analysis reads them back from its modules)."""
    data = json.loads(RUN.read_text())
    for g in data["graphs"]:
        for site in g.get("sites") or []:
            site["shapes"] = [s.split(" (strides ")[0] for s in site["shapes"]]
    return data


class Node:
    """An IR node as the lowering record reads one: its size and stride."""

    def __init__(self, size: list, stride: list) -> None:
        self.size, self.stride = size, stride

    def get_size(self) -> list:
        return self.size

    def get_stride(self) -> list:
        return self.stride


def test_strides_recorded_only_where_they_are_not_the_contiguous_ones():
    s = sympy.Symbol("s77", positive=True, integer=True)
    assert _strides(Node([64, 256], [256, 1])) == ""
    assert _strides(Node([256, 512], [1, 256])) == "1x256"  # a transposed 512x256 weight
    assert _strides(Node([8, 1, 16], [16, 99, 1])) == ""  # a dimension of 1 has any stride
    assert _strides(Node([2, 3, 4], [12, 1, 3])) == "12x1x3"
    assert _strides(Node([s, 16, 32], [512, 32, 1])) == ""
    assert _strides(Node([16, s], [s, 1])) == ""
    assert _strides(Node([s, 16], [1, s])) == "1xs77"
    assert contiguous([], []) and not contiguous([4, 4], [1, 4])

    class NoStride(Node):
        def get_stride(self) -> list:
            raise NotImplementedError

    assert _strides(NoStride([4], [1])) == ""


def test_a_calls_shapes_carry_its_strides_and_resolve_their_symbols():
    op = {"shapes": ["512", "64x256", "256x512"], "strides": ["", "", "1x256"]}
    assert call_shapes(op) == ["512", "64x256", "256x512 (strides 1x256)"]
    assert call_shapes({"shapes": ["4x4"]}) == ["4x4"]  # recorded before strides were
    assert shapes_at(["s77x512 (strides 1xs77)", "512"], {"s77": 256}) == ["256x512 (strides 1x256)", "512"]


def with_strides(data: dict, graph: int, index: int, strides: str) -> dict:
    """The run with the last input of one extern call given ``strides``."""
    out = copy.deepcopy(data)
    s = out["graphs"][graph]["sites"][index]
    s["shapes"][-1] += f" (strides {strides})"
    return out


def test_the_inputs_column_shows_them_in_every_format():
    data = with_strides(saved_before_strides(), 0, 1, "1x512")
    r = BreakdownResult.from_dict(copy.deepcopy(data))
    for form in ("text", "markdown", "html"):
        page = render_breakdown(r, form)
        assert "512, 64x512, 512x512 (strides 1x512)" in page, form
        assert re.search(r"512, 64x256, 256x512(?! \()", page), form  # #0: contiguous, nothing added
    assert json.loads(result_json(r))["graphs"][0]["sites"][1]["shapes"] == ["512", "64x512", "512x512 (strides 1x512)"]


def changed(tmp_path, capsys, base: dict, head: dict) -> dict[tuple[str, str], list[str]]:
    paths = []
    for name, d in (("base.json", base), ("head.json", head)):
        (tmp_path / name).write_text(json.dumps(d))
        paths.append(str(tmp_path / name))
    try:
        cli.main(["diff", *paths, "--format", "json"])
    except SystemExit as e:
        assert not e.code
    out = json.loads(capsys.readouterr().out)
    return {(k["graph"], k["name"]): k["shapes_changed"]
            for s in out["sections"] for k in s["kernels"] if k.get("shapes_changed")}


def test_diff_counts_a_change_of_strides_alone_as_shapes_changed(tmp_path, capsys):
    base = with_strides(saved_before_strides(), 0, 0, "1x256")  # fc1's weight, on both sides
    head = with_strides(base, 0, 1, "1x512")
    assert changed(tmp_path, capsys, base, head) == {("0-forward", "aten::addmm"): ["aten::addmm #1"]}


def test_no_change_where_one_side_recorded_no_strides_at_all(tmp_path, capsys):
    """A run saved before strides were recorded against one that has them: its transposed
    weights are no change of shapes."""
    old = saved_before_strides()
    new = with_strides(with_strides(old, 0, 0, "1x256"), 0, 1, "1x512")
    assert changed(tmp_path, capsys, old, new) == {}
    assert changed(tmp_path, capsys, new, old) == {}
