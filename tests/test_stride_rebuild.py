"""A module served from Inductor's cache with an attribution record kept by a version of this
tool that recorded no input strides: each extern call's strides are read back from the
module's text, or said to be unknown (``(strides ?)``, and a note on the graph), never shown
as contiguous; diff compares a call of unknown strides by its shapes alone."""

from __future__ import annotations

import ast
import copy
import json
import shutil

import pytest
import torch

from inductor_bench.core import source_store
from inductor_bench.core.attribution import call_origins
from inductor_bench.core.callsites import parse_calls
from inductor_bench.core.modparse import parse_module
from inductor_bench.core.stride_rebuild import with_strides
from inductor_bench.core.symbols import shapes_at, sizes

from .conftest import ROOT
from .test_call_strides import changed, saved_before_strides
from .test_call_strides import with_strides as given_strides

RUNS = ROOT / "tests/fixtures/runs"
# the recorded graphs (torch 2.13, CPU and CUDA), whose records predate strides: as a record
# kept by such a version reads on a cache hit
GRAPHS = sorted(p.parent.relative_to(RUNS).as_posix() for p in RUNS.glob("*/graphs/*/sources.json"))


def old_record(graph: str) -> dict:
    """The graph's record as a cache hit reads one kept without strides: saved into a store and
    carried over (``source_store.carry_over``), with no dynamo nodes of its own (hand-built)."""
    rec = json.loads((RUNS / graph / "sources.json").read_text())
    assert not any("strides" in op for op in rec["ops"])  # recorded before strides were
    return source_store.carry_over({**rec, "dynamo": {}}, {})


def stated(text: str) -> list[list[str]]:
    """Each extern call's inputs as the module's own ``call()`` states them, read with ``ast``:
    a name's size and stride from its ``assert_size_stride`` or ``empty_strided_*`` (or the
    name it is another name for), a view's from its ``reinterpret_tensor``; an input written
    with strides where torch says a tensor of them is not contiguous."""
    fn = next(f for f in ast.walk(ast.parse(text)) if isinstance(f, ast.FunctionDef) and f.name == "call")
    known: dict[str, tuple[tuple, tuple]] = {}
    out = []

    def tensor(a: ast.expr) -> tuple[tuple, tuple] | None:
        if isinstance(a, ast.Name):
            return known.get(a.id)
        if isinstance(a, ast.Call) and ast.unparse(a.func) == "reinterpret_tensor":
            return ast.literal_eval(a.args[1]), ast.literal_eval(a.args[2])
        return None

    for node in sorted((n for n in ast.walk(fn) if isinstance(n, (ast.Call, ast.Assign))),
                       key=lambda n: (n.lineno, n.col_offset)):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            name, v = node.targets[0].id, node.value
            if isinstance(v, ast.Name) and v.id in known:
                known[name] = known[v.id]
            elif isinstance(v, ast.Call) and ast.unparse(v.func) == "reinterpret_tensor":
                known[name] = tensor(v)  # type: ignore[assignment]
            elif isinstance(v, ast.Call) and ast.unparse(v.func).startswith("empty_strided"):
                known[name] = ast.literal_eval(v.args[0]), ast.literal_eval(v.args[1])
        elif isinstance(node, ast.Call):
            f = ast.unparse(node.func)
            if f == "assert_size_stride":
                known[node.args[0].id] = ast.literal_eval(node.args[1]), ast.literal_eval(node.args[2])
            elif f == "assert_size_stride_grouped":  # torch 2.15: ((a, b), (shapes), (strides))
                sizes, strides = ast.literal_eval(node.args[1]), ast.literal_eval(node.args[2])
                for n, size, stride in zip(node.args[0].elts, sizes, strides, strict=True):  # type: ignore[attr-defined]
                    known[n.id] = size, stride
            elif f.startswith(("extern_kernels.", "torch.ops.")) or f.endswith(".copy_"):
                receiver = [node.func.value] if f.endswith(".copy_") else []  # type: ignore[attr-defined]
                inputs = [t for a in [*receiver, *node.args] if (t := tensor(a)) is not None]
                out.append([_written(size, stride) for size, stride in inputs])
    return out


def _written(size: tuple, stride: tuple) -> str:
    shape = "x".join(map(str, size)) or "scalar"
    if torch.empty_strided(size, stride).is_contiguous():
        return shape
    return f"{shape} (strides {'x'.join(map(str, stride))})"


