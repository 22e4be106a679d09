"""The constants a compiled module holds, as the model's compile made them: the weights that
freezing folds into the module (``_frozen_param3``), and the tensors a graph creates itself
(``_tensor_constant0``).

Inductor hands them to the module when it loads it (``PyCodeCache.load_by_key_path``'s
``attrs``); the module's harness sets each to ``rand_strided`` instead (``global
_frozen_param3``), and for a weight that freezing packed into oneDNN's or MKL's own layout it
hands the kernel a plain tensor of the right shape. Neither is the model's work: a frozen
MLP's GELU on the harness's weights (a deviation of 1) runs ``erf`` on large values, and a
frozen linear fed a plain tensor for its packed weight is another code path. A frozen
``Linear(768, 3072) - GELU - Linear(3072, 768)`` took 12.7 ms per call on the harness's
constants and 9.0 ms on the model's (one thread, this project's Xeon VM).

So the compile worker records them with the module's first call (``snapshot``, within what is
left of the module's budget once its inputs are kept), and every harness the tool runs on the
module sets them back (``apply``):

- a plain tensor: its values;
- a oneDNN tensor (a convolution's or linear's packed weight): its values, stored dense and
  handed back as a oneDNN tensor in the plain layout (oneDNN takes either; the result is the
  same, checked by ``tests/test_call_constants.py``);
- an MKL-packed weight: not stored, packed again from its weight
  (``core/packed_weights.py`` says why);
- a float past the budget: the harness's seeded draw, at the mean and deviation it had.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.devices import HOST_BACKEND
from ..core.packed_weights import mkl_packed

COPIED, SCALED = "copied", "scaled"


@dataclass
class Constants:
    """A module's constants as its first call had them (the ``constants`` of ``inputs.pt``)."""

    names: list[str] = field(default_factory=list)  # every tensor constant the module holds
    values: dict[str, Any] = field(default_factory=dict)  # name -> its values, on the host
    opaque: set[str] = field(default_factory=set)  # of values: oneDNN tensors, stored dense
    scales: dict[str, Any] = field(default_factory=dict)  # name -> (mean, deviation), past the budget

    def to_record(self) -> dict[str, Any]:
        return {"names": list(self.names), "values": dict(self.values), "opaque": sorted(self.opaque),
                "scales": dict(self.scales)}

    @classmethod
    def from_record(cls, data: dict[str, Any] | None) -> Constants:
        data = data or {}
        return cls(list(data.get("names") or ()), dict(data.get("values") or {}),
                   set(data.get("opaque") or ()), dict(data.get("scales") or {}))


@dataclass
class Given:
    """What ``apply`` set: ``copied`` constants to their values (an MKL-packed one packed again
    from its copied weight), ``scaled`` to a draw at their scale, of ``total``."""

    copied: int = 0
    total: int = 0
    scaled: int = 0


def tensor_constants(attrs: dict[str, Any] | None) -> dict[str, Any]:
    """The tensors among what Inductor hands a module when it loads it."""
    import torch

    return {k: v for k, v in (attrs or {}).items() if isinstance(v, torch.Tensor)}


def _opaque(t: Any) -> bool:
    import torch

    return t.layout == torch._mkldnn


def recordable(value: Any) -> bool:
    """A plain tensor or a parameter (not complex, not quantized, not a subclass that wraps
    others): its first call's values are kept (the inputs, ``call_inputs``, and constants)."""
    import torch

    return (type(value) in (torch.Tensor, torch.nn.Parameter) and not value.is_complex()
            and not value.is_quantized)


def _recordable(t: Any) -> bool:
    """A constant that is recordable and strided or oneDNN's own (kept dense)."""
    import torch

    return recordable(t) and (t.layout == torch.strided or _opaque(t))


def snapshot(constants: dict[str, Any], text: str, budget: int, max_tensor: int) -> Constants:
    """Host copies of the module's constants, in the order the module holds them, up to
    ``max_tensor`` bytes each and ``budget`` bytes in all; the MKL-packed ones are left out
    (packed again from their weights); a float past the budget keeps its mean and deviation."""
    import torch

    packed = mkl_packed(text)
    out = Constants(names=list(constants))
    total = 0
    for name, t in constants.items():
        if name in packed or not _recordable(t):
            continue
        dense = t.detach().to_dense() if _opaque(t) else t.detach()
        size = dense.numel() * dense.element_size()
        if size > max_tensor or total + size > budget:
            if dense.is_floating_point() and dense.numel() > 1:
                std, mean = torch.std_mean(dense.float())
                out.scales[name] = torch.tensor([float(mean), float(std)], dtype=torch.float64)
            continue
        out.values[name] = dense.to(HOST_BACKEND.name, copy=True)
        total += size
        if _opaque(t):
            out.opaque.add(name)
    return out


def apply(mod: Any, record: Constants) -> Given:
    """Set the module's constants (after its harness drew its own) to the recorded ones."""
    given: dict[str, str] = {}
    for name, value in record.values.items():
        if _set(mod, name, lambda t, v=value: v.to(t.device), name in record.opaque, exact=value):
            given[name] = COPIED
    for name, pair in record.scales.items():
        mean, std = (float(x) for x in pair.tolist())
        finite = math.isfinite(mean) and math.isfinite(std)
        if finite and _set(mod, name, _draw(mean, std), name in record.opaque):
            given[name] = SCALED
    _pack_again(mod, given)
    return Given(copied=sum(v == COPIED for v in given.values()), total=len(record.names),
                 scaled=sum(v == SCALED for v in given.values()))


def _draw(mean: float, std: float) -> Any:
    import torch

    def make(t: Any) -> Any:
        return torch.randn(t.shape, dtype=t.dtype, device=t.device).mul_(std).add_(mean)

    return make


def _set(mod: Any, name: str, make: Any, opaque: bool, exact: Any = None) -> bool:
    """Replace the module's ``name`` (the harness's tensor) with ``make(that tensor)``, as a
    oneDNN tensor where the module had one; False where the harness has no such tensor or the
    recorded values do not fit it."""
    import torch

    target = getattr(mod, name, None)
    if not isinstance(target, torch.Tensor):
        return False
    if exact is None and not target.is_floating_point():  # a draw at a scale: floats only
        return False
    if exact is not None and (tuple(target.shape) != tuple(exact.shape) or target.dtype != exact.dtype):
        return False
    try:
        value = make(target)
        setattr(mod, name, value.to_mkldnn() if opaque else value)
    except RuntimeError:  # a dtype oneDNN or randn does not take: the harness's draw stays
        return False
    return True


def _pack_again(mod: Any, given: dict[str, str]) -> None:
    """Pack each MKL-packed constant again from its weight, as the compile did, where that
    weight was set."""
    import torch

    path = getattr(mod, "__file__", None)
    if not path:
        return
    for name, p in mkl_packed(Path(path).read_text(errors="replace")).items():
        if p.weight in given and hasattr(mod, name):
            with contextlib.suppress(RuntimeError, AttributeError):
                weight = getattr(mod, p.weight)
                setattr(mod, name, torch.ops.mkl._mkl_reorder_linear_weight(weight, p.batch_size))
                given[name] = given[p.weight]
