"""The values a compiled graph's first real call had: its tensor inputs (weights, activations,
token ids, positions, a KV cache's write index, attention masks, pooling indices, dropout
seeds), within a size budget.

A module's harness (``get_args()``) fills every input with ``rand_strided``, which draws
floats from ``randn`` and makes every integer and boolean tensor **zeros**. Neither is the
model's work:

- **Integers and booleans**: an LLM decode step's cache position of 0 makes a negative index
  and the kernel stops with "index out of bounds" (or aborts the process inside an OpenMP
  region), and zeros send every gather and scatter to one row, a different and faster access
  pattern than the model's.
- **Floats**: ``randn`` weights (a standard deviation of 1, where a model's are initialised
  and trained to about 0.02) make activations tens of times the model's, and a kernel's speed
  can follow its values: a small BERT's fused GELU took 804 us per call on the harness's
  weights and 118 us on weights of the model's scale (``erf`` of large values: denormals).

So the compile worker records, on each module's first call, its tensor inputs (``attach``):
the integer and boolean ones first, then the floats, up to ``MAX_TENSOR_BYTES`` each and
``MAX_MODULE_BYTES`` a module; every harness the tool runs on a module copies them over the
harness's draws (``apply``). A float past the budget (the weights of a model of gigabytes)
keeps the harness's seeded draw, brought to the mean and standard deviation it had.

Some of these inputs the graph itself changes: a static KV cache's position counter, advanced
in place by every call. Called again and again on the same inputs, as a profile does, the
counter runs past the cache and the kernel stops. The record says which inputs the first call
changed, and ``Restorer.restore`` puts them back before each call, outside the timed part.

The constants the module holds (frozen weights, tensors a graph creates) are recorded with
the first call too, in what is left of the module's budget (``runner/call_constants.py``).

A dynamic-shape graph is called at other sizes than its first call's (``core/call_sizes.py``):
every call is counted by the values of its size symbols (``size_counts``), and the first call
at each new size (up to ``MAX_SIZE_RECORDS`` of them) records the inputs whose shape differs
from the first call's, within ``MAX_SIZED_BYTES`` each, to ``<module name>.<sizes>.pt``
(``inputs.<sizes>.pt`` in the graph's directory): a profile at those sizes runs on them
(``apply_sized``).

The record is ``inputs.pt`` beside the module (``{"inputs": {position: tensor}, "mutated":
[position, ...], "scales": {position: (mean, deviation)}, "constants": {...}}``), read with
``torch.load(weights_only=True)``: tensors only, nothing that runs code.
"""

from __future__ import annotations

import contextlib
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.call_sizes import MAX_SIZE_RECORDS, size_positions, sizes_key
from ..core.devices import HOST_BACKEND
from ..core.rundir import CALL_INPUTS_FILE
from . import call_constants
from .call_constants import recordable
from .script_stop import after_graph_call

MAX_TENSOR_BYTES = 64 << 20  # a larger input keeps the harness's draw
MAX_MODULE_BYTES = 256 << 20
MAX_SIZED_BYTES = MAX_MODULE_BYTES // MAX_SIZE_RECORDS  # a record at other sizes than the first call's
_WRAPPED = "_inductor_bench_call_inputs"
_RECORDS: list[Path] = []  # where this process records (the compile worker: its run's inputs/)
_CALLS: dict[str, int] = {}  # module name -> calls of its call() so far in this process
_SIZES: dict[str, CallSizes] = {}  # module name -> the sizes its calls ran at


def attach(out_dir: Path) -> None:
    """From now on, every compiled module Inductor loads records its first call's tensor inputs
    and the constants it was loaded with to ``out_dir/<module name>.pt``."""
    from torch._inductor.codecache import PyCodeCache

    _RECORDS[:] = [out_dir]
    load = PyCodeCache.load_by_key_path.__func__
    if getattr(load, _WRAPPED, False):
        return

    def load_by_key_path(cls: Any, key: str, path: str, *args: Any, **kwargs: Any) -> Any:
        mod = load(cls, key, path, *args, **kwargs)
        attrs = kwargs.get("attrs", args[1] if len(args) > 1 else None)  # (linemap, attrs)
        with contextlib.suppress(Exception):  # evidence only: the compile goes on without it
            _wrap_call(mod, _RECORDS[0] / f"{Path(path).stem}.pt", call_constants.tensor_constants(attrs))
        return mod

    setattr(load_by_key_path, _WRAPPED, True)
    PyCodeCache.load_by_key_path = classmethod(load_by_key_path)


