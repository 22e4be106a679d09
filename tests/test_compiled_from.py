"""Which user function each graph was compiled from: found on the stack while Dynamo compiles
(``runner/dynamo_frame.py``), shared with the backward of the same compile, said in the report
and checked by diff. Results here are hand-built (synthetic); the end-to-end check is
``tests/test_cli_errors.py::test_script_with_graph_break`` and ``tests/test_script_args.py``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from inductor_bench.core.compiled_from import code_label, origins_line, same_code
from inductor_bench.core.diff import diff_results
from inductor_bench.core.results import BreakdownResult, GraphResult
from inductor_bench.render.breakdown import render_breakdown
from inductor_bench.runner.dynamo_frame import compiled_code
from inductor_bench.runner.graph_sources import _share_code

FORWARD = {"name": "Block.forward", "file": "/m/transformer_block.py", "line": 19}
RESUMED = {"name": "torch_dynamo_resume_in_f_at_10", "file": "/m/script.py", "line": 10}


def test_labels_name_the_function_its_file_and_line():
    assert code_label(FORWARD) == "Block.forward (transformer_block.py:19)"
    assert code_label(RESUMED) == "f after its graph break at line 10 (script.py:10)"
    assert code_label({"name": "<lambda>", "file": "C:\\m\\x.py", "line": 3}) == "<lambda> (x.py:3)"
    assert code_label(None) is None and code_label({}) is None


def test_a_graphmodules_generated_forward_is_named_so_and_the_same_code_in_every_run():
    """An exported or PT2E-quantized model is a GraphModule whose ``forward`` torch.fx generated
    (``<eval_with_key>.15``, recorded with torch 2.13 and torchao 0.18): named so, and the same
    code in a run whose process generated another number of modules first."""
    fx = {"name": "forward", "file": "<eval_with_key>.15", "line": 4}
    assert code_label(fx) == "forward of a torch.fx GraphModule (its generated code, <eval_with_key>.15:4)"
    assert same_code(_graph("0-inference", fx), _graph("0-inference", {**fx, "file": "<eval_with_key>.9"}))
    assert not same_code(_graph("0-inference", fx), _graph("0-inference", {**fx, "file": "/m/eval.py"}))


def _graph(gid: str, code: dict | None, frame: int = 0) -> GraphResult:
    return GraphResult(id=gid, role=gid.split("-")[1], frame_id=frame, frame_compile_id=0, iterations=4,
                       wall_ms=1.0, wall_samples_ms=[1.0] * 4, compiled_from=code)


def _result(*graphs: GraphResult) -> BreakdownResult:
    return BreakdownResult(model="m", graphs=list(graphs))


def test_graphs_of_one_function_are_named_together():
    r = _result(_graph("0-forward", FORWARD), _graph("0-backward", FORWARD), _graph("1-forward", RESUMED, 1))
    assert origins_line(r) == (
        "graph origins: 0-forward, 0-backward from Block.forward (transformer_block.py:19); "
        "1-forward from f after its graph break at line 10 (script.py:10)")
    assert origins_line(r) in render_breakdown(r)
    assert origins_line(_result(_graph("0-forward", None))) is None
    back = BreakdownResult.from_dict(r.to_dict())
    assert [g.compiled_from for g in back.graphs] == [FORWARD, FORWARD, RESUMED]
    assert "compiled_from" not in _result(_graph("0-forward", None)).to_dict()["graphs"][0]


def test_a_backward_takes_the_code_of_its_forward():
    graphs = [_graph("0-forward", FORWARD), _graph("0-backward", None), _graph("1-backward", None, 1)]
    _share_code(graphs)
    assert [g.compiled_from for g in graphs] == [FORWARD, FORWARD, None]


def test_diff_warns_when_a_graph_id_is_another_function_on_each_side():
    base = _result(_graph("0-inference", FORWARD), _graph("1-inference", RESUMED, 1))
    moved = {**RESUMED, "line": 12}  # an edit above it: the same function
    head = _result(_graph("0-inference", FORWARD), _graph("1-inference", {**RESUMED, "name": "g"}, 1))
    assert not same_code(base.graphs[1], head.graphs[1])
    assert same_code(base.graphs[1], _graph("1-inference", moved, 1))
    (w,) = [w for w in diff_results(base, head).warnings if "other code" in w]
    assert w == ("1-inference was compiled from other code: base f after its graph break at line 10 "
                 "(script.py:10), head g (script.py:10): its figures compare two functions")



def test_diff_says_a_graph_from_a_function_of_the_same_name_differs_in_its_file_alone():
    """Synthetic: one model copied to another file (block_copy.py), the same function, line and
    code: the warning names the file as what differs, not 'other code'."""
    copy = {**FORWARD, "file": "/m/block_copy.py"}
    base, head = _result(_graph("0-inference", FORWARD)), _result(_graph("0-inference", copy))
    (w,) = [w for w in diff_results(base, head).warnings if "0-inference was compiled" in w]
    assert w == ("0-inference was compiled from a function of the same name in another file: base "
                 "Block.forward (transformer_block.py:19), head Block.forward (block_copy.py:19) (a "
                 "function is known by its name and file, not its source: a copy of one model in "
                 "another file differs so too)")


DYNAMO_LIKE = '''
import sys
from pathlib import Path
def _compile(code):
    return sys._getframe()
'''


def user_function(x):
    return x


def test_the_code_dynamo_holds_is_found_on_the_stack():
    """A frame of torch/_dynamo/convert_frame.py holding the code being compiled as ``code`` (as
    its _compile does) gives its name, file and first line, torch's own code included; a frame
    of another file does not."""
    ns: dict = {}
    exec(compile(DYNAMO_LIKE, "/site-packages/torch/_dynamo/convert_frame.py", "exec"), ns)
    found = compiled_code(ns["_compile"](user_function.__code__))
    assert found == {"name": "user_function", "file": __file__,
                     "line": user_function.__code__.co_firstlineno}
    torch_own = compile("0", "/x/torch/nn/modules/container.py", "eval")  # Sequential.forward's file
    assert compiled_code(ns["_compile"](torch_own))["file"] == "/x/torch/nn/modules/container.py"
    elsewhere: dict = {}
    exec(compile(DYNAMO_LIKE, "/site-packages/torch/_dynamo/output_graph.py", "exec"), elsewhere)
    assert compiled_code(elsewhere["_compile"](user_function.__code__)) is None
    assert compiled_code(sys._getframe()) is None


def logged(func):
    def wrapper(*a, **k):
        return func(*a, **k)
    return wrapper


def renamed(func):  # as functools.wraps leaves it: __wrapped__ names the function within
    def outer(*a, **k):
        return func(*a, **k)
    outer.__wrapped__ = func
    return outer


@logged
@renamed
def decorated(x):
    return x


DYNAMO_2_5 = '''
import sys
from pathlib import Path
def _compile(code, globals, locals):
    return sys._getframe()
'''
DYNAMO_2_14 = '''
import sys
from pathlib import Path
def _compile(code, globals, locals, builtins, closure):
    return sys._getframe()
'''


def test_a_decorators_wrapper_is_named_by_the_function_it_wraps():
    """Dynamo compiles the outermost wrapper; the function within is found through the free
    variables (2.5's ``locals``, 2.14's ``closure``), a wrapper within a wrapper, and
    ``__wrapped__``."""
    wrapper = decorated
    ns5: dict = {}
    exec(compile(DYNAMO_2_5, "/t/torch/_dynamo/convert_frame.py", "exec"), ns5)
    ns14: dict = {}
    exec(compile(DYNAMO_2_14, "/t/torch/_dynamo/convert_frame.py", "exec"), ns14)
    free = dict(zip(wrapper.__code__.co_freevars, (c.cell_contents for c in wrapper.__closure__), strict=True))
    inner = {"name": "decorated", "file": __file__, "line": decorated_line()}
    g = wrapper.__globals__  # as Dynamo passes them: the compiled frame's globals
    for frame in (ns5["_compile"](wrapper.__code__, g, free),
                  ns14["_compile"](wrapper.__code__, g, {}, {}, wrapper.__closure__)):
        found = compiled_code(frame)
        assert found["name"] == "logged.<locals>.wrapper" and found["wraps"] == inner
    label = code_label(found)
    assert label == f"decorated (test_compiled_from.py:{inner['line']}), through its decorator logged"
    # the same function through another wrapper on the other side: the same code
    a, b = _graph("0-forward", found), _graph("0-forward", {**found, "name": "other.<locals>.w"})
    assert same_code(a, b) and not same_code(a, _graph("0-forward", FORWARD))


def decorated_line() -> int:
    """The first line of ``decorated`` as Python counts it: its first decorator's."""
    lines = Path(__file__).read_text().splitlines()
    return lines.index("def decorated(x):") + 1 - 2


