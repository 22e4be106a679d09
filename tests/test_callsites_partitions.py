"""The calls of compiled modules written with graph partitions (torch 2.11+ with CUDA graphs on):
the launches live in module-level ``def partition_N(args)`` functions and ``Runner.call`` only
runs ``self.partitions[N](...)``, with eager calls between them.

Fixtures: ``tests/fixtures/codegen_2.14.1/`` (CUDA modules torch 2.14.1 generated without a GPU,
mode default = no partitions, reduce-overhead = one partition) and
``tests/fixtures/gpu_modules/`` (a partition-era module Inductor wrote on an A100, torch 2.9, with
``partitions=[]``). What a module's functions call is found here independently, with ``ast`` for
the function bounds and a regex per line.
"""

from __future__ import annotations

import ast
import re

import pytest

from inductor_bench.core.attribution import attribute, call_origins
from inductor_bench.core.callsites import parse_calls
from inductor_bench.core.modparse import EagerCall, Partitioning, parse_module
from inductor_bench.core.results import GraphResult, KernelStat
from inductor_bench.core.trace import Trace

from .conftest import FIXTURES

CODEGEN = FIXTURES / "codegen_2.14.1"
A100_MODULE = FIXTURES / "gpu_modules" / "a100_torch2.9_Runner_partitions__multi_rank_runtime_rank_5.log.2.py"
# (default module, reduce-overhead module): the same graph, CUDA graphs off / on
PAIRS = [
    ("mlp_infer_default_inference.py", "mlp_infer_reduce_overhead_inference.py"),
    ("mlp_train_default_fwd.py", "mlp_train_reduce_overhead_fwd.py"),
    ("mlp_train_default_bwd.py", "mlp_train_reduce_overhead_bwd.py"),
]
PARTITIONED = [ro for _, ro in PAIRS] + [
    "mlpH8192_train_reduce_overhead_fwd.py",
    "mlpH8192_train_reduce_overhead_bwd.py",
]

CALL_LINE = re.compile(
    r"^\s+(?:\w+ = )?(?:(?P<kernel>triton_\w+)\.run|(?P<extern>extern_kernels\.\w+|torch\.ops\.[\w.]+))\("
)
NODES_COMMENT = re.compile(r"# Topologically Sorted Source Nodes: \[(?P<nodes>[^\]]*)\]")


def function_lines(text: str, name: str) -> list[str]:
    """The body lines of the function (or method) ``name``, bounded by ``ast``."""
    found = [n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef) and n.name == name]
    assert len(found) == 1, name
    return text.splitlines()[found[0].lineno : found[0].end_lineno]


def calls_in(text: str, name: str) -> list[tuple[str, list[str]]]:
    """(kernel or extern callee, FX source nodes of the comment above it) of each launch line."""
    out, nodes = [], []
    for ln in function_lines(text, name):
        if (c := NODES_COMMENT.search(ln)) is not None:
            nodes = [n.strip() for n in c.group("nodes").split(",")]
        elif (m := CALL_LINE.match(ln)) is not None:
            out.append((m.group("kernel") or m.group("extern"), nodes))
            nodes = []
    return out


def read(name: str) -> tuple[str, object]:
    text = (CODEGEN / name).read_text()
    return text, parse_module(text)


@pytest.mark.parametrize("name", PARTITIONED)
def test_a_partitioned_module_has_the_calls_of_its_partition(name):
    text, module = read(name)
    expected = calls_in(text, "partition_0")
    assert len(expected) >= 3  # every launch of these graphs is in the one partition
    assert calls_in(text, "call") == []  # Runner.call itself launches nothing
    calls = parse_calls(text, module)
    assert [c.name for c in calls] == [callee for callee, _ in expected]
    assert {c.partition for c in calls} == {0}
    externs = [c for c in calls if c.extern]
    assert [c.index for c in externs] == list(range(len(externs)))
    assert [e.callee for e in module.externs] == [c.name for c in externs]
    assert len(re.findall(r"^def partition_\d+\(", text, re.M)) == 1
    assert module.partitions == Partitioning(count=1, order=[0], eager=[])