def _wrap_call(mod: Any, record: Path, held: dict[str, Any] | None = None) -> None:
    call = getattr(mod, "call", None)
    if not callable(call) or getattr(call, _WRAPPED, False):
        return
    done = False
    name = record.stem  # the counter's key, made once: this runs on every call of the graph
    sizes = _SIZES.setdefault(name, CallSizes(Path(mod.__file__)))

    def recording_call(args: Any) -> Any:
        nonlocal done
        _CALLS[name] = _CALLS.get(name, 0) + 1
        new = sizes.count(args)
        if not done:
            done = True
            out = first_call(args)
        else:
            out = call(args) if new is None else _sized_call(call, args, sizes, record, new)
        after_graph_call()  # a script whose time is up stops here (--script-seconds)
        return out

    def first_call(args: Any) -> Any:
        sizes.first_shapes = {i: tuple(a.shape) for i, a in enumerate(args) if recordable(a)}
        kept: dict[int, Any] = {}
        scales: dict[int, Any] = {}
        held_now = call_constants.Constants()
        live = list(args)  # call() clears the list it is given
        with contextlib.suppress(Exception):
            kept = _snapshot(live)
            scales = _scales(live, kept)
            left = MAX_MODULE_BYTES - sum(v.numel() * v.element_size() for v in kept.values())
            text = Path(mod.__file__).read_text(errors="replace")
            held_now = call_constants.snapshot(held or {}, text, left, MAX_TENSOR_BYTES)
        return _call_and_save(call, args, live, kept, scales, record, held_now)

    setattr(recording_call, _WRAPPED, True)
    mod.call = recording_call


class CallSizes:
    """The sizes one module's calls ran at: the values of its size symbols' inputs, counted."""

    def __init__(self, module_path: Path) -> None:
        self.module_path = module_path
        self.positions: dict[str, int] | None = None  # read from the module on its first call
        self.counts: dict[tuple[int, ...], int] = {}  # the symbols' values -> calls, in order met
        self.first_shapes: dict[int, tuple[int, ...]] = {}  # position -> its shape at the first call

    def count(self, args: list[Any]) -> dict[str, int] | None:
        """Count one call; its sizes where it is the first at sizes other than the first call's
        (and within MAX_SIZE_RECORDS of them): its inputs are then worth recording."""
        if self.positions is None:
            self.positions = {}
            with contextlib.suppress(Exception):  # unreadable: counted as one size
                self.positions = size_positions(self.module_path.read_text(errors="replace"))
        try:
            values = tuple(int(args[p]) for p in self.positions.values())
        except (TypeError, ValueError, IndexError):
            values = ()
        seen = self.counts.get(values, 0)
        self.counts[values] = seen + 1
        if seen or len(self.counts) == 1 or len(self.counts) > MAX_SIZE_RECORDS + 1 \
                or len(values) != len(self.positions):
            return None
        return dict(zip(self.positions, values, strict=True))

    def to_list(self) -> list[dict[str, Any]]:
        """``[{"sizes": {symbol: value}, "calls": n}, ...]`` in the order met (``GraphResult.call_sizes``)."""
        names = list(self.positions or {})
        return [{"sizes": dict(zip(names, v, strict=True)), "calls": n} for v, n in self.counts.items()
                if len(v) == len(names)]


def _sized_call(call: Any, args: Any, sizes: CallSizes, record: Path, at: dict[str, int]) -> Any:
    """The first call at sizes other than the first call's: its inputs of other shapes than
    the first call's recorded (those of the first call's shape are the first call's record's)."""
    live = list(args)
    kept: dict[int, Any] = {}
    scales: dict[int, Any] = {}
    with contextlib.suppress(Exception):
        first = sizes.first_shapes
        other = {i for i, a in enumerate(live) if recordable(a) and first.get(i) != tuple(a.shape)}
        kept = _snapshot(live, other, MAX_SIZED_BYTES)
        scales = _scales(live, kept, other)
    return _call_and_save(call, args, live, kept, scales,
                          record.with_name(f"{record.stem}.{sizes_key(at)}.pt"))