WRAP_INLINE = '''
def wrap_inline(fn):
    def inner(*args, **kwargs):
        return fn(*args, **kwargs)
    return inner
'''


class Net:
    def forward(self, x):
        return x

    def __call__(self, x):
        return self.forward(x)


def test_dynamos_own_wrapper_of_a_module_is_named_by_the_modules_forward():
    """torch.compile of a module can compile Dynamo's ``wrap_inline`` around the module: the
    graph is the module's ``forward`` (``Sequential.forward`` for an nn.Sequential), with no
    decorator named, since the model has none."""
    ns: dict = {}
    exec(compile(WRAP_INLINE, "/t/torch/_dynamo/external_utils.py", "exec"), ns)
    inner = ns["wrap_inline"](Net())
    dyn: dict = {}
    exec(compile(DYNAMO_2_14, "/t/torch/_dynamo/convert_frame.py", "exec"), dyn)
    found = compiled_code(dyn["_compile"](inner.__code__, inner.__globals__, {}, {}, inner.__closure__))
    assert found == {"name": "Net.forward", "file": __file__, "line": Net.forward.__code__.co_firstlineno}


class Ambiguous:
    """As a tensor of several values: no truth value, and a ``forward``-less callable."""

    def __bool__(self):
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")


def with_a_tensor(func, scale):
    def wrapper(*a):
        return func(*a) * scale
    return wrapper


