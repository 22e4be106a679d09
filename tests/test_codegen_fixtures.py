"""Every parser and the replay planner on CUDA modules torch 2.11, 2.14.1 and 2.15 generated
WITHOUT a GPU (``tests/fixtures/codegen_<version>/``, recorded by
``scripts/record_cuda_codegen.py``; each folder's ``manifest.json`` says what each module is and
carries torch's own CUDA-graph state of it).

What each module defines and launches is found here independently of the code under test:
``ast`` for the functions' bounds and the kernel definitions, one regex per launch line, the
partition calls of ``Runner.call`` expanded into the partitions' bodies by hand.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field

import pytest

from inductor_bench.core.attribution import call_origins
from inductor_bench.core.callsites import parse_calls
from inductor_bench.core.classify import classify
from inductor_bench.core.kernelfile import parse_kernel_source
from inductor_bench.core.modparse import EagerCall, parse_module
from inductor_bench.core.replay_plan import plan

from .conftest import FIXTURES

VERSIONS = ["2.11.0", "2.12.0", "2.14.1", "2.15.0"]
LAUNCH = re.compile(
    r"^\s+(?:[\w, ()]+ = )?(?:(?P<kernel>\w+)\.run|(?P<extern>extern_kernels\.\w+|torch\.ops\.[\w.]+|aten\.[\w.]+))\("
)
PARTITION_CALL = re.compile(r"self\.partitions\[(\d+)\]\(")
DECORATOR = re.compile(r"@triton_heuristics\.(\w+)\(")
JIT_DEF = re.compile(r"@triton\.jit\s*\ndef (\w+)\(")
NODES = re.compile(r"# Topologically Sorted Source Nodes: \[(?P<nodes>[^\]]*)\]")
CATEGORY = {"pointwise": "triton_pointwise", "reduction": "triton_reduction",
            "persistent_reduction": "triton_persistent_reduction", "template": "triton_template"}
PREFIX = {"pointwise": "triton_poi_", "reduction": "triton_red_",
          "persistent_reduction": "triton_per_", "template": "triton_tem_"}


def manifest_rows() -> list[tuple[str, dict]]:
    rows = []
    for v in VERSIONS:
        path = FIXTURES / f"codegen_{v}" / "manifest.json"
        if path.exists():
            rows += [(v, r) for r in json.loads(path.read_text())["modules"]]
    return rows


ROWS = manifest_rows()
IDS = [f"{v}/{r['file']}" for v, r in ROWS]


@dataclass
class Expected:
    """What a module holds, read here without the code under test."""

    kernels: dict[str, str] = field(default_factory=dict)  # name -> its source
    partitions: list[str] = field(default_factory=list)  # the partition_N functions
    order: list[int] = field(default_factory=list)  # the partitions Runner.call runs
    launches: list[tuple[str, int | None, list[str]]] = field(default_factory=list)  # run order
    eager: list[tuple[str, int]] = field(default_factory=list)  # Runner.call's own, after N partitions
    inputs: list[str] = field(default_factory=list)  # Runner.call's arguments
    partition_args: dict[int, list[str]] = field(default_factory=dict)
    partition_outs: set[str] = field(default_factory=set)


def read_expected(text: str) -> Expected:
    tree = ast.parse(text)
    lines = text.splitlines()
    e = Expected()
    funcs: dict[str, ast.FunctionDef] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            f = node.value.func
            if isinstance(f, ast.Attribute) and f.attr == "triton" and ast.unparse(f.value) == "async_compile":
                e.kernels[node.value.args[0].value] = node.value.args[1].value
        if isinstance(node, ast.FunctionDef):
            funcs[node.name] = node
        if isinstance(node, ast.ClassDef) and node.name == "Runner":
            funcs.update({f"Runner.{m.name}": m for m in node.body if isinstance(m, ast.FunctionDef)})
    e.partitions = sorted(n for n in funcs if re.fullmatch(r"partition_\d+", n))
    call = funcs.get("Runner.call") or funcs["call"]  # before partitions: a module-level call
    first = call.body[0]
    e.inputs = [t.id for t in first.targets[0].elts] if isinstance(first, ast.Assign) and isinstance(
        first.targets[0], ast.Tuple) else []
    nodes: list[str] = []
    for ln in lines[call.lineno: call.end_lineno]:
        if (pm := PARTITION_CALL.search(ln)) is not None:
            n = int(pm.group(1))
            e.order.append(n)
            e.partition_outs |= set(re.findall(r"\w+", ln.split("=")[0])) - {"self"}
            body = funcs[f"partition_{n}"]
            for pln in lines[body.lineno: body.end_lineno]:
                if (c := NODES.search(pln)) is not None:
                    nodes = [x.strip() for x in c.group("nodes").split(",")]
                elif (m := LAUNCH.match(pln)) and (m.group("extern") or m.group("kernel") in e.kernels):
                    e.launches.append((m.group("kernel") or m.group("extern"), n, nodes))
                    nodes = []
            continue
        if (am := re.match(r"\s+partition(\d+)_args = \[(.*)\]", ln)) is not None:
            e.partition_args[int(am.group(1))] = [a.strip() for a in am.group(2).split(",") if a.strip()]
        if (c := NODES.search(ln)) is not None:
            nodes = [x.strip() for x in c.group("nodes").split(",")]
        elif (m := LAUNCH.match(ln)) and (m.group("extern") or m.group("kernel") in e.kernels):
            e.launches.append((m.group("kernel") or m.group("extern"), None, nodes))
            e.eager.append((m.group("kernel") or m.group("extern"), len(e.order)))
            nodes = []
    return e


def load(version: str, row: dict) -> tuple[str, Expected]:
    text = (FIXTURES / f"codegen_{version}" / row["file"]).read_text()
    return text, read_expected(text)


def test_every_version_was_recorded_and_says_it_was_generated_without_a_gpu():
    for v in VERSIONS:
        m = json.loads((FIXTURES / f"codegen_{v}" / "manifest.json").read_text())
        assert m["generated_without_gpu"] is True and m["torch"].startswith(v + "+cu")
        assert "no GPU" in m["machine"]
        assert "generated without a GPU" in (FIXTURES / f"codegen_{v}" / "README.md").read_text()


@pytest.mark.parametrize("version,row", ROWS, ids=IDS)
def test_modparse_reads_kernels_partitions_and_eager_calls(version, row):
    text, e = load(version, row)
    m = parse_module(text)
    assert m.role == row["role"]
    assert m.device == "cuda"
    assert sorted(m.kernels) == sorted(e.kernels)
    for name, src in e.kernels.items():
        assert m.kernels[name].kind == "triton"
        assert m.kernels[name].heuristic == DECORATOR.search(src).group(1)
    assert m.partitions.count == len(e.partitions)
    if e.partitions:
        assert m.partitions.order == e.order
        assert m.partitions.eager == [EagerCall(c, after) for c, after in e.eager]
    # CUDA graphs off: no partition at all; on: at least one
    assert (len(e.partitions) > 0) == row["cudagraphs"]


@pytest.mark.parametrize("version,row", ROWS, ids=IDS)
def test_call_sites_in_the_order_they_run(version, row):
    text, e = load(version, row)
    calls = parse_calls(text, parse_module(text))
    assert [(c.name, c.partition) for c in calls] == [(n, p) for n, p, _ in e.launches]
    externs = [c for c in calls if c.extern]
    assert [c.index for c in externs] == list(range(len(externs)))
    assert all(c.written for c in calls)  # every call's outputs are read from its signature


@pytest.mark.parametrize("version,row", ROWS, ids=IDS)
def test_kernels_classify_and_their_sources_parse_as_kernel_files(version, row):
    text, e = load(version, row)
    m = parse_module(text)
    for name, src in e.kernels.items():
        heuristic = DECORATOR.search(src).group(1)
        assert name.startswith(PREFIX[heuristic])
        assert classify(name, m.kernels[name]) == CATEGORY[heuristic]
        kf = parse_kernel_source(src, f"{name}.py")
        assert (kf.name, kf.heuristic, kf.category, kf.device) == (
            JIT_DEF.search(src).group(1), heuristic, CATEGORY[heuristic], "cuda")
        assert kf.has_harness  # recorded with TORCHINDUCTOR_BENCHMARK_KERNEL=1, as the tool compiles


@pytest.mark.parametrize("version,row", ROWS, ids=IDS)
def test_each_call_is_attributed_to_the_nodes_its_comment_names(version, row):
    text, e = load(version, row)
    calls = parse_calls(text, parse_module(text))
    # an extern's own node is the last its comment names (the others are upstream of it), as
    # the compile worker's record names it (the node Inductor lowered it from)
    ops = [{"written": c.written, "origins": nodes, "nodes": nodes[-1:] if c.extern else nodes,
            "extern": c.extern, "shapes": []} for c, (_, _, nodes) in zip(calls, e.launches, strict=True)]
    names = list(dict.fromkeys(n for _, _, nodes in e.launches for n in nodes))
    record = {"ops": ops, "nodes": {n: {"frame": ["model.py", i + 1, "forward", n]} for i, n in enumerate(names)}}
    origins, _ = call_origins(calls, record)
    written_first: dict[str, list[str]] = {}  # a buffer written twice: its first writer's nodes
    for op in ops:
        for b in op["written"]:
            written_first.setdefault(b, piled_up_taken_back(ops, op))
    for i, c in enumerate(calls):
        want = list(dict.fromkeys(n for b in c.written for n in written_first[b])) if not c.extern else \
            written_first[c.written[0]]
        assert sorted(origins[i].nodes) == sorted(want)


def piled_up_taken_back(ops: list[dict], op: dict) -> list[str]:
    """An extern's own node; a kernel's comment nodes less those of each earlier kernel whose
    nodes its comment holds all of and more (core/own_nodes.py says why)."""
    if op["extern"]:
        return op["nodes"]
    mine = set(op["origins"])
    earlier = ops[:ops.index(op)]
    drop = {n for j in earlier if not j["extern"] and set(j["origins"]) < mine for n in j["origins"]}
    return [n for n in op["origins"] if n not in drop]


@pytest.mark.parametrize("version,row", ROWS, ids=IDS)
def test_replay_plan_follows_torchs_own_state(version, row):
    text, e = load(version, row)
    state = row["cudagraph_state"]
    p = plan(text, row["cudagraphs"], state)
    if not row["cudagraphs"]:
        assert not p.graphed and p.steps == []
        return
    graphed = not state["cudagraph_fail_reasons"] and not state["disabled_cudagraphs_reason"] and bool(
        state["partition_maps"])
    assert p.graphed == graphed
    assert p.partitions == len(e.order) == len(state["partition_maps"])
    static = set(state["static_input_idxs"])
    eager_made = {n for n in (a for args in e.partition_args.values() for a in args)
                  if n not in e.inputs and n not in e.partition_outs}
    for s in (s for s in p.steps if s.kind == "graph"):
        args = e.partition_args[s.partition]
        want = [k for k, a in enumerate(args)
                if a in eager_made or (a in e.inputs and e.inputs.index(a) not in static)]
        assert s.positions == want
    taken = {a for args in e.partition_args.values() for a in args}
    assert p.copied_inputs == [k for k, n in enumerate(e.inputs) if k not in static and n in taken]
    eager_steps = [s.calls for s in p.steps if s.kind == "eager"]
    assert [c for calls in eager_steps for c in calls] == [c for c, _ in e.eager]


def rows_of(config: str) -> list[tuple[str, dict]]:
    return [(v, r) for v, r in ROWS if r["config"] == config]


@pytest.mark.parametrize("version", VERSIONS)
def test_what_each_model_compiled_to(version):
    """Facts of the models themselves, the same in every version."""
    by_config: dict[str, list[dict]] = {}
    for v, r in ROWS:
        if v == version:
            by_config.setdefault(r["config"], []).append(r)
    # training: a forward and a backward graph; the graph break: two inference graphs
    for cfg in ("mlp_train_nocg", "mlp_train_cg", "block_train_cg"):
        assert sorted(r["role"] for r in by_config[cfg]) == ["backward", "forward"]
    assert sorted(r["graph"] for r in by_config["graphbreak_infer_cg"]) == [0, 1]
    # the op tagged cudagraph_unsafe splits its graph in two, and runs eagerly between them
    (split,) = by_config["split_infer_cg"]
    text, e = load(version, split)
    assert len(e.partitions) == 2 and e.order == [0, 1]
    assert [c for c, _ in e.eager] == ["torch.ops.inductor_bench_test.host_step.default"]
    p = plan(text, True, split["cudagraph_state"])
    assert [s.kind for s in p.steps] == ["graph", "eager", "graph"]
    assert p.how_it_ran().startswith("replayed: 2 CUDA-graph partition(s), 1 eager step(s)")


# -- the same readers on modules Inductor wrote on real GPUs (A100, H100; torch 2.6 to 2.9) ----

GPU_MODULES = sorted(p.name for p in (FIXTURES / "gpu_modules").glob("*.py"))


@pytest.mark.parametrize("name", GPU_MODULES)
def test_real_gpu_modules_kernels_and_call_sites(name):
    text = (FIXTURES / "gpu_modules" / name).read_text()
    e = read_expected(text)
    m = parse_module(text)
    assert sorted(m.kernels) == sorted(e.kernels) and e.kernels
    assert m.device == "cuda"
    calls = parse_calls(text, m)
    assert [(c.name, c.partition) for c in calls] == [(n, p) for n, p, _ in e.launches]
    assert m.partitions.count == len(e.partitions) == 0
    for kname, src in e.kernels.items():
        heuristic = DECORATOR.search(src).group(1)
        assert m.kernels[kname].heuristic == heuristic
        assert classify(kname, m.kernels[kname]) == CATEGORY[heuristic]
        kf = parse_kernel_source(src, f"{kname}.py")
        assert (kf.name, kf.heuristic, kf.device) == (JIT_DEF.search(src).group(1), heuristic, "cuda")
        assert not kf.has_harness  # written without TORCHINDUCTOR_BENCHMARK_KERNEL