def _call_and_save(call: Any, args: Any, live: list[Any], kept: dict[int, Any], scales: dict[int, Any],
                   record: Path, held: call_constants.Constants | None = None) -> Any:
    """Run the call, then save what was taken of its inputs before it (and which of them it
    changed in place; with ``held``, the module's constants) to ``record``, where there is any."""
    out = call(args)
    with contextlib.suppress(Exception):
        if kept or scales or (held is not None and held.names):
            data = {"inputs": kept, "mutated": _changed(kept, live), "scales": scales}
            _save(data if held is None else {**data, "constants": held.to_record()}, record)
    return out


def size_counts() -> dict[str, list[dict[str, Any]]]:
    """Module name -> the sizes its calls ran at and how many ran at each
    (``CallSizes.to_list``), for each module of dynamic shapes called in this process."""
    return {name: c.to_list() for name, c in _SIZES.items() if c.positions and c.counts}


def call_counts() -> dict[str, int]:
    """Module name (the stem of its file) -> how many times its ``call()`` ran in this process
    since ``attach``. A CUDA graph's replays bypass ``call()``: they are not counted."""
    return dict(_CALLS)


def calls_between(before: dict[str, int], after: dict[str, int], steps: int) -> dict[str, float]:
    """Calls per step of each module over ``steps`` steps run between two ``call_counts()``."""
    if steps <= 0:
        return {}
    return {k: (n - before.get(k, 0)) / steps for k, n in after.items()}


def decisive(value: Any) -> bool:
    """An input the harness's zeros would make another kind of work (an index, a mask, a
    counter): a plain integer or boolean tensor; recorded before the floats."""
    return recordable(value) and not value.is_floating_point()


def _snapshot(args: list[Any], only: set[int] | None = None, budget: int | None = None) -> dict[int, Any]:
    """Host copies of the inputs (of the positions ``only``, by default all), the decisive ones
    first, within the size limits; none while a CUDA graph is being captured (a copy to the
    host would break the capture)."""
    import torch

    if torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():
        return {}
    kept: dict[int, Any] = {}
    total, budget = 0, MAX_MODULE_BYTES if budget is None else budget
    order = sorted(range(len(args)), key=lambda i: not decisive(args[i]))  # stable: call order
    for i in order:
        a = args[i]
        if not recordable(a) or (only is not None and i not in only):
            continue
        size = a.numel() * a.element_size()
        if size > MAX_TENSOR_BYTES or total + size > budget:
            continue
        kept[i] = a.detach().to(HOST_BACKEND.name, copy=True)
        total += size
    return kept


def _scales(args: list[Any], kept: dict[int, Any], only: set[int] | None = None) -> dict[int, Any]:
    """For each float input past the budget (of the positions ``only``, by default all): its
    mean and standard deviation (a float64 pair), that the harness's ``randn`` draw is brought to."""
    import torch

    out = {}
    for i, a in enumerate(args):
        wanted = i not in kept and (only is None or i in only)
        if wanted and recordable(a) and a.is_floating_point() and a.numel() > 1:
            std, mean = torch.std_mean(a.detach())
            out[i] = torch.tensor([float(mean), float(std)], dtype=torch.float64)
    return out


def _changed(kept: dict[int, Any], live: list[Any]) -> list[int]:
    """The positions of ``kept`` whose tensor the call changed in place."""
    import torch

    return [i for i, before in kept.items() if not torch.equal(live[i].detach().cpu(), before)]


def _save(data: dict[str, Any], record: Path) -> None:
    import torch

    record.parent.mkdir(parents=True, exist_ok=True)
    part = record.with_name(f".{record.name}.{os.getpid()}.part")
    torch.save(data, part)
    os.replace(part, record)


@dataclass
class Record:
    """A module's first call, as ``inputs.pt`` keeps it."""

    inputs: dict[int, Any] = field(default_factory=dict)  # position -> its tensor
    mutated: set[int] = field(default_factory=set)  # the positions the call changed
    scales: dict[int, Any] = field(default_factory=dict)  # position -> (mean, deviation), past the budget
    constants: call_constants.Constants = field(default_factory=call_constants.Constants)  # the module holds