def test_a_wrapper_holding_a_tensor_still_names_the_function_it_wraps():
    wrapper = with_a_tensor(user_function, Ambiguous())
    dyn: dict = {}
    exec(compile(DYNAMO_2_5, "/t/torch/_dynamo/convert_frame.py", "exec"), dyn)
    free = dict(zip(wrapper.__code__.co_freevars, (c.cell_contents for c in wrapper.__closure__), strict=True))
    found = compiled_code(dyn["_compile"](wrapper.__code__, wrapper.__globals__, free))
    assert found["wraps"]["name"] == "user_function"
    assert code_label(found).endswith(", through its decorator with_a_tensor")


class Holder:
    def method(self):
        pass

    @staticmethod
    def static():
        pass

    @classmethod
    def klass(cls):
        pass


def test_python_3_10_finds_the_qualified_name_in_the_frames_globals():
    """Python 3.10's code objects have no ``co_qualname``: the name is found in the globals
    Dynamo compiles the frame with. Checked here against the interpreter's own qualified names
    (3.11 on), and the graph still names its function where the globals do not hold it."""
    from inductor_bench.runner.dynamo_frame import globals_qualname, qualname

    g = globals()
    codes = [Holder.method.__code__, Holder.static.__code__, Holder.klass.__code__, user_function.__code__,
             decorated.__code__, with_a_tensor(user_function, 1).__code__, Net.forward.__code__]
    truth = ["Holder.method", "Holder.static", "Holder.klass", "user_function", "logged.<locals>.wrapper",
             "with_a_tensor.<locals>.wrapper", "Net.forward"]
    assert [globals_qualname(c, g) for c in codes] == truth
    if sys.version_info >= (3, 11):
        assert truth == [c.co_qualname for c in codes]
    assert globals_qualname(user_function.__code__, {}) is None
    assert qualname(user_function.__code__, None) == getattr(user_function.__code__, "co_qualname", "user_function")


