"""The replay of a partitioned module as torch.compile's CUDA-graph modes run it, without a GPU:
the plan (``core/replay_plan.py``) read from a module's text, then the module run through
``runner/replay.py`` against a recording stand-in of ``torch.cuda`` and of the tensors, so
the order of warm-ups, captures, input copies, replays and eager work is what is checked.

The module is synthetic (written here in the shape ``codegen/wrapper.py`` gives a module with
two partitions and an op between them that cannot be captured), so that it runs without torch.
"""

from __future__ import annotations

import contextlib
import types

from inductor_bench.core.replay_plan import plan
from inductor_bench.runner import replay

MODULE = """# AOT ID: ['0_inference']
triton_poi_fused_gt_0 = async_compile.triton('triton_poi_fused_gt_0', '''
def triton_poi_fused_gt_0(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
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
        raw_stream0 = get_raw_stream(0)
        triton_poi_fused_gt_0.run(buf0, buf1, 256, stream=raw_stream0)
    return (buf0, buf1, )


def partition_1(args):
    buf0, buf2, arg1_1 = args
    args.clear()
    with torch.cuda._DeviceGuard(0):
        buf4 = empty_strided_cuda((16, 16), (16, 1), torch.float32)
        extern_kernels.mm(buf0, buf2, out=buf4)
    return (buf4, )


class Runner:
    def __init__(self, partitions):
        self.partitions = partitions

    def recursively_apply_fns(self, fns):
        new_callables = []
        for fn, c in zip(fns, self.partitions):
            new_callables.append(fn(c))
        self.partitions = new_callables

    def call(self, args):
        arg0_1, arg1_1 = args
        args.clear()
        partition0_args = [arg0_1, arg1_1]
        (buf0, buf1) = self.partitions[0](partition0_args)
        del partition0_args
        # Topologically Sorted Source Nodes: [nonzero], Original ATen: [aten.nonzero]
        buf2 = torch.ops.aten.nonzero.default(buf1)
        partition1_args = [buf0, buf2, arg1_1]
        del buf0, buf2
        (buf4,) = self.partitions[1](partition1_args)
        del partition1_args
        return (buf4, )

runner = Runner(partitions=[partition_0, partition_1,])
call = runner.call
recursively_apply_fns = runner.recursively_apply_fns
"""


class Recorder:
    """A stand-in for ``torch.cuda`` and for tensors: every event, with the stream it ran on."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.stream_now = "default"
        self.made = 0

    # tensors
    def tensor(self, name: str) -> Tensor:
        return Tensor(self, name)

    # torch.cuda
    def Stream(self) -> Recorder:  # noqa: N802 - torch.cuda's name
        return self

    def wait_stream(self, other: object) -> None:
        pass

    def current_stream(self) -> Recorder:
        return self

    @contextlib.contextmanager
    def stream(self, s: object):
        self.stream_now = "side"
        try:
            yield
        finally:
            self.stream_now = "default"

    def CUDAGraph(self) -> types.SimpleNamespace:  # noqa: N802
        return types.SimpleNamespace(replay=lambda: self.log.append("replay"))

    @contextlib.contextmanager
    def graph(self, g: object):
        self.stream_now = "capture"
        self.log.append("capture begins")
        try:
            yield
        finally:  # as torch.cuda.graph ends the capture on an error too
            self.stream_now = "default"
            self.log.append("capture ends")

    def synchronize(self) -> None:
        pass


class Tensor:
    def __init__(self, rec: Recorder, name: str) -> None:
        self.rec, self.name = rec, name

    def clone(self) -> Tensor:
        return Tensor(self.rec, f"static {self.name}")

    def copy_(self, src: Tensor) -> None:
        self.rec.log.append(f"copy {src.name} -> {self.name}")


def load(rec: Recorder) -> types.SimpleNamespace:
    """The module executed with stand-ins for what Inductor's header imports."""

    def launcher(name: str):
        return types.SimpleNamespace(run=lambda *a, **k: rec.log.append(f"{name} on {rec.stream_now}"))

    def extern(name: str):
        def run(*a, **k):
            rec.log.append(f"{name} on {rec.stream_now}")
            if "out" not in k:
                rec.made += 1
                return rec.tensor(f"eager{rec.made}")
        return run

    torch = types.SimpleNamespace(
        float32="f32", bool="b",
        cuda=types.SimpleNamespace(_DeviceGuard=lambda i: contextlib.nullcontext()),
        ops=types.SimpleNamespace(aten=types.SimpleNamespace(nonzero=types.SimpleNamespace(
            default=extern("nonzero")))),
    )
    ns = {
        "async_compile": types.SimpleNamespace(triton=lambda name, src, device_str: launcher(name)),
        "torch": torch,
        "extern_kernels": types.SimpleNamespace(mm=extern("mm")),
        "empty_strided_cuda": lambda *a: rec.tensor("buf"),
        "get_raw_stream": lambda i: 0,
    }
    exec(compile(MODULE, "<module>", "exec"), ns)
    return types.SimpleNamespace(**{k: v for k, v in ns.items() if not k.startswith("__")})


