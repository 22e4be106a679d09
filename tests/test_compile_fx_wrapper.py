"""The wrapper around Inductor's ``compile_fx`` that records each compile's dynamo graph
(``runner/dynamo_graphs.py``): what carries a cached module's lines over to a later run. The
recorder installs it at the first structured record it receives, and on torch 2.8 that record
comes while ``torch._inductor.compile_fx`` is still being imported (the import warms the compile
pool, which logs a timing record), before the function exists. Installing then used to give up
for good: every compile of the process went unrecorded, and every cache hit lost its lines."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")


def test_a_call_during_compile_fx_s_import_leaves_the_wrapping_to_the_next(monkeypatch):
    """Synthetic: the module without its function, as while it is imported; then the function
    there, and a real compile through it is recorded by compile id."""
    import torch._inductor.compile_fx as cfx

    from inductor_bench.runner.dynamo_graphs import DynamoGraphs

    real = cfx.compile_fx
    if getattr(real, DynamoGraphs.WRAPPED, False):  # an earlier recorder of this process's
        real = real.__wrapped__
    monkeypatch.delattr(cfx, "compile_fx")
    graphs = DynamoGraphs()
    graphs.install()
    assert not graphs.installed
    monkeypatch.setattr(cfx, "compile_fx", real, raising=False)
    graphs.install()
    assert graphs.installed and getattr(cfx.compile_fx, DynamoGraphs.WRAPPED) is True

    torch._dynamo.reset()
    try:
        out = torch.compile(lambda x: torch.sin(x) + 1)(torch.ones(4))
    finally:
        torch._dynamo.reset()
    assert torch.equal(out, torch.sin(torch.ones(4)) + 1)
    (nodes,) = graphs.by_compile.values()
    assert [rec["op"] for rec in nodes.values()] == ["call_function:_VariableFunctionsClass.sin",
                                                     "call_function:add"]