ADAM = {"name": "Adam.step", "file": "/venv/lib/python3.11/site-packages/torch/optim/adam.py", "line": 214}
STEP = {"name": "step", "file": "/m/trainstep.py", "line": 7}


def test_the_top_level_of_each_function_is_named_where_the_graphs_come_from_several():
    """Synthetic, after a real run (torch 2.13.0): ``@torch.compile def step(): loss.backward();
    opt.step()`` compiles ``step`` and ``Adam.step`` (the optimizer's graph after torch's own
    graph break): neither's code is in an nn.Module, and the two are named apart."""
    from inductor_bench.core.compiled_from import top_levels

    fwd, bwd, opt = _graph("0-forward", STEP), _graph("0-backward", STEP), _graph("3-inference", ADAM, 3)
    assert top_levels([fwd, bwd, opt]) == {"0-forward": "(top level of step)", "0-backward": "(top level of step)",
                                           "3-inference": "(top level of Adam.step)"}
    # one function: its code is simply the top level; a graph of unknown code changes nothing
    assert top_levels([fwd, bwd]) == {} and top_levels([fwd, _graph("1-forward", None, 1)]) == {}
    # a method resumed after a graph break is the same function: its code names no class
    resumed = {"name": "torch_dynamo_resume_in_forward_at_25", "file": "/m/transformer_block.py", "line": 25}
    assert top_levels([_graph("1-forward", resumed, 1), _graph("0-forward", FORWARD)]) == {}
    # two classes' forwards of one file (regional compilation) are two functions
    head = {"name": "Head.forward", "file": "/m/transformer_block.py", "line": 40}
    assert top_levels([_graph("0-forward", FORWARD), _graph("1-forward", head, 1)]) == {
        "0-forward": "(top level of Block.forward)", "1-forward": "(top level of Head.forward)"}
    assert top_levels([_graph("0-forward", FORWARD), _graph("1-forward", head, 1),
                       _graph("2-forward", resumed, 2)])["2-forward"] == "(top level of forward)"  # which one: unknown
    ca = _graph("2-inference", FORWARD, 2)
    ca.compiled_autograd = True
    assert top_levels([fwd, ca]) == {"0-forward": "(top level of step)",
                                     "2-inference": "(compiled autograd's backward)"}


def test_the_views_keep_the_top_level_of_each_function_apart():
    """Synthetic: the loss's kernel in ``step`` and the optimizer's update in ``Adam.step``, both
    outside every nn.Module, are two groups of the view by module, each named in the kernel
    tables (as ``report --by module`` showed them merged into one "(top level)" before)."""
    from inductor_bench.core.results import KernelStat
    from inductor_bench.core.sources import Origin, SourceLine

    def kernel(name: str, ms: float, file: str, line: int) -> KernelStat:
        origin = Origin(nodes=["n"], lines=[SourceLine(file, line)], modules=[""])
        return KernelStat(name=name, category="cpp_pointwise", calls=1, ms=ms, samples_ms=[ms] * 4, origin=origin)

    fwd, opt = _graph("0-forward", STEP), _graph("3-inference", ADAM, 3)
    fwd.kernels, fwd.kernel_ms = [kernel("cpp_fused_mse_loss_0", 0.01, STEP["file"], 9)], 0.01
    opt.kernels, opt.kernel_ms = [kernel("cpp_fused_add_lerp_0", 0.25, ADAM["file"], 414)], 0.25
    text = render_breakdown(_result(fwd, opt), by="module")
    rows = [ln for ln in text.splitlines() if ln.rstrip().endswith(("(top level of Adam.step)", "(top level of step)"))]
    assert [ln.split()[1] for ln in rows] == ["0.250", "0.010"], rows  # two groups, their own times
    assert "(top level of F) = the code of the compiled function F itself" in text
    assert "(top level of Adam.step) · adam.py:414" in render_breakdown(_result(fwd, opt))
    # by line: torch's line by its path within the package, the model's by its file's name
    by_line = render_breakdown(_result(fwd, opt), by="line")
    assert "torch/optim/adam.py:414" in by_line and "trainstep.py:9" in by_line and "/venv" not in by_line
    # one function: the plain top level, as always
    alone = render_breakdown(_result(fwd), by="module")
    assert "(top level)" in alone and "top level of" not in alone


