"""A result's JSON as the commands write it (``breakdown.json``, ``compare.json``,
``--format json``): its record (``to_dict``: the raw samples and what they were made from) and,
for a breakdown, the step's figures its report shows (``step``) and each kernel's against the
ceilings (``extras.roofline.kernels``) and why each graph's left-out iterations were left out
(``graphs[].left_out_why``), made by the functions the report's own lines are made by, on
writing, and never read back: a reader of the file judges again from the samples
(``BreakdownResult.from_dict`` leaves these blocks out)."""

from __future__ import annotations

import json
from typing import Any

from .call_groups import kernels_a_call
from .ceilings import KernelRoof, beats_compute_ceiling, group_roof, kernel_roof, no_distance
from .compare import CompareResult
from .leftout import left_out_why
from .results import BreakdownResult
from .roofline import judged_sites, step_members
from .step import gain_frame, set_aside, split_step


def step_figures(r: BreakdownResult) -> dict[str, Any]:
    """The wall a kernel's max gain is a share of (``step.gain_frame``: the graphs' profiled
    wall per step and the time outside them it takes) and, where the report splits the real
    step against its graphs (``step.split_step``, its "outside the graphs" line), that split:
    the step, its graphs' own calls, the time outside them, how it was timed, and which check
    set the turns' own figure aside for max gain (``set_aside``)."""
    frame = gain_frame(r)
    out: dict[str, Any] = {"max_gain_of": {
        "graphs_ms": frame.graphs_ms, "outside_ms": frame.outside_ms, "wall_ms": frame.wall_ms}}
    s = None if r.script else split_step(r)
    if s is None:
        return out
    aside = set_aside(r, s)
    return out | {
        "step_ms": s.step_ms,
        "graphs_ms": s.graphs_ms,
        "outside_ms": s.outside_ms,
        "timed_in_turns": bool(s.rounds),  # else the step timed alone less the graphs' profiled times
        "rounds": s.rounds,
        "rounds_left_out": s.left_out,
        "pipelined": s.pipelined,
        "set_aside": aside[0] if aside is not None else None,
    }


def roofline_kernels(r: BreakdownResult) -> list[dict[str, Any]]:
    """Each counted kernel's figures against the ceilings (``extras.roofline.kernels``), as
    the report's tables and chart hold it (``roofline.judged_sites``): an extern op called at
    several places as each call, named as the tables name it (``aten::mm #2``), its time and
    counts that call's; on a device, the main kernel of extern calls that ran several kernels
    with the time of all of them (``ms``), how many a call ran and the others (``call_groups``);
    where its % is qualified, why (the tables' marks: ``no_distance`` ~ and ^, ``above_ceiling`` !)."""
    c = r.roofline.measured if r.roofline is not None else None
    return [{"graph": g.id, "kernel": k.name + mark, **_qualified(kernel_roof(k, c, g.device)),
             **({"ms": k.ms, "kernels_a_call": kernels_a_call(k), "beside": k.beside} if k.beside else {})}
            for g in r.measured() for k, mark in judged_sites(g) if k.bytes is not None]


def _qualified(roof: KernelRoof) -> dict[str, Any]:
    """A kernel's figures, and why its % is no distance to a limit (``no_distance``: latency-bound,
    in cache) or held against a compute ceiling it beat (``above_ceiling``), where it is."""
    why = no_distance(roof)
    return {**roof.to_dict(), **({"no_distance": why} if why else {}),
            **({"above_ceiling": True} if beats_compute_ceiling(roof) else {})}


def left_out_figures(r: BreakdownResult) -> dict[str, dict[str, Any]]:
    """Each graph with iterations left out: how many by each cause, the figures of the report's
    steady note (``leftout.left_out_why``): over the wall limit, the rest slow by the worker's
    clock, the rest by one of their parts; and those by part name (``aten::addmm #1``, a kernel,
    ``idle``), most first, every part named (the note names three)."""
    out: dict[str, dict[str, Any]] = {}
    for g in r.measured():
        if g.left_out:
            why = left_out_why(g)
            out[g.id] = {"over_wall_limit": len(why.wall), "slow_by_clock": len(why.clock),
                         "by_parts": len(why.parts), "parts": dict(why.by_part)}
    return out


def _with_derived(d: dict[str, Any], r: BreakdownResult) -> dict[str, Any]:
    if r.roofline is not None:
        d["extras"]["roofline"]["kernels"] = roofline_kernels(r)
        # the step's time-weighted % as the views' total row, compare and diff show it
        d["extras"]["roofline"]["step"] = group_roof(step_members(r)).to_dict()
    why = left_out_figures(r)
    for gd in d["graphs"]:
        if gd.get("id") in why:
            gd["left_out_why"] = why[gd["id"]]
    return d


def result_json(result: BreakdownResult | CompareResult) -> str:
    """The result's JSON with the figures derived for scripts."""
    d = result.to_dict()
    if isinstance(result, BreakdownResult):
        _with_derived(d, result)
        d["step"] = step_figures(result)
    else:  # each column's breakdown as its own breakdown.json holds it
        for m, md in zip(result.modes, d["modes"], strict=True):
            if m.breakdown is not None:
                _with_derived(md["breakdown"], m.breakdown)
                md["breakdown"]["step"] = step_figures(m.breakdown)
    return json.dumps(d, indent=1)