def rebuilt(graph: str, record: dict) -> tuple[list[list[str]], list[str]]:
    text = (RUNS / graph / "module.py").read_text()
    module = parse_module(text)
    calls = parse_calls(text, module)
    _, shapes = call_origins(calls, record)
    out, notes = with_strides(shapes, calls, text, module, record)
    return [out[i] for i in sorted(out)], notes


@pytest.mark.parametrize("graph", GRAPHS)
def test_an_old_records_strides_are_those_the_module_states(graph):
    record = old_record(graph)
    assert record[source_store.STRIDES_UNRECORDED] is True
    got, notes = rebuilt(graph, record)
    assert got == stated((RUNS / graph / "module.py").read_text())
    assert notes == []


def test_the_transposed_weights_of_a_checkpointed_backward_are_found():
    got, _ = rebuilt("cpu_checkpoint_train/graphs/0-backward", old_record("cpu_checkpoint_train/graphs/0-backward"))
    # extern_kernels.addmm(primals_11, buf4, reinterpret_tensor(primals_10, (256, 1024), (1, 256), 0), ...)
    assert ["1024", "128x256", "256x1024 (strides 1x256)"] in got
    # extern_kernels.mm(reinterpret_tensor(buf9, (1024, 128), (1, 1024), 0), buf4, out=buf11)
    assert ["1024x128 (strides 1x1024)", "128x256"] in got
    # the six calls given a view: all transposed (grep -c 'extern_kernels.*reinterpret_tensor')
    assert sum("(strides " in s for call in got for s in call) == 6


def test_a_record_with_strides_is_read_as_kept(tmp_path):
    rec = json.loads((RUNS / "cpu_checkpoint_train/graphs/0-forward/sources.json").read_text())
    for op in rec["ops"]:
        if op.get("extern"):
            op["strides"] = [""] * len(op["shapes"])
    assert source_store.save(tmp_path, "k", {**rec, "dynamo": {}})
    carried = source_store.carry_over(source_store.load(tmp_path, "k"), {})
    assert source_store.STRIDES_UNRECORDED not in carried
    shapes = {0: ["64x256"]}
    assert with_strides(shapes, [], "", parse_module(""), carried) == (shapes, [])


def test_strides_the_text_does_not_give_are_unknown_with_a_note():
    """A hand-built record whose shapes the module does not state (a size symbol): unknown."""
    graph = "cpu_checkpoint_train/graphs/0-forward"
    record = copy.deepcopy(old_record(graph))
    first = next(op for op in record["ops"] if op.get("extern"))
    first["shapes"] = ["s0x" + s.split("x", 1)[-1] for s in first["shapes"]]
    got, notes = rebuilt(graph, record)
    wanted = stated((RUNS / graph / "module.py").read_text())
    assert got[0] == [s + " (strides ?)" for s in first["shapes"]]
    assert got[1:] == wanted[1:]
    assert notes == ["input strides unknown for 1 of 4 extern calls ('(strides ?)'): the module's attribution "
                     "record is from an older version of this tool (kept in Inductor's cache, or in a run "
                     "saved then), which recorded none, and its text does not state them; a breakdown with "
                     "--fresh-cache records them"]


def _unknown(data: dict, graph: int, index: int) -> dict:
    out = copy.deepcopy(data)
    s = out["graphs"][graph]["sites"][index]
    s["shapes"] = [x + " (strides ?)" for x in s["shapes"]]
    return out


def test_diff_gives_no_verdict_on_strides_one_side_does_not_know(tmp_path, capsys):
    known = given_strides(saved_before_strides(), 0, 1, "1x512")
    unknown = _unknown(known, 0, 1)
    for site in unknown["graphs"][0]["sites"][1:2]:
        site["shapes"] = [s.replace(" (strides 1x512) (strides ?)", " (strides ?)") for s in site["shapes"]]
    assert changed(tmp_path, capsys, unknown, known) == {}
    assert changed(tmp_path, capsys, known, unknown) == {}


def test_diff_still_sees_a_change_of_shape_beside_unknown_strides(tmp_path, capsys):
    known = saved_before_strides()
    unknown = _unknown(known, 0, 1)
    site = unknown["graphs"][0]["sites"][1]
    site["shapes"][1] = "32x" + site["shapes"][1].split("x", 1)[1]
    assert changed(tmp_path, capsys, unknown, known) == {("0-forward", "aten::addmm"): ["aten::addmm #1"]}


CPP = ROOT / "tests/fixtures/cppwrapper"