LIBRARY_LIKE = '''
def step(compile_it, code, look):
    return compile_it(code, look)
'''
DYNAMO_LOOKS = '''
import sys
def _compile(code, look):
    return look(sys._getframe())  # while the stack is live, as Inductor writes the module
'''
HARNESS_LIKE = '''
def run(fn, *args):
    return fn(*args)
'''


def test_a_library_function_is_named_with_the_models_line_that_called_it():
    """Synthetic frames: Dynamo compiling a function of torch's (an optimizer's ``step``) that
    the model called: the innermost frame outside every library, inside the tool's harness,
    is the model's line, recorded as ``called_from``; the model's own function records none."""
    from inductor_bench.runner import dynamo_frame

    dynamo, library, harness = {}, {}, {}
    exec(compile(DYNAMO_LOOKS, "/venv/site-packages/torch/_dynamo/convert_frame.py", "exec"), dynamo)
    exec(compile(LIBRARY_LIKE, "/venv/lib/python3.11/site-packages/torch/optim/optimizer.py", "exec"), library)
    exec(compile(HARNESS_LIKE, dynamo_frame.OWN_DIR + "runner/harness.py", "exec"), harness)
    adam = compile("0", "/venv/lib/python3.11/site-packages/torch/optim/adam.py", "eval")

    def train(code):  # the model's code, which the harness runs (a script's module, a factory's step)
        return library["step"](dynamo["_compile"], code, compiled_code)

    found = harness["run"](train, adam)
    line = train.__code__.co_firstlineno + 1
    assert found["called_from"] == {"file": __file__, "line": line}
    mine = harness["run"](library["step"], dynamo["_compile"], user_function.__code__, compiled_code)
    assert "called_from" not in mine
    # the harness called the library's function itself (a factory's model): no line of the model
    called = harness["run"](dynamo["_compile"], adam, compiled_code)
    assert called["name"] == "<module>" and "called_from" not in called
    # said in the graph origins
    code = {"name": "Adam.step", "file": "/v/torch/optim/adam.py", "line": 214,
            "called_from": {"file": "/m/train.py", "line": 11}}
    assert origins_line(_result(_graph("3-inference", code))) == (
        "graph origins: 3-inference from Adam.step (adam.py:214), called from train.py:11")


SEQUENTIAL_SCRIPT = '''import torch
model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU())
compiled = torch.compile(model)
for _ in range(2):
    compiled(torch.randn(4, 8))
'''


@pytest.mark.slow  # compiles a script: tens of seconds (the quick suite's 15 minutes)
def test_a_compiled_torch_module_names_the_scripts_line_that_called_it(tmp_path):
    """Real (CPU): ``torch.compile(nn.Sequential(...))`` compiles torch's own
    ``Sequential.forward``; the graph origins name the script's line that called it, and each
    kernel the line that built its module."""
    import json
    import subprocess

    script = tmp_path / "seq.py"
    script.write_text(SEQUENTIAL_SCRIPT)
    p = subprocess.run(
        [sys.executable, "-m", "inductor_bench.cli", "breakdown", str(script), "--device", "cpu",
         "--iterations", "5", "--windows", "1", "--processes", "1", "--out", str(tmp_path / "run"),
         "--json", str(tmp_path / "r.json")], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    (g,) = json.loads((tmp_path / "r.json").read_text())["graphs"]
    assert g["compiled_from"]["name"] == "Sequential.forward"
    assert g["compiled_from"]["called_from"] == {"file": str(script), "line": 5}
    report = (tmp_path / "run" / "report.txt").read_text()
    assert f"graph origins: {g['id']} from Sequential.forward (container.py:" in report
    assert "), called from seq.py:5" in report
    # its kernels ran torch's code alone: each names the script's line that built its module
    assert g["module_sites"]["0"][:2] == [str(script), 2] and g["module_sites"]["1"][1] == 2
    assert "0 (Linear) · built at seq.py:2" in report and "1 (ReLU) · built at seq.py:2" in report
