"""The one line a failure in the user's model becomes (``runner/failures.py``), on the
exceptions torch raises (built here with the message torch 2.13.0 wrote for a Linear(4, 4)
given a (2, 5) input, recorded 2026-12-04 on the CPU machine)."""

from __future__ import annotations

import pytest

from inductor_bench.runner.failures import describe

torch_exc = pytest.importorskip("torch._dynamo.exc")

FAKE_RUN = (
    "RuntimeError when making fake tensor call\n  Explanation: Dynamo failed to run FX node with fake "
    "tensors: call_function <built-in function linear>(*(FakeTensor(..., size=(2, 5)), Parameter("
    "FakeTensor(..., size=(4, 4), requires_grad=True)), Parameter(FakeTensor(..., size=(4,), "
    "requires_grad=True))), **{}): got RuntimeError('a and b must have same reduction dim, but got "
    "[2, 5] X [4, 4].')\n  Hint: Your code may result in an error when running in eager.\n\nfrom user "
    "code:\n   File \"linear.py\", line 134, in forward\n    return F.linear(input, self.weight, self.bias)\n"
)


def test_a_shape_error_met_by_the_fake_tensors_is_the_ops_own_error():
    e = torch_exc.TorchRuntimeError(FAKE_RUN)
    assert describe(e) == ("the model failed as torch.compile traced it: RuntimeError: a and b must have "
                           "same reduction dim, but got [2, 5] X [4, 4].")


def test_other_failures_keep_their_first_line():
    assert describe(ValueError("bad input\nmore")) == "the model raised: ValueError: bad input"
    assert describe(torch_exc.TorchRuntimeError("something else\nx"), "the script") == (
        "torch.compile failed: TorchRuntimeError: something else")
