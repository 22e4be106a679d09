"""Graph breaks at which Inductor failed on the graph Dynamo gave it, told as what to change."""

from __future__ import annotations

from typing import Any

SCALAR_READ = "_local_scalar_dense"  # the op of Tensor.item(), which a fake tensor cannot answer
WHILE_LOOP_FILE = "torch/_higher_order_ops/while_loop.py"
SCALAR_CAUSE = ("the graph reads a tensor's value into Python (.item(), aten._local_scalar_dense), which "
                "torch.compile traces only with torch._dynamo.config.capture_scalar_outputs = True")
WHILE_LOOP_CAUSE = ("torch's while_loop backward reads its trip count with .item() "
                    f"(aten._local_scalar_dense, {WHILE_LOOP_FILE}), which torch.compile traces only with "
                    "torch._dynamo.config.capture_scalar_outputs = True (set it in make_workload() or the "
                    "script) or under fullgraph=True: without either, torch runs a while_loop's training "
                    "step eagerly")


def is_scalar_read(b: dict[str, Any]) -> bool:
    """A break where the backend failed on a ``.item()`` in the graph (torch 2.13: "Backend
    compiler `inductor` failed with aten._local_scalar_dense.default. Adding a graph break.")."""
    reason = str(b.get("reason", ""))
    return SCALAR_READ in reason and "backend" in reason.lower()


def cause_first(breaks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The breaks with the first backend failure on a ``.item()`` first, its ``cause`` saying
    what to change (a while_loop's backward where a break is in torch's while_loop): the other
    breaks at the same place (WON'T CONVERT) only follow from it."""
    failed = next((b for b in breaks if is_scalar_read(b)), None)
    if failed is None:
        return breaks
    loop = any(b.get("in_library") == WHILE_LOOP_FILE for b in breaks)
    first = {**failed, "cause": WHILE_LOOP_CAUSE if loop else SCALAR_CAUSE}
    first.pop("hint", None)  # Dynamo's: "Report an issue to the backend compiler repo."
    return [first, *(b for b in breaks if b is not failed)]