@pytest.mark.parametrize("graph", [f"{v}/{g}" for v in ("2.5.1", "2.13.0", "2.15.0") for g in ("forward", "backward")])
def test_a_cpp_wrapper_modules_strides_are_those_its_python_twin_states(graph):
    """The C++ wrapper's ``assert_size_stride(x, {16L, 32L}, {32L, 1L}, ...)``,
    ``aoti_torch_empty_strided`` / ``reinterpret_tensor_wrapper`` of ``int_array_N``, torch
    2.5's ``at::detail::empty_strided_cpu`` and inputs of the harness alone: the strides the same
    model's Python wrapper states, read with ``ast``."""
    version, role = graph.split("/")
    twin = stated((CPP / version / f"py_{role}.py").read_text())
    text = (CPP / version / f"cpp_{role}.py").read_text()
    module = parse_module(text)
    calls = parse_calls(text, module)
    externs = [i for i, c in enumerate(calls) if c.extern]
    assert len(externs) == len(twin) and any("(strides " in s for call in twin for s in call)
    shapes = {i: [s.split(" (strides ")[0] for s in call] for i, call in zip(externs, twin, strict=True)}
    out, notes = with_strides(shapes, calls, text, module, {source_store.STRIDES_UNRECORDED: True})
    assert [out[i] for i in externs] == twin
    assert notes == []


FRESH = ROOT / "tests/fixtures/stride_rebuild"


def fresh_rebuilt(graph: str) -> tuple[dict, dict, list[str], str]:
    """A fresh compile's record of ``graph`` (``FRESH``): (its calls' inputs as it recorded them,
    those read back from the module for the record stripped of its strides, the notes, the
    module's text)."""
    fresh = json.loads((FRESH / graph / "sources.json").read_text())
    stripped = copy.deepcopy(fresh)
    for op in stripped["ops"]:
        op.pop("strides", None)
    record = source_store.carry_over({**stripped, "dynamo": {}}, {})
    assert record[source_store.STRIDES_UNRECORDED] is True
    text = (FRESH / graph / "module.py").read_text()
    module = parse_module(text)
    calls = parse_calls(text, module)
    _, recorded = call_origins(calls, fresh)
    _, shapes = call_origins(calls, record)
    got, notes = with_strides(shapes, calls, text, module, record)
    return recorded, got, notes, text


@pytest.mark.parametrize("graph", ["dynamic-forward", "dynamic-backward", "cpp-forward", "cpp-backward",
                                   "cppdyn-forward", "cppdyn-backward", "frozen-inference"])
def test_strides_rebuilt_are_those_a_fresh_compile_recorded(graph):
    """A graph compiled with dynamic shapes (``reinterpret_tensor(arg2_1, (s27, s77), (1, s27),
    0)``) or with the C++ wrapper: stripped of the strides its compile recorded, the record
    gets back those very strides, written as the lowering wrote them (``1xs27``)."""
    recorded, got, notes, _ = fresh_rebuilt(graph)
    assert got == recorded and notes == []
    assert sum("(strides " in s for call in got.values() for s in call) == (1 if "backward" in graph else 2)
    # the frozen graph's: its input made channels-last, oneDNN's weight (8x3x3x3 (strides 1x0x0x0))


def test_a_stride_that_is_a_size_symbol_is_kept_symbolic():
    """The forward's ``x.t()`` of a (64, s77) input: strides (1, s27), written as the record
    writes them, read at the measured sizes where shown."""
    _, got, _, text = fresh_rebuilt("dynamic-forward")
    assert got[0] == ["32", "s27xs77 (strides 1xs27)", "s77x32"]
    assert shapes_at(got[0], sizes(text)) == ["32", "24x64 (strides 1x24)", "64x32"]


