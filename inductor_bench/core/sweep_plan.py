"""A sweep's plan: its grid (``--shard``, each model's name), resumed or refused where one is saved."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .arg_changes import ArgChange, arg_changes
from .errors import UsageError
from .sweep import Cell, Sweep, attempt_name, shard_of


def parse_shard(text: str | None) -> list[int] | None:
    """``"2/4"`` -> ``[2, 4]``: the second of four shards (counted from 1)."""
    if text is None:
        return None
    parts = text.split("/")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise UsageError(f"--shard {text!r}: give I/N, e.g. 1/4 (the first of four shards)")
    index, total = int(parts[0]), int(parts[1])
    if total < 1 or not 1 <= index <= total:
        raise UsageError(f"--shard {text}: I must be from 1 to N (N at least 1)")
    return [index, total]


def new_sweep(
    models: list[str],
    names: list[str],
    modes: list[str],
    compare_args: list[str],
    *,
    device: str,
    shard: list[int] | None,
    executor: str,
    created: str,
) -> Sweep:
    """A sweep whose cells are the shard's models, none run yet. ``names``: one per model."""
    named = dict(zip(models, names, strict=True))
    cells = [Cell(model=named[m], model_path=m) for m in shard_of(models, shard)]
    return Sweep(
        models=list(models),
        modes=list(modes),
        compare_args=list(compare_args),
        device=device,
        shard=shard,
        executor=executor,
        created=created,
        cells=cells,
    )


def unreserved(names: list[str], reserved: tuple[str, ...]) -> list[str]:
    """``names`` with each that one of the sweep's own files or folders takes (``reserved``)
    renamed as a second model of that name is (``logs`` -> ``logs-2``), all still unique: a
    model file logs.py would otherwise hold every attempt's console output in its run directory."""
    out: list[str] = []
    for i, name in enumerate(names):
        stem, k = name, 1
        while name in reserved or name in out or (k > 1 and name in names[i + 1 :]):
            k += 1
            name = f"{stem}-{k}"
        out.append(name)
    return out


def resume(new: Sweep, old: Sweep | None, where: str, resolve: Callable[[str], str] | None = None) -> Sweep:
    """The sweep to run: ``new`` in a fresh directory; ``old`` again where it is the same sweep
    (its done cells kept, the others to be retried); another sweep is refused, naming each
    setting that differs with its value there and here. ``resolve``: the device each
    ``--device`` value runs on (``auto`` -> ``cpu`` on a machine without a GPU), so that two
    values that run on the same device are the same sweep; without it the values must match."""
    if old is None:
        return new

    def identity(s: Sweep) -> dict[str, Any]:
        return {**s.identity(), "device": resolve(s.device) if resolve else s.device}

    there, here = identity(old), identity(new)
    said = (old.identity(), new.identity())  # the values as given, not as resolved
    what = [w for k, v in here.items() if there[k] != v for w in _changes(k, said[0][k], said[1][k])]
    if what:
        raise UsageError(
            f"{where} holds another sweep ({'; '.join(what)}): "
            "give another --out, or the same options to resume it"
        )
    old.executor = new.executor
    return old


_OPTIONS = {"modes": "--modes", "device": "--device", "shard": "--shard"}


def _changes(key: str, there: Any, here: Any) -> list[str]:
    """A setting of a sweep's identity that differs, as the refusal names it: each compare
    option that differs (``--train here, not there``), ``--modes default,max-autotune there,
    default here``, ``--shard 2/4 here, not there``, the model files on one side only."""
    if key == "compare_args":
        return [c.words() for c in arg_changes(there, here)]
    if key == "models" and set(there) != set(here):
        gone, new = [m for m in there if m not in here], [m for m in here if m not in there]
        return [f"models {_setting(key, ms)} {side}, not {other}" for ms, side, other in
                ((gone, "there", "here"), (new, "here", "there")) if ms]
    values = [_setting(key, v) if v else None for v in (there, here)]
    return [ArgChange(_OPTIONS.get(key, key), *values).words()]


def _setting(key: str, value: Any) -> str:
    """A setting of a sweep's identity as the refusal names it: ``default,max-autotune``,
    ``2/4``, ``/m/a.py,/m/b.py``."""
    if key == "shard":
        return f"{value[0]}/{value[1]}"
    if isinstance(value, list):
        return ",".join(str(x) for x in value)
    return str(value)


def attempt_dir(cell: Cell) -> str:
    """The run directory of the cell's next attempt: its name, then ``name.try2``, ... (a
    failed attempt's directory is kept, never overwritten)."""
    return attempt_name(cell.model, cell.attempts + 1)
