"""The words a CPU-only trace's analysis prints where a device trace's names device work: its
rows are CPU threads, which run ATen ops rather than launch kernels, so a column, legend or
title that says kernel, waiting on CPU or nothing launched says ops, between ops and after the
last op there. The figures and the JSON's keys are the same in both."""

from __future__ import annotations

from ..core.analyze import is_host
from ..core.analyze_result import AnalyzeResult

HOST_WORDS = {
    "device": "thread",
    "kernel ms": "ops ms",
    "waiting on CPU": "between ops",
    "nothing launched": "after last op",
    "% kernel": "% op time",
}


def host_word(word: str, host: bool) -> str:
    """``word`` as a CPU-only trace's report says it where ``host``; as it is otherwise."""
    return HOST_WORDS.get(word, word) if host else word


def on_host(r: AnalyzeResult) -> bool:
    """A CPU-only trace: every row a CPU thread."""
    return bool(r.devices) and all(is_host(d) for d in r.devices)
