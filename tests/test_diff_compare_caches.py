"""A diff of two compares of which one compiled each mode cold, in a fresh cache, and the other
in inductor-bench's warm cache (``compare --warm-cache``) says so: their compile time rows
compare the caches (synthetic results); a side whose columns recorded no cache (a result saved
before they were) is not known to differ."""

from __future__ import annotations

from inductor_bench.core.compare import CompareResult, ModeResult
from inductor_bench.core.diff import diff_results
from inductor_bench.core.run_extras import CompileCache
from inductor_bench.render.diff import render_diff

from .test_diff import base_result

STEP = [4.0, 4.1, 3.9, 4.0, 4.05, 3.95, 4.0, 4.1, 3.9, 4.0, 4.0, 4.02]
COLD, WARM = "compiled cold (a fresh cache per mode)", "compiled in the warm cache (--warm-cache)"
ROWS = "; the compile time rows compare the caches as much as the compiles"


def _compare(*shared: bool | None) -> CompareResult:
    """A column per value: its breakdown compiled in the shared cache (True), a fresh one
    (False), or one not recorded (None)."""
    modes = []
    for mode, s in zip(("default", "max-autotune"), shared, strict=False):
        bd = base_result()
        bd.compile_cache = CompileCache(dir=f"/runs/{mode}/cache", shared=s) if s is not None else None
        modes.append(ModeResult(mode=mode, compile_s=1.0, step_samples_ms=list(STEP), breakdown=bd))
    return CompareResult(model="mlp", device="cpu", device_name="Test CPU (2 cores)",
                         versions={"torch": "2.13.0"}, modes=modes)


def test_a_cold_compare_against_a_warm_one_says_so():
    d = diff_results(_compare(False, False), _compare(True, True))
    note = f"compile caches differ: base {COLD}, head {WARM}{ROWS}"
    assert d.warnings == [note]
    assert f"warning: {note}" in render_diff(d)
    assert diff_results(_compare(True, True), _compare(False, True)).warnings == [
        f"compile caches differ: base {WARM}, head compiled partly cold, partly in the warm cache{ROWS}"]


def test_the_same_caches_or_none_recorded_say_nothing():
    assert diff_results(_compare(False, False), _compare(False, False)).warnings == []
    assert diff_results(_compare(True), _compare(True)).warnings == []
    assert diff_results(_compare(None, None), _compare(True, True)).warnings == []