STATE = {"static_input_idxs": [0], "cudagraph_fail_reasons": [], "disabled_cudagraphs_reason": None,
         "device_types": ["cuda"], "partition_maps": [{}, {}]}


def test_the_plan_of_two_partitions_with_eager_work_between():
    p = plan(MODULE, True, STATE)
    assert p.graphed and p.partitioned and p.partitions == 2
    assert [(s.kind, s.partition, s.calls, s.copied, s.positions) for s in p.steps] == [
        ("graph", 0, [], ["arg1_1"], [1]),  # arg0_1 is static
        ("eager", None, ["torch.ops.aten.nonzero.default"], [], []),
        ("graph", 1, [], ["buf2", "arg1_1"], [1, 2]),  # buf0 is partition 0's: not copied
    ]
    assert p.copied_inputs == [1]
    assert p.request()["copies"] == {"0": [1], "1": [1, 2]}
    assert p.how_it_ran() == "replayed: 2 CUDA-graph partition(s), 1 eager step(s); 1 input(s) copied per replay"


def test_each_partition_is_captured_on_its_first_call_and_eager_work_runs_between():
    rec = Recorder()
    mod = load(rec)
    p = plan(MODULE, True, STATE)
    copies = {int(k): v for k, v in p.request()["copies"].items()}
    wrappers = replay.install_partitions(rec, mod, copies)
    assert [type(w) for w in mod.runner.partitions] == [replay.PartitionReplay] * 2 and wrappers == mod.runner.partitions
    x, w = rec.tensor("x"), rec.tensor("w")
    mod.call([x, w])
    warm = replay.SIDE_STREAM_WARMUP
    first_call = (
        ["mm on side", "triton_poi_fused_gt_0 on side"] * warm
        + ["capture begins", "mm on capture", "triton_poi_fused_gt_0 on capture", "capture ends"]
        + ["copy w -> static w", "replay"]
        + ["nonzero on default"]
        + ["mm on side"] * warm + ["capture begins", "mm on capture", "capture ends"]
        + ["copy eager1 -> static eager1", "copy w -> static w", "replay"]
    )
    assert rec.log == first_call
    rec.log.clear()
    mod.call([x, w])  # later calls: copies and replays only, the eager op between them
    assert rec.log == ["copy w -> static w", "replay", "nonzero on default",
                       "copy eager2 -> static eager1", "copy w -> static w", "replay"]


def test_a_partition_that_cannot_be_captured_raises_for_the_worker():
    rec = Recorder()
    mod = load(rec)

    def refuse(args):
        if rec.stream_now == "capture":
            raise RuntimeError("operation not permitted when stream is capturing")
        return (rec.tensor("buf0"), rec.tensor("buf1"))

    mod.runner.partitions[0] = refuse
    replay.install_partitions(rec, mod, {0: [], 1: []})
    try:
        mod.call([rec.tensor("x"), rec.tensor("w")])
    except replay.PartitionCaptureError as e:
        assert str(e) == "RuntimeError: operation not permitted when stream is capturing"
    else:
        raise AssertionError("the capture failure was swallowed")


def test_a_whole_graph_capture_copies_the_inputs_it_is_told_to():
    rec = Recorder()
    seen: list[list[str]] = []

    def call(args):
        seen.append([a.name for a in args])
        args.clear()
        return ["out"]

    a, b = rec.tensor("a"), rec.tensor("b")
    g, err = replay.capture(rec, call, [a, b], copy=[1])
    assert err is None and g.static_args[0] is a and g.static_args[1].name == "static b"
    assert seen == [["a", "static b"]] * (replay.SIDE_STREAM_WARMUP + 1)
    rec.log.clear()
    assert g.run([a, b]) == ["out"]
    assert rec.log == ["copy b -> static b", "replay"]