@pytest.mark.parametrize("default,reduce_overhead", PAIRS)
def test_reduce_overhead_calls_equal_the_default_modules(default, reduce_overhead):
    d_text, d_module = read(default)
    r_text, r_module = read(reduce_overhead)
    assert [callee for callee, _ in calls_in(d_text, "call")] == [
        callee for callee, _ in calls_in(r_text, "partition_0")
    ]
    d_calls, r_calls = parse_calls(d_text, d_module), parse_calls(r_text, r_module)
    assert [c.name for c in d_calls] == [callee for callee, _ in calls_in(d_text, "call")]
    assert [(c.name, c.extern, c.index, c.written) for c in r_calls] == [
        (c.name, c.extern, c.index, c.written) for c in d_calls
    ]
    assert d_module.partitions == Partitioning() and {c.partition for c in d_calls} == {None}


def lowering_record(text: str, module) -> dict:
    """A lowering record (``runner/sources.py``'s shape) of the default module: each call's
    written buffers made from the FX nodes its module comment names, each node on a line of
    its own of a model file."""
    calls = parse_calls(text, module)
    expected = calls_in(text, "call")
    assert [c.name for c in calls] == [callee for callee, _ in expected]
    ops = [{"written": c.written, "origins": nodes, "nodes": nodes, "extern": c.extern, "shapes": []}
           for c, (_, nodes) in zip(calls, expected, strict=True)]
    names = [n for _, nodes in expected for n in nodes]
    frames = {n: {"frame": ["model.py", i + 10, "forward", n]} for i, n in enumerate(dict.fromkeys(names))}
    return {"ops": ops, "nodes": frames}


@pytest.mark.parametrize("default,reduce_overhead", PAIRS)
def test_origins_of_a_partitioned_module(default, reduce_overhead):
    record = lowering_record(*read(default))
    r_text, r_module = read(reduce_overhead)
    expected = calls_in(r_text, "partition_0")
    origins, _ = call_origins(parse_calls(r_text, r_module), record)
    assert [origins[i].nodes for i in range(len(expected))] == [nodes for _, nodes in expected]
    assert all(origins[i].missing is None and origins[i].lines for i in range(len(expected)))
    lines = {n: i + 10 for i, n in enumerate(dict.fromkeys(n for _, ns in expected for n in ns))}
    assert [[ln.line for ln in origins[i].lines] for i in range(len(expected))] == [
        sorted(lines[n] for n in nodes) for _, nodes in expected
    ]


@pytest.mark.parametrize("default,reduce_overhead", PAIRS)
def test_kernels_of_a_partitioned_module_are_attributed(default, reduce_overhead):
    record = lowering_record(*read(default))
    r_text, r_module = read(reduce_overhead)
    kernels = [(callee, nodes) for callee, nodes in calls_in(r_text, "partition_0") if callee.startswith("triton_")]
    graph = GraphResult(id="0-x", role=r_module.role, device="cuda",
                        kernels=[KernelStat(name, "triton", 1.0, 1.0) for name, _ in kernels])
    attribute(graph, Trace([]), r_module, r_text, record)
    by_name: dict[str, list[str]] = {}
    for name, nodes in kernels:  # a kernel launched twice: the nodes of both launches
        by_name.setdefault(name, []).extend(n for n in nodes if n not in by_name.get(name, []))
    assert [(k.name, k.origin.missing, sorted(k.origin.nodes)) for k in graph.kernels] == [
        (name, None, sorted(by_name[name])) for name, _ in kernels
    ]


def test_a_gpu_module_without_partitions():
    """Real A100 module (torch 2.9): ``Runner(partitions=[])``, every call inline in ``call``."""
    text = A100_MODULE.read_text()
    module = parse_module(text)
    expected = calls_in(text, "call")
    assert len(expected) == 11
    calls = parse_calls(text, module)
    assert [c.name for c in calls] == [callee for callee, _ in expected]
    assert [e.callee for e in module.externs] == [c.name for c in calls if c.extern]
    assert module.partitions == Partitioning()
    assert "Runner(partitions=[])" in text


