"""A failure in the user's model or script, as one line: where it failed, the exception, and
the line of its message that says why."""

from __future__ import annotations

import re

from ..core import graph_breaks

# torch.compile's fake-tensor run of an op that failed (Dynamo's TorchRuntimeError): the op's own
# error is quoted in the message, "... got RuntimeError('a and b must have same reduction dim')"
_FAKE_CAUSE = re.compile(r"\bgot (?P<type>\w*(?:Error|Exception))\((?P<q>['\"])(?P<msg>.+?)(?P=q)\)")


def describe(e: BaseException, what: str = "the model") -> str:
    """One line: where it failed, the exception and its first line; where that line only
    introduces the cause (``backend='inductor' raised:``), the cause's line after it; where
    torch.compile's fake tensors ran an op that failed (a shape error, which eager would raise
    as well), that op's own error."""
    msg = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    first = msg[0] if msg else ""
    if first.endswith(":") and len(msg) > 1:
        first = f"{first} {msg[1]}"
    mod = type(e).__module__ or ""
    if mod == "torch._dynamo.exc" and type(e).__name__ == "Unsupported" and (
            line := graph_breaks.fullgraph_error(str(e))):
        return f"torch.compile failed: {line}"[:600]
    if type(e).__name__ == "TorchRuntimeError" and (cause := _FAKE_CAUSE.search(str(e))):
        return f"{what} failed as torch.compile traced it: {cause['type']}: {cause['msg']}"[:600]
    if isinstance(e, KeyboardInterrupt):  # its own: a stop signal's never reaches describe
        return (f"{what} raised KeyboardInterrupt itself (not a Ctrl-C: no signal reached it)"
                + (f": {first}" if first else ""))[:600]
    where = (
        "torch.compile failed" if mod.startswith(("torch._dynamo", "torch._inductor")) else f"{what} raised"
    )
    return f"{where}: {type(e).__name__}: {first}"[:600]
