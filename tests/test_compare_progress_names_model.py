"""With several model files, a compare's profiling lines name the column they belong to
(``mlp_slow:default: profiling graph 0-inference [1/1]``); they had read ``profiling graph
0-inference [1/1]`` for every file alike. With one file the line stays as short as it was
(synthetic: stand-ins for the mode runner and the profiling workers)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from types import SimpleNamespace

from inductor_bench.core.compare import ModeResult
from inductor_bench.core.compare_modes import parse_modes
from inductor_bench.core.progress import Progress
from inductor_bench.core.workload import WorkloadOptions
from inductor_bench.runner import pipeline
from inductor_bench.runner.compare import run_compare
from inductor_bench.runner.settings import RunSettings

from .conftest import MODELS


class Recorded(Progress):
    def __init__(self) -> None:
        self.lines: list[str] = []

    @contextlib.contextmanager
    def phase(self, msg, follow=None):
        self.lines.append(msg)
        yield {}


def _profiling_line(monkeypatch, mode: str, model_label: str) -> str:
    src = SimpleNamespace(graph=SimpleNamespace(id="0-inference"))
    monkeypatch.setattr(pipeline, "profile_graphs", lambda *a, on_start, **k: on_start(src, 0))
    progress = Recorded()
    opts = WorkloadOptions(path=str(MODELS / "mlp.py"), device="cpu", mode=mode)
    comp = SimpleNamespace(script=True, cache_dir=None, standbys=None)
    result = SimpleNamespace(torch_settings=None, graphs=[], errors=[])
    settings = RunSettings(progress=progress, model_label=model_label)
    pipeline._profile_all(opts, Path("run"), comp, [src], result, settings)
    return progress.lines[0]


def test_profiling_lines_name_the_model_file_only_where_there_are_several(monkeypatch):
    assert _profiling_line(monkeypatch, "default", "") == "profiling graph 0-inference [1/1]"
    assert _profiling_line(monkeypatch, "max-autotune", "") == "max-autotune: profiling graph 0-inference [1/1]"
    assert _profiling_line(monkeypatch, "default", "mlp_slow") == "mlp_slow:default: profiling graph 0-inference [1/1]"


def test_each_model_files_columns_run_under_its_name(tmp_path, monkeypatch):
    seen = []

    def run_mode(opts, mode_dir, run):
        seen.append((Path(opts.path).stem, opts.mode, run.settings.model_label))
        m = ModeResult(mode=opts.mode, compile_s=0.0, step_samples_ms=[1.0] * 10, run_dir=str(mode_dir))
        return m, SimpleNamespace(device="cpu", device_name="a CPU", versions={}, cache_dir=None), None

    monkeypatch.setattr("inductor_bench.runner.compare_columns.run_mode", run_mode)
    monkeypatch.setattr("inductor_bench.runner.compare._time_interleaved", lambda *a: None)
    one = WorkloadOptions(path=str(MODELS / "mlp.py"), device="cpu")
    run_compare(one, parse_modes("default"), out=tmp_path / "one", also=None)
    assert seen == [("mlp", "eager", ""), ("mlp", "default", "")]
    seen.clear()
    slow = WorkloadOptions(path=str(MODELS / "mlp_slow.py"), device="cpu")
    run_compare(one, parse_modes("default"), out=tmp_path / "two", also=[slow])
    assert [label for *_, label in seen] == ["mlp", "mlp", "mlp_slow", "mlp_slow"]