# Synthetic: two partitions with an op that cannot be captured between them, written in the
# shape ``codegen_partition_call`` (torch/_inductor/codegen/wrapper.py) gives it; not generated.
SYNTHETIC_TWO_PARTITIONS = """# AOT ID: ['0_inference']
triton_poi_fused_gt_0 = async_compile.triton('triton_poi_fused_gt_0', '''
def triton_poi_fused_gt_0(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    pass
''', device_str='cuda')
triton_poi_fused_mul_1 = async_compile.triton('triton_poi_fused_mul_1', '''
def triton_poi_fused_mul_1(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    pass
''', device_str='cuda')

def partition_0(args):
    arg0_1, arg1_1 = args
    args.clear()
    with torch.cuda._DeviceGuard(0):
        buf0 = empty_strided_cuda((16, 16), (16, 1), torch.float32)
        # Topologically Sorted Source Nodes: [mm], Original ATen: [aten.mm]
        extern_kernels.mm(arg0_1, arg1_1, out=buf0)
        buf1 = empty_strided_cuda((16, 16), (16, 1), torch.bool)
        # Topologically Sorted Source Nodes: [gt], Original ATen: [aten.gt]
        triton_poi_fused_gt_0.run(buf0, buf1, 256, stream=raw_stream0)
    return (buf0, buf1, )


def partition_1(args):
    buf0, buf2 = args
    args.clear()
    with torch.cuda._DeviceGuard(0):
        buf3 = empty_strided_cuda((16, 16), (16, 1), torch.float32)
        # Topologically Sorted Source Nodes: [mul], Original ATen: [aten.mul]
        triton_poi_fused_mul_1.run(buf0, buf3, 256, stream=raw_stream0)
        buf4 = empty_strided_cuda((16, 16), (16, 1), torch.float32)
        # Topologically Sorted Source Nodes: [mm_1], Original ATen: [aten.mm]
        extern_kernels.mm(buf3, buf2, out=buf4)
    return (buf4, )


class Runner:
    def __init__(self, partitions):
        self.partitions = partitions

    def call(self, args):
        arg0_1, arg1_1 = args
        args.clear()
        partition0_args = [arg0_1, arg1_1]
        del arg0_1, arg1_1
        (buf0, buf1) = self.partitions[0](partition0_args)
        del partition0_args
        # Topologically Sorted Source Nodes: [nonzero], Original ATen: [aten.nonzero]
        buf2 = torch.ops.aten.nonzero.default(buf1)
        partition1_args = [buf0, buf2]
        del buf0, buf2
        (buf4,) = self.partitions[1](partition1_args)
        del partition1_args
        return (buf4, )

runner = Runner(partitions=[partition_0, partition_1])
call = runner.call
"""


def test_eager_calls_between_partitions_run_in_call_order():
    module = parse_module(SYNTHETIC_TWO_PARTITIONS)
    calls = parse_calls(SYNTHETIC_TWO_PARTITIONS, module)
    assert [(c.name, c.extern, c.index, c.written, c.partition) for c in calls] == [
        ("extern_kernels.mm", True, 0, ["buf0"], 0),
        ("triton_poi_fused_gt_0", False, -1, ["buf1"], 0),
        ("torch.ops.aten.nonzero.default", True, 1, ["buf2"], None),
        ("triton_poi_fused_mul_1", False, -1, ["buf3"], 1),
        ("extern_kernels.mm", True, 2, ["buf4"], 1),
    ]
    # ModuleInfo.externs in the same (run) order, with the origins of their comments
    assert [(e.callee, e.source_nodes) for e in module.externs] == [
        ("extern_kernels.mm", ["mm"]),
        ("torch.ops.aten.nonzero.default", ["nonzero"]),
        ("extern_kernels.mm", ["mm_1"]),
    ]
    assert module.partitions == Partitioning(
        count=2, order=[0, 1], eager=[EagerCall("torch.ops.aten.nonzero.default", after=1)]
    )


# Synthetic: a graph of one GEMM under CUDA graphs, so no Triton kernel names the device; only
# the allocation inside the partition does.
SYNTHETIC_EXTERN_ONLY = """# AOT ID: ['0_inference']
def partition_0(args):
    arg0_1, arg1_1 = args
    args.clear()
    with torch.cuda._DeviceGuard(0):
        buf0 = empty_strided_cuda((16, 16), (16, 1), torch.float32)
        extern_kernels.mm(arg0_1, arg1_1, out=buf0)
    return (buf0, )


class Runner:
    def call(self, args):
        arg0_1, arg1_1 = args
        args.clear()
        partition0_args = [arg0_1, arg1_1]
        del arg0_1, arg1_1
        (buf0,) = self.partitions[0](partition0_args)
        del partition0_args
        return (buf0, )

runner = Runner(partitions=[partition_0,])
call = runner.call
"""


def test_the_device_of_a_module_whose_allocations_are_all_in_partitions():
    module = parse_module(SYNTHETIC_EXTERN_ONLY)
    assert module.device == "cuda"
    assert [(c.name, c.written, c.partition) for c in parse_calls(SYNTHETIC_EXTERN_ONLY, module)] == [
        ("extern_kernels.mm", ["buf0"], 0)
    ]
    assert parse_module(SYNTHETIC_EXTERN_ONLY.replace("def partition_0", "def unused")).device is None
