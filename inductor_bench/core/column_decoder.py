"""The typed decoder a trace is read into columns with (``columns.load_columns``): each event a
struct of the fields the analysis reads, its recorded shape arguments kept raw and decoded
only for the shaped ops; pure, no torch."""

from __future__ import annotations

import functools
from typing import Any, Union

import msgspec

from .column_types import MISSING
from .trace import NO_DUR, OTHER_PHASES


@functools.lru_cache(maxsize=1)
def analysis_decoder() -> tuple[msgspec.json.Decoder, type]:
    """As ``trace``'s decoder with ``args=ANALYSIS_ARGS``, but an absent args object is an
    args struct of absent values (``MISSING``), so that ``args.a0`` always reads."""
    raw_args = msgspec.defstruct(  # recorded shapes, types, values: raw, decoded for shaped ops alone
        "AnalysisArgs", [("a0", Any, MISSING), ("a1", Any, MISSING), ("a2", msgspec.Raw, msgspec.Raw()),
                         ("a3", msgspec.Raw, msgspec.Raw()), ("a4", msgspec.Raw, msgspec.Raw()),
                         ("a5", msgspec.Raw, msgspec.Raw())],
        rename={"a0": "correlation", "a1": "External id", "a2": "Input Dims", "a3": "Input type",
                "a4": "Concrete Inputs", "a5": "Input Strides"},
        frozen=True, gc=False,
    )
    complete = msgspec.defstruct(
        "AnalysisEvent",
        [("ts", float), ("cat", str, ""), ("name", str, ""), ("dur", float, NO_DUR),
         ("pid", int | str, 0), ("tid", int | str, 0), ("args", raw_args, raw_args())],
        tag_field="ph", tag="X", gc=False,
    )
    memory_args = msgspec.defstruct(
        "MemoryArgs", [(f"a{i}", Any, MISSING) for i in range(4)],
        rename={"a0": "Device Type", "a1": "Device Id", "a2": "Bytes", "a3": "Total Allocated"},
        frozen=True, gc=False,
    )
    instant = msgspec.defstruct(  # profile_memory's "[memory]" events (core/memory.py)
        "AnalysisInstant", [("ts", Any, MISSING), ("cat", str, ""), ("name", str, ""),
                            ("args", memory_args, memory_args())],
        tag_field="ph", tag="i", gc=False, namespace={"dur": 0.0},  # an instant lasts nothing
    )
    # the other phases' events build nothing; their category reads "" (a class attribute)
    others = [msgspec.defstruct(f"AnalysisPhase{i}", [], tag_field="ph", tag=ph, gc=False,
                                namespace={"cat": ""})
              for i, ph in enumerate(OTHER_PHASES) if ph != "i"]
    return msgspec.json.Decoder(list[Union[(complete, instant, *others)]], strict=False), complete  # noqa: UP007


def frozen(value: Any) -> Any:
    """Lists as tuples, all the way down (hashable)."""
    return tuple(map(frozen, value)) if isinstance(value, list) else value


@functools.lru_cache(maxsize=4096)
def raw_value(value: bytes) -> Any:
    """A raw JSON value decoded, lists as tuples; None where it is absent or not JSON. A loop
    repeats its shapes every step: each distinct one is decoded once."""
    if not value:
        return None
    try:
        return frozen(msgspec.json.decode(value))
    except msgspec.DecodeError:
        return None


def struct_correlations(xs: list[Any]) -> list[Any]:
    return [x.args.a0 for x in xs]


def struct_external_ids(xs: list[Any]) -> list[Any]:
    return [x.args.a1 for x in xs]


def struct_shape_args(xs: list[Any]) -> list[tuple[Any, Any, Any, Any]]:
    """Each struct's Input Dims, Input type, Concrete Inputs and Input Strides, decoded."""
    return [(raw_value(bytes(x.args.a2)), raw_value(bytes(x.args.a3)), raw_value(bytes(x.args.a4)),
             raw_value(bytes(x.args.a5))) for x in xs]
