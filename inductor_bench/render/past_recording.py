"""The line under a table of step figures naming the steps that ran past the end of the
profiler's recording (``core/recording.py``): their figures stop at it, one trace's and each
rank's alike."""

from __future__ import annotations

from collections.abc import Collection

from ..core.analyze_result import AnalyzeResult
from ..core.ranks import RanksResult
from .analyze_top import listed, step_code
from .doc import Doc

SHOWN = 8  # steps named in the line before "and N more"


def past_recording_line(past: list[str], counted: str = "wall, busy and idle") -> list[str]:
    """The line for ``past``, each step's words (``ProfilerStep#2 ran 499.0 ms``); none
    where no step ran past. ``counted``: the figures the table shows of them."""
    if not past:
        return []
    steps = listed(past, SHOWN)
    return [f"{steps[0].upper()}{steps[1:]} past the end of the profiler's recording: {counted} count only "
            "what was recorded (nothing was recorded after it)."]


def steps_past_recording(doc: Doc, r: AnalyzeResult) -> list[str]:
    """The line for one trace's steps."""
    return past_recording_line([f"{step_code(doc, s.name)} ran {s.past_recording_ms:,.1f} ms"
                                for s in r.steps if s.past_recording_ms])


def ranks_past_recording(doc: Doc, r: RanksResult, counted: str = "wall, busy and idle",
                         only: Collection[tuple[str, int]] | None = None) -> list[str]:
    """The line for the ranks' steps, in the steps table's order (by step, then rank), each
    naming its rank; ``only``: the (step, rank) pairs a table shows, where not all."""
    names = dict.fromkeys(s.step for rank in r.ranks for s in rank.steps)
    past = [f"rank {rank.rank}'s {step_code(doc, name)} ran {s.past_recording_ms:,.1f} ms"
            for name in names for rank in r.ranks
            if (s := rank.step(name)) and s.past_recording_ms and (only is None or (name, rank.rank) in only)]
    return past_recording_line(past, counted)
