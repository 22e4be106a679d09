"""A frame of torch's own that several functions were compiled through is not named after the
first of them.

``layer = torch.compile(nn.Sequential(...)); head = torch.compile(nn.Linear(...))`` in one
script (torch 2.13 CPU): both modules run through torch.compile's one wrapper frame, which
Dynamo compiles again for the second module (a guard on the module's type failed). The
recompile line read `Sequential.forward (container.py:248) was compiled 2 times: 0
(0-inference); 0.1 (0.1-inference)`, while the graph origins said 0.1-inference came from
Linear.forward (synthetic result, built here).
"""

from __future__ import annotations

from inductor_bench.core import compiles
from inductor_bench.core.results import BreakdownResult, GraphResult
from inductor_bench.render.breakdown import render_breakdown

TORCH = "/usr/lib/python3/site-packages/torch/nn/modules"


def graph(gid: str, compile_id: int, name: str, file: str, line: int) -> GraphResult:
    return GraphResult(id=gid, role="inference", frame_id=0, frame_compile_id=compile_id, calls=1.0,
                       compiled_from={"name": name, "file": f"{TORCH}/{file}", "line": line})


def two_modules() -> BreakdownResult:
    return BreakdownResult(model="m", script=True, graphs=[
        graph("0-inference", 0, "Sequential.forward", "container.py", 248),
        graph("0.1-inference", 1, "Linear.forward", "linear.py", 130)])


def test_each_compile_of_a_frame_several_functions_went_through_is_named_with_its_own():
    (line,) = compiles.lines(two_modules())
    assert line == (
        "recompiles: frame 0, one frame of torch's that 2 functions were compiled through, was compiled 2 "
        "times, again each time one of Dynamo's guards failed (another size, dtype or grad mode): "
        "0 (0-inference, Sequential.forward (container.py:248)); 0.1 (0.1-inference, Linear.forward "
        "(linear.py:130)). A call runs one of them; the all-graphs row adds each as often as it was called")
    text = " ".join(render_breakdown(two_modules()).split())
    assert line in text
    assert "Sequential.forward (container.py:248) was compiled" not in text


def test_a_function_compiled_again_is_still_named_once():
    r = two_modules()
    r.graphs[1].compiled_from = dict(r.graphs[0].compiled_from)
    (line,) = compiles.lines(r)
    assert line.startswith("recompiles: Sequential.forward (container.py:248) was compiled 2 times")
    assert "0 (0-inference); 0.1 (0.1-inference)." in line