@pytest.mark.parametrize(("recorded", "shape", "strides", "want"), [
    ("s0x64", ("s0", "64"), ("64", "1"), ""),
    ("s1xs0", ("s1", "s0"), ("1", "s1"), "1xs1"),
    ("64*s0x8", ("s0 * 64", "8"), ("1", "64 * s0"), "1x64*s0"),  # the same size, written otherwise
    ("1xs0", ("1", "s0"), ("7", "1"), ""),  # a dimension of size 1 may have any stride
    ("s0xs1", ("s0", "s1"), ("1", "1"), "1x1"),  # contiguous only where s1 is 1
    ("s0x8", ("s0", "8"), ("1", "s0 + 1"), "1xs0 + 1"),  # a sum, as the module writes it
    ("s0x8", ("s0", "8"), ("1", "(s0 // 2)"), "1xs0 // 2"),
    ("((s0 + 1)//2)x8", ("(1 + s0) // 2", "8"), ("8", "1"), ""),  # the record's text of the size
    ("s0x8", ("s0", "8"), ("1", "max(s0, 2)"), "1xmax(s0, 2)"),  # a maximum, a remainder
    ("Max(2, s0)x8", ("max(s0, 2)", "8"), ("1", "s0 + (-s0) % 8"), "1xs0 + -s0 % 8"),
    ("s0x8", ("s0", "8"), ("1", "s0 / 2"), None),  # no polynomial: unknown
    ("24x64", ("s0", "64"), ("64", "1"), None),  # a size not the recorded one: never bound
])
def test_a_stride_of_dynamic_shapes_is_judged_for_every_size(recorded, shape, strides, want):
    from inductor_bench.core.buffers import CallArgs, Tensor
    from inductor_bench.core.stride_rebuild import call_strides

    call = CallArgs("extern_kernels.mm", True, ["a"], {}, tensors=[Tensor(shape, "float32", strides=strides)])
    assert call_strides([recorded], call) == (None if want is None else [want])


def test_a_product_is_written_alike_by_the_module_and_the_record_a_sum_not():
    """Why a stride read back from the module is compared with a record's as a size, not as
    text (``sizepoly.same_shape``): the module's text of a size (Inductor's printer) and the
    record's (``str`` of the same expression) agree on products and differ on sums."""
    import sympy
    from torch.utils._sympy.printers import PythonPrinter

    s0, s1, s10, s77 = sympy.symbols("s0 s1 s10 s77", integer=True, positive=True)
    for e in (64 * s77, s10 * s1, 2 * s0 * s1 * s10):
        assert PythonPrinter().doprint(e) == str(e)
    assert (PythonPrinter().doprint(s0 + 1), str(s0 + 1)) == ("1 + s0", "s0 + 1")


def test_a_cpp_wrapper_of_dynamic_shapes_is_read_at_its_harness_sizes():
    """``int64_t s77 = primals_1;`` in ``inductor_entry_impl`` (the harness: ``primals_1 = 64``;
    the step's input is 64x24), its views of ``const int64_t int_array_2[] = {s27, s77};``: the
    inputs shown at the measured sizes, and the addmm of the 24x64 view by the 64x32 weight
    counted as such (inputs, bias and 24x32 output of float32; 2*24*64*32 FLOPs)."""
    from inductor_bench.core.graph_work import call_work
    from inductor_bench.core.symbols import free_symbols

    text = (FRESH / "cppdyn-forward" / "module.py").read_text()
    env = sizes(text)
    assert (free_symbols(text), env["s77"], env["s27"]) == (["s77", "s27"], 64, 24)
    record = json.loads((FRESH / "cppdyn-forward" / "sources.json").read_text())
    module = parse_module(text)
    _, shapes = call_origins(parse_calls(text, module), record)
    assert shapes_at(shapes[0], env) == ["32", "24x64 (strides 1x24)", "64x32"]
    work = [w for c, w in call_work(module, text) if c.extern]
    assert (work[0].bytes, work[0].flops) == ((32 + 24 * 64 + 64 * 32 + 24 * 32) * 4, 2 * 24 * 64 * 32)
    assert (work[1].bytes, work[1].flops) == ((16 + 24 * 32 + 32 * 16 + 24 * 16) * 4, 2 * 24 * 32 * 16)


def test_a_run_saved_before_strides_gets_them_on_reanalysis(tmp_path, capsys):
    """A run whose ``sources.json`` was kept by a version that recorded no strides (the recorded
    checkpointed run): ``report --reanalyze`` reads them back from its saved ``module.py``, each
    extern call's inputs as the module's ``call()`` states them (read with ``ast``); its
    transposed weights read ``256x1024 (strides 1x256)`` where they read ``256x1024``."""
    from inductor_bench import cli

    run = tmp_path / "run"
    shutil.copytree(RUNS / "cpu_checkpoint_train", run)
    assert cli.main(["report", str(run), "--reanalyze", "--format", "json"]) in (0, None)
    out = json.loads(capsys.readouterr().out)
    for g in out["graphs"]:
        want = stated((run / "graphs" / g["id"] / "module.py").read_text())
        assert [s["shapes"] for s in g["sites"] if s["callee"].startswith("extern_kernels.")] == want
        assert not g.get("attribution")
    assert sum("(strides 1x" in s for g in out["graphs"] for site in g["sites"] for s in site["shapes"]) == 10
