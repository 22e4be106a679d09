"""diff of a generated kernel whose graph was given inputs of other sizes (a batch of 64 made
128): the kernel records no shapes of its own, so its row says ``graph inputs changed`` from its
graph's saved input shapes, and the verdict line names the graph and the shapes that changed; an
extern op whose own calls kept their shapes is not marked."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from inductor_bench import cli

from .conftest import ROOT

RUN = ROOT / "tests/fixtures/runs/cpu_mlp_train_stalled/breakdown.json"
SLOW = "cpp_fused_gelu_native_layer_norm_0"


def diff(capsys, *args: str) -> tuple[int, str]:
    try:
        cli.main(["diff", *args])
        code = 0
    except SystemExit as e:
        code = e.code or 0
    return code, capsys.readouterr().out


def head_of(data: dict, batch: int | None) -> dict:
    """The run with ``SLOW`` (0-forward) three times as long in every iteration, its graph's
    wall and busy as much longer; where ``batch``, the forward's inputs of 64 rows given ``batch``."""
    out = copy.deepcopy(data)
    g = out["graphs"][0]
    k = next(k for k in g["kernels"] if k["name"] == SLOW)
    extra = [2 * x for x in k["samples_ms"]]
    k["samples_ms"] = [3 * x for x in k["samples_ms"]]
    k["ms"] *= 3
    for key in ("wall_samples_ms", "busy_samples_ms", "clock_samples_ms"):
        g[key] = [w + e for w, e in zip(g[key], extra, strict=True)]
    if batch is not None:
        g["input_shapes"] = [[batch if d == 64 else d for d in s] for s in g["input_shapes"]]
    return out


def run_pair(tmp_path, batch: int | None, base_shapes: bool = True) -> tuple[str, str]:
    data = json.loads(RUN.read_text())
    head = head_of(data, batch)
    if not base_shapes:
        for g in data["graphs"]:
            g["input_shapes"] = []
    paths = []
    for name, d in (("base.json", data), ("head.json", head)):
        (tmp_path / name).write_text(json.dumps(d))
        paths.append(str(tmp_path / name))
    return paths[0], paths[1]


def marked(capsys, base: str, head: str) -> dict[tuple[str, str], list[str]]:
    code, out = diff(capsys, base, head, "--format", "json")
    assert code == 0
    return {(k["graph"], k["name"]): k["shapes_changed"]
            for s in json.loads(out)["sections"] for k in s["kernels"] if k.get("shapes_changed")}


def test_a_generated_kernel_whose_graph_inputs_changed_size_is_marked(tmp_path, capsys):
    base, head = run_pair(tmp_path, 128)
    data = json.loads(RUN.read_text())
    fwd = data["graphs"][0]
    assert fwd["input_shapes"][2] == [64, 256]  # the batch: x
    externs = {s["kernel"] for s in fwd["sites"]}
    generated = [k["name"] for k in fwd["kernels"] if k["name"] not in externs]
    assert generated == [SLOW, "cpp_fused_gelu_1"]
    # every generated kernel of the forward, itself named; aten::addmm's calls kept their shapes
    assert marked(capsys, base, head) == {("0-forward", n): [n] for n in generated}
    _, out = diff(capsys, base, head)
    row = next(ln for ln in out.splitlines() if ln.startswith(f"0-forward  {SLOW} "))
    assert row.rstrip().endswith("graph inputs changed")
    # x [64, 256], the activations [64, 512] and the targets [64] given 128 rows; as many inputs
    resized = "0-forward: inputs of other shapes (64x256 -> 128x256, 64x512 -> 128x512, 64 -> 128)"
    assert f"; not the same work: {resized} - but base and head were measured" in out.splitlines()[0]
    assert f"graph inputs changed (matched): {resized}; the kernel's change" in " ".join(out.split())
    _, js = diff(capsys, base, head, "--format", "json")
    assert json.loads(js)["sections"][0]["graph_inputs"] == {"0-forward": resized.split(": ", 1)[1]}


def test_no_mark_where_the_graph_inputs_are_the_same_or_not_saved(tmp_path, capsys):
    assert marked(capsys, *run_pair(tmp_path, None)) == {}
    assert marked(capsys, *run_pair(tmp_path, 128, base_shapes=False)) == {}
    _, out = diff(capsys, *run_pair(tmp_path, None))
    assert "shapes changed" not in out


def dtype_pair(tmp_path) -> tuple[str, str]:
    """The run against itself with ``SLOW`` three times as long, every input's dtype recorded
    (synthetic: float32, as the run's model is), the forward's fc1 weight (512x256) and bias
    (512) bfloat16 in head; every shape as it was."""
    base, head = (json.loads(p.read_text()) for p in map(Path, run_pair(tmp_path, None)))
    for d in (base, head):
        for g in d["graphs"]:
            g["input_dtypes"] = ["float32"] * len(g["input_shapes"])
    head["graphs"][0]["input_dtypes"][:2] = ["bfloat16", "bfloat16"]
    for name, d in (("base.json", base), ("head.json", head)):
        (tmp_path / name).write_text(json.dumps(d))
    return str(tmp_path / "base.json"), str(tmp_path / "head.json")


def test_a_graph_whose_inputs_changed_dtype_alone_is_named_in_text_markdown_and_json(tmp_path, capsys):
    """Inputs of other dtypes at the same shapes had read as the same inputs: the forward's
    kernels were judged as the same work, its slower kernel a plain regression. An extern op
    records its calls' shapes but not their dtypes, so aten::addmm is marked too."""
    base, head = dtype_pair(tmp_path)
    assert json.loads(Path(base).read_text())["graphs"][0]["input_shapes"] == json.loads(
        Path(head).read_text())["graphs"][0]["input_shapes"]
    how = "inputs of other dtypes (512x256 float32 -> bfloat16, 512 float32 -> bfloat16)"
    forward = ["aten::addmm", SLOW, "cpp_fused_gelu_1"]
    assert marked(capsys, base, head) == {("0-forward", n): [n] for n in forward}
    _, js = diff(capsys, base, head, "--format", "json")
    assert json.loads(js)["sections"][0]["graph_inputs"] == {"0-forward": how}
    for fmt in ("text", "markdown"):
        _, out = diff(capsys, base, head, "--format", fmt)
        assert f"not the same work: 0-forward: {how}" in out.splitlines()[0]
        assert f"graph inputs changed (matched): 0-forward: {how}; the kernel's change" in " ".join(out.split())
    assert marked(capsys, *run_pair(tmp_path, None)) == {}  # float32 on both sides: nothing marked


def test_no_significant_change_still_says_the_graph_inputs_changed_dtype(tmp_path, capsys):
    """A layer cast to bfloat16 that made nothing faster reads `NO SIGNIFICANT CHANGE`; the line
    had stopped there, as if the work were the same, where a regression or a faster step names it."""
    data = json.loads(RUN.read_text())
    head = copy.deepcopy(data)
    head["graphs"][0]["input_dtypes"][:2] = ["bfloat16", "bfloat16"]
    for name, d in (("base.json", data), ("head.json", head)):
        (tmp_path / name).write_text(json.dumps(d))
    code, out = diff(capsys, str(tmp_path / "base.json"), str(tmp_path / "head.json"))
    line = out.splitlines()[0]
    assert code == 0 and line.startswith("NO SIGNIFICANT CHANGE: default: all graphs ")
    assert line.endswith("within noise); not the same work: 0-forward: inputs of other dtypes "
                         "(512x256 float32 -> bfloat16, 512 float32 -> bfloat16)")
