"""Each phase ends with what became of it: its outcome or ``done``, ``failed`` where it raised,
``interrupted`` where Ctrl-C or a stop signal cut it short: a graph whose profiling was cut
short is not reported done."""

from __future__ import annotations

import io
import signal
from pathlib import Path
from types import SimpleNamespace

import pytest

from inductor_bench.commands.progress import TerminalProgress
from inductor_bench.runner import pipeline
from inductor_bench.runner.stop import Stopped


def _ends(out: io.StringIO) -> list[str]:
    """Each phase's last line, its seconds left out."""
    return [ln.rsplit(" (", 1)[0] for ln in out.getvalue().splitlines() if not ln.endswith(" ...")]


def test_a_phase_says_done_failed_or_interrupted():
    out = io.StringIO()
    progress = TerminalProgress(out)
    with progress.phase("compiling a.py") as ph:
        ph["done"] = "2 compiled module(s)"
    with progress.phase("measuring"):
        pass
    with pytest.raises(ValueError), progress.phase("compiling b.py"):
        raise ValueError("boom")
    with pytest.raises(KeyboardInterrupt), progress.phase("profiling graph 0-forward [1/2]"):
        raise KeyboardInterrupt
    with pytest.raises(Stopped), progress.phase("profiling graph 0-backward [2/2]") as ph:
        ph["done"] = "set before the stop"
        raise Stopped(signal.SIGTERM)
    assert _ends(out) == [
        "compiling a.py: 2 compiled module(s)",
        "measuring: done",
        "compiling b.py: failed",
        "profiling graph 0-forward [1/2]: interrupted",
        "profiling graph 0-backward [2/2]: interrupted",
    ]


def _profile_all(monkeypatch, tmp_path: Path, out: io.StringIO, fake_profile_graphs) -> None:
    """The runner's profiling of one graph, with ``fake_profile_graphs`` for the workers."""
    monkeypatch.setattr(pipeline, "profile_graphs", fake_profile_graphs)
    sources = [SimpleNamespace(graph=SimpleNamespace(id="0-inference"))]
    comp = SimpleNamespace(script=True, cache_dir="", standbys=[])
    result = SimpleNamespace(torch_settings=None, graphs=[], errors=[])
    pipeline._profile_all(SimpleNamespace(mode="default"), tmp_path, comp, sources, result,
                          SimpleNamespace(progress=TerminalProgress(out), model_label="", windows=None,
                                          processes=1))  # the settings' fields the runner reads


def test_a_graph_whose_profiling_a_stop_cut_short_is_not_reported_done(monkeypatch, tmp_path):
    def stopped_mid_graph(sources, *args, on_start, **kwargs):
        on_start(sources[0], 0)
        raise Stopped(signal.SIGINT)

    out = io.StringIO()
    with pytest.raises(Stopped):
        _profile_all(monkeypatch, tmp_path, out, stopped_mid_graph)
    assert _ends(out) == ["profiling graph 0-inference [1/1]: interrupted"]