def recorded(module_path: Path, sizes: dict[str, int] | None = None) -> Record:
    """The first call's record of the module at ``module_path`` (with ``sizes``: the first
    call's at those sizes): from ``inputs.pt`` (``inputs.<sizes>.pt``) beside it (a graph's copy
    in the run directory), or, for a module read from the cache by the process that recorded
    it, from the record itself; empty when there is none."""
    import torch

    module_path = Path(module_path)
    tail = f".{sizes_key(sizes)}" if sizes else ""
    places = [module_path.with_name(Path(CALL_INPUTS_FILE).stem + tail + ".pt"),
              *(d / f"{module_path.stem}{tail}.pt" for d in _RECORDS)]
    path = next((p for p in places if p.exists()), None)
    data = torch.load(path, weights_only=True) if path is not None else {}
    return Record({int(k): v for k, v in (data.get("inputs") or {}).items()},
                  {int(i) for i in data.get("mutated") or ()},
                  {int(k): v for k, v in (data.get("scales") or {}).items()},
                  call_constants.Constants.from_record(data.get("constants")))


class Restorer:
    """What ``apply`` copied into a harness's inputs; ``restore()`` puts back, in place, those the
    graph changes (from copies kept on their device)."""

    def __init__(self) -> None:
        self.inputs = 0  # the harness's tensor inputs
        self.copied_at: dict[int, Any] = {}  # position -> the harness's tensor it was copied into
        self.scaled_at: dict[int, Any] = {}  # floats past the budget: the draw at their mean and deviation
        self.kept: list[tuple[Any, Any]] = []  # (the harness's tensor, its value on that device)
        self.constants = call_constants.Given()  # the constants the module holds, set to the recorded

    @property
    def copied(self) -> int:
        return len(self.copied_at)

    @property
    def scaled(self) -> int:
        return len(self.scaled_at)

    def restore(self) -> None:
        for target, value in self.kept:
            target.copy_(value)

    def drop_replaced(self, args: list[Any]) -> None:
        """Forget the inputs ``args`` no longer holds (drawn again at other sizes)."""
        for at in (self.copied_at, self.scaled_at):
            for i in [i for i, t in at.items() if i >= len(args) or args[i] is not t]:
                del at[i]
        held = {id(a) for a in args}
        self.kept = [(t, v) for t, v in self.kept if id(t) in held]


def apply(args: list[Any], module_path: Path, mod: Any = None) -> Restorer:
    """Copy the module's recorded inputs into ``args`` (the harness's, in ``call()``'s order), in
    place, where the harness has a tensor of the same shape and dtype; bring the harness's
    draw of each float past the budget to the mean and deviation its first call had; set the
    constants of ``mod`` (the loaded module, after its harness ran) to the recorded ones."""
    out = Restorer()
    out.inputs = sum(map(recordable, args))
    record = recorded(module_path)
    if mod is not None:
        out.constants = call_constants.apply(mod, record.constants)
    _copy_into(args, record, out)
    return out


def apply_sized(args: list[Any], module_path: Path, sizes: dict[str, int], out: Restorer) -> None:
    """After ``apply`` and the inputs of other shapes drawn again at ``sizes``: copy the record
    of the first call at those sizes into them, as ``apply`` does the first call's."""
    out.drop_replaced(args)
    _copy_into(args, recorded(module_path, sizes), out)


def _copy_into(args: list[Any], record: Record, out: Restorer) -> None:
    for i, (mean, std) in ((i, v.tolist()) for i, v in record.scales.items()):
        target = args[i] if i < len(args) else None
        if recordable(target) and target.is_floating_point() and math.isfinite(mean) and math.isfinite(std):
            with contextlib.suppress(RuntimeError):  # a dtype without mul_ (fp8): the draw as it is
                target.mul_(std).add_(mean)
                out.scaled_at[i] = target
    for i, value in record.inputs.items():
        target = args[i] if i < len(args) else None
        if not recordable(target) or target.shape != value.shape or target.dtype != value.dtype:
            continue  # another size (a dynamic graph called at other shapes): the harness's
        try:
            target.copy_(value)
        except RuntimeError:  # an expanded harness input (stride 0) cannot take distinct values
            continue
        out.copied_at[i] = target
        if i in record.mutated:
            out.kept.append((target, value.to(target.device, copy=True)))
