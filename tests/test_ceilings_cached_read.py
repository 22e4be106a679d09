"""The ceilings a run is held against come from the machine's cache without a worker: the
profiling worker records what the cache is keyed by (``machine_key``, with the run's threads) in
each graph's saved answer, and the run reads the entry under that key itself. Synthetic run
directories and cache entries; the end-to-end key check is in ``test_e2e_roofline.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inductor_bench.core.ceilings import Ceilings, cache_key
from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat
from inductor_bench.runner import peaks_measure, roofline
from inductor_bench.runner.settings import RunSettings

KEY = {"device": "test cpu", "torch": "2.13.0+cpu", "method": 3, "threads": 2, "max_khz": None}
CACHED = Ceilings("test cpu", gbps=40.0, tflops={"fp32": 0.2}, key=KEY, measured_at="2026-12-05T07:00:00+00:00")
MEASURED = Ceilings("test cpu", gbps=30.0, tflops={"fp32": 0.1}, key=KEY)


def run_dir_with_key(path: Path, key: dict | None) -> Path:
    """A run directory whose one graph's saved answer records ``key`` (None: records none, as a
    run profiled before the key was recorded)."""
    gdir = path / "graphs" / "0-forward"
    gdir.mkdir(parents=True)
    response = {"iterations": 10} | ({"machine_key": key} if key is not None else {})
    (gdir / "profile.json").write_text(json.dumps({"graph": {"id": "0-forward"}, "response": response}))
    return path


@pytest.fixture
def cache(tmp_path, monkeypatch):
    d = tmp_path / "peaks-cache"
    monkeypatch.setattr(roofline, "peaks_cache_dir", lambda: d)
    return d


@pytest.fixture
def worker_calls(monkeypatch):
    calls: list[dict] = []

    def worker(device, **kw):
        calls.append(kw)
        return Ceilings.from_dict(MEASURED.to_dict())

    monkeypatch.setattr(roofline, "measure_ceilings", worker)
    return calls


def a_run() -> BreakdownResult:
    k = KernelStat("cpp_fused_relu_0", "cpp_pointwise", 1.0, 0.5, bytes=1e6)
    return BreakdownResult("m", device="cpu", graphs=[GraphResult("0-forward", "forward", kernels=[k], wall_ms=1.0)])


def test_the_cached_entry_under_the_recorded_key_is_read_without_a_worker(tmp_path, cache, worker_calls):
    peaks_measure._write_cache(cache / f"{cache_key(KEY)}.json", CACHED)
    run = run_dir_with_key(tmp_path / "run", KEY)
    r = a_run()
    roofline.add_roofline(r, run, RunSettings())
    assert worker_calls == []
    got = r.roofline.measured
    assert got.from_cache and (got.gbps, got.tflops, got.measured_at) == (40.0, {"fp32": 0.2}, CACHED.measured_at)
    saved = json.loads((run / "peaks.json").read_text())["measured"]
    assert saved["gbps"] == 40.0 and saved["from_cache"] is True


@pytest.mark.parametrize("case", ["no key recorded", "another key", "nothing cached", "cached beside load",
                                  "refresh asked"])
def test_otherwise_the_worker_measures_or_reads_them(tmp_path, cache, worker_calls, case):
    entry = CACHED if case != "cached beside load" else Ceilings.from_dict(
        CACHED.to_dict() | {"load": "other processes kept 1.0 of 2 cores busy"})
    if case != "nothing cached":
        peaks_measure._write_cache(cache / f"{cache_key(KEY)}.json", entry)
    recorded = {"no key recorded": None, "another key": KEY | {"threads": 1}}.get(case, KEY)
    run = run_dir_with_key(tmp_path / "run", recorded)
    r = a_run()
    roofline.add_roofline(r, run, RunSettings(), refresh=case == "refresh asked")
    assert len(worker_calls) == 1 and worker_calls[0]["refresh"] is (case == "refresh asked")
    assert r.roofline.measured.gbps == 30.0 and not r.roofline.measured.from_cache


def test_a_damaged_saved_answer_is_passed_over(tmp_path, cache):
    peaks_measure._write_cache(cache / f"{cache_key(KEY)}.json", CACHED)
    run = run_dir_with_key(tmp_path / "run", KEY)
    bad = run / "graphs" / "00-broken"
    bad.mkdir()
    (bad / "profile.json").write_text("{not json")
    assert roofline.recorded_machine_key(run) == KEY
    assert roofline.cached_ceilings(run).gbps == 40.0


def test_compare_reads_the_key_its_first_column_recorded(tmp_path, cache, worker_calls):
    from inductor_bench.core.compare import CompareResult, ModeResult

    peaks_measure._write_cache(cache / f"{cache_key(KEY)}.json", CACHED)
    cols = [ModeResult(m, breakdown=a_run(), run_dir=str(run_dir_with_key(tmp_path / m, KEY)))
            for m in ("default", "max-autotune")]
    result = CompareResult("m", modes=cols)
    roofline.add_compare_roofline(result, tmp_path, RunSettings())
    assert worker_calls == []
    assert all(c.breakdown.roofline.measured.gbps == 40.0 for c in cols)


# A cache entry that is not the ceilings (a torn write, a hand edit, another tool's file):
# what the progress line names as wrong in it. Synthetic entries.
DAMAGED = {
    "": "not readable as JSON (Expecting value: line 1 column 1 (char 0))",
    '{"gbps": 4': "not readable as JSON (Expecting ',' delimiter: line 1 column 11 (char 10))",
    "[]": "the entry: [] is not an object",
    json.dumps(CACHED.to_dict() | {"gbps": "fast"}): "gbps: 'fast' is not a number or null",
    json.dumps(CACHED.to_dict() | {"tflops": [0.2]}): "tflops: [0.2] is not an object",
    json.dumps(CACHED.to_dict() | {"tflops": {"fp32": "x"}}): "tflops['fp32']: 'x' is not a number",
}


@pytest.mark.parametrize("text", list(DAMAGED), ids=range(len(DAMAGED)))
def test_a_damaged_cache_entry_is_measured_again_and_said_in_one_line(tmp_path, cache, worker_calls, text):
    import io

    from inductor_bench.commands.progress import TerminalProgress

    entry = cache / f"{cache_key(KEY)}.json"
    entry.parent.mkdir(parents=True)
    entry.write_text(text)
    run = run_dir_with_key(tmp_path / "run", KEY)
    r, shown = a_run(), io.StringIO()
    roofline.add_roofline(r, run, RunSettings(progress=TerminalProgress(shown)))
    assert len(worker_calls) == 1
    assert r.roofline.measured.gbps == 30.0 and r.roofline.error is None
    last = shown.getvalue().splitlines()[-1]
    assert last.startswith("measuring the device's ceilings (bandwidth, matmul): measured, the cached entry "
                           f"being damaged ({entry}: {DAMAGED[text]}): replaced (")


@pytest.mark.parametrize("text", list(DAMAGED), ids=range(len(DAMAGED)))
def test_the_ceilings_worker_replaces_a_damaged_entry(tmp_path, monkeypatch, text):
    monkeypatch.setattr(peaks_measure, "machine_key", lambda device: KEY)
    monkeypatch.setattr(peaks_measure, "measure", lambda device, reps: Ceilings.from_dict(MEASURED.to_dict()))
    monkeypatch.setattr(peaks_measure, "cpu_counters", lambda: None)
    entry = tmp_path / f"{cache_key(KEY)}.json"
    entry.write_text(text)
    got = peaks_measure.handle({"device": "cpu", "cache_dir": str(tmp_path)})["ceilings"]
    assert (got["gbps"], got["tflops"]) == (30.0, {"fp32": 0.1})
    assert peaks_measure.read_entry(entry) == (Ceilings.from_dict(got), "")


@pytest.fixture
def worker_here(monkeypatch):
    """The ceilings worker run in this process, measuring ``MEASURED`` at once."""
    monkeypatch.setattr(peaks_measure, "machine_key", lambda device: KEY)
    monkeypatch.setattr(peaks_measure, "measure", lambda device, reps: Ceilings.from_dict(MEASURED.to_dict()))
    monkeypatch.setattr(peaks_measure, "cpu_counters", lambda: None)
    monkeypatch.setattr(roofline, "run_worker", lambda module, request, **kw: peaks_measure.handle(request))


@pytest.mark.parametrize("blocked", ["a file where the cache directory goes", "a directory where the entry goes"])
def test_a_cache_that_cannot_be_written_keeps_the_measured_ceilings(tmp_path, cache, worker_here, blocked):
    import io

    from inductor_bench.commands.progress import TerminalProgress

    entry = cache / f"{cache_key(KEY)}.json"
    if blocked.startswith("a file"):
        cache.write_text("not a directory")
        said = f"measured; not cached, the next run measures them again ({entry}: File exists) ("
    else:
        entry.mkdir(parents=True)
        said = (f"measured, the cached entry being damaged ({entry}: not readable (Is a directory)); "
                f"not cached, the next run measures them again ({entry}: Is a directory) (")
    run = run_dir_with_key(tmp_path / "run", KEY)
    r, shown = a_run(), io.StringIO()
    roofline.add_roofline(r, run, RunSettings(progress=TerminalProgress(shown)))
    assert r.roofline.error is None and r.roofline.measured.gbps == 30.0
    assert shown.getvalue().splitlines()[-1].startswith(f"measuring the device's ceilings (bandwidth, matmul): {said}")
    assert sorted(p.name for p in cache.parent.rglob("*.tmp")) == []
