"""The private compile cache (runner/cache.py): where it is, who may use it, and that a
second run of a model really compiles from it."""

from __future__ import annotations

import json
import logging
import os
import re
import stat

import pytest

from inductor_bench.core.errors import UsageError
from inductor_bench.core.results import CompileCache
from inductor_bench.runner import cache

from .conftest import FIXTURES

SHARED_CACHE = "inductor-bench's private cache (reused across runs)"  # as the compile line says it


def test_the_shared_cache_is_private_and_linked_from_the_run(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    run = tmp_path / "run"
    run.mkdir()
    path, shared = cache.run_cache(run, fresh=False)
    assert shared and path == tmp_path / "xdg" / "inductor-bench" / cache.flags_tag(False)
    assert stat.S_IMODE(path.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert (run / "cache").resolve() == path.resolve()
    # freezing compiles with other flags: another directory
    assert cache.flags_tag(True) != cache.flags_tag(False)


def test_a_fresh_cache_lives_in_the_run_directory(tmp_path):
    path, shared = cache.run_cache(tmp_path, fresh=True)
    assert (path, shared) == (tmp_path / "cache", False) and path.is_dir() and not path.is_symlink()


@pytest.mark.parametrize("name", ["cmp1 sp", "it's", 'say "hi"', "back\\slash"])
def test_a_fresh_cache_for_the_host_in_a_path_the_compile_command_splits_is_refused(tmp_path, name):
    # torch 2.13 runs the host's C++ compile as shlex.split(one command string): with the run in
    # "/tmp/ibr/cmp1 sp", g++ read "/tmp/ibr/cmp1" as input and output after a 47 s compile
    run = tmp_path / name / "default"
    with pytest.raises(UsageError, match=r"cannot hold .*--out a path without them.*--warm-cache") as e:
        cache.run_cache(run, fresh=True, device="cpu")
    assert str(run / "cache") in str(e.value) and not (run / "cache").exists()
    # an accelerator's run compiles no C++ for its kernels: its paths stay as they were
    assert cache.run_cache(run, fresh=True, device="cuda") == (run / "cache", False)


def test_a_shared_cache_in_a_path_the_compile_command_splits_is_refused_for_the_host(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "my cache"))
    with pytest.raises(UsageError, match="XDG_CACHE_HOME to a path without them"):
        cache.run_cache(tmp_path / "run", fresh=False, device="cpu")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "a|b*c<d>"))  # the shell's specials split nothing
    assert cache.run_cache(tmp_path / "run", fresh=False, device="cpu")[1]


def test_a_cache_writable_by_others_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    root = tmp_path / "inductor-bench"
    root.mkdir(mode=0o700)
    os.chmod(root, 0o777)
    with pytest.raises(UsageError, match="writable by others"):
        cache.run_cache(tmp_path / "run", fresh=False)


def test_a_symlinked_cache_directory_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    elsewhere = tmp_path / "someone-elses"
    elsewhere.mkdir(mode=0o700)
    (tmp_path / "xdg").mkdir()
    (tmp_path / "xdg" / "inductor-bench").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(UsageError, match="is a symbolic link"):
        cache.run_cache(tmp_path / "run", fresh=False)


def _shared(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path, _ = cache.run_cache(tmp_path / "run0", fresh=False)
    return path


def test_an_entry_deep_in_the_cache_writable_by_others_is_refused(tmp_path, monkeypatch):
    path = _shared(tmp_path, monkeypatch)
    deep = path / "fxgraph" / "ab" / "cdef"
    deep.mkdir(parents=True)
    (deep / "entry").write_text("code that gets loaded")
    os.chmod(deep / "entry", 0o666)
    with pytest.raises(UsageError, match="entry is writable by others"):
        cache.run_cache(tmp_path / "run1", fresh=False)
    os.chmod(deep / "entry", 0o644)
    os.symlink(tmp_path, deep / "link")
    with pytest.raises(UsageError, match="link is a symbolic link"):
        cache.run_cache(tmp_path / "run2", fresh=False)


def test_group_write_deep_inside_is_harmless_when_the_group_cannot_reach_it(tmp_path, monkeypatch):
    path = _shared(tmp_path, monkeypatch)  # 0700: the group cannot enter
    (path / "triton").mkdir(mode=0o775)
    os.chmod(path / "triton", 0o775)  # what a umask of 002 gives Inductor's own writes
    assert cache.run_cache(tmp_path / "run1", fresh=False)[0] == path
    os.chmod(path, 0o750)  # the group may enter now: its write bit below matters
    with pytest.raises(UsageError, match="triton is writable by others"):
        cache.run_cache(tmp_path / "run2", fresh=False)


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="needs root to chown")
def test_a_cache_of_another_user_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    root = tmp_path / "inductor-bench"
    root.mkdir(mode=0o700)
    os.chown(root, 12345, 12345)
    with pytest.raises(UsageError, match="belongs to another user"):
        cache.run_cache(tmp_path / "run", fresh=False)


def test_describe():
    assert CompileCache("/c", True, 2, 0).describe() == (
        f"{SHARED_CACHE}: a cache hit (2 FX graph cache hits, 0 misses)")
    assert CompileCache("/c", False, 0, 2).describe() == (
        "fresh cache (cold compile): a cache miss (0 FX graph cache hits, 2 misses)")


def test_a_graph_the_fx_cache_bypassed_is_said_so_with_torchs_reason():
    why = "Can't cache HigherOrderOperator: cond"
    assert CompileCache("/c", True, 0, 0, 1, [why]).describe() == (
        f"{SHARED_CACHE}: bypassed, compiled anew on every run (0 FX graph cache hits, "
        "0 misses, 1 bypassed); bypassed because: Can't cache HigherOrderOperator: cond")
    assert CompileCache("/c", True, 2, 0, 1, [why]).describe().startswith(
        f"{SHARED_CACHE}: partly a cache hit (2 FX graph cache hits, 0 misses, 1 bypassed);")
    assert CompileCache("/c", False, 0, 1, 1, [why]).describe().startswith(
        "fresh cache (cold compile): a cache miss (0 FX graph cache hits, 1 miss, 1 bypassed);")
    # a result saved before bypasses were counted reads as it did
    assert CompileCache("/c", True, 0, 0).describe() == (
        f"{SHARED_CACHE}: a cache miss (0 FX graph cache hits, 0 misses)")


def _trace_record(name: str, payload: dict) -> logging.LogRecord:
    r = logging.LogRecord("torch.__trace", logging.DEBUG, "", 0, "", (), None)
    r.metadata, r.payload = {"artifact": {"name": name, "encoding": "json"}}, json.dumps(payload)
    return r


def test_the_recorder_keeps_each_bypass_reason_once_from_either_record_torch_writes():
    """Synthetic records as torch writes them: ``fx_graph_cache_bypass`` (2.6 on), and 2.5's
    ``fx_graph_cache_hash`` whose ``cache_state`` says bypass; a miss gives no reason."""
    from inductor_bench.runner.dynamo_counts import CompileRecorder

    rec = CompileRecorder()
    rec.emit(_trace_record("fx_graph_cache_bypass", {"cache_state": "bypass",
                                                     "cache_bypass_reason": "Can't cache HigherOrderOperator: cond"}))
    rec.emit(_trace_record("fx_graph_cache_hash", {"cache_state": "miss", "key": "f123"}))
    rec.emit(_trace_record("fx_graph_cache_hash", {"cache_state": "bypass",
                                                   "cache_bypass_reason": "Can't cache\n HigherOrderOperators."}))
    rec.emit(_trace_record("fx_graph_cache_bypass", {"cache_state": "bypass",
                                                     "cache_bypass_reason": "Can't cache HigherOrderOperator: cond"}))
    assert rec.bypass_reasons == ["Can't cache HigherOrderOperator: cond", "Can't cache HigherOrderOperators."]


@pytest.mark.slow  # compiles a model: tens of seconds (the quick suite's 15 minutes)
def test_this_torchs_fx_cache_bypass_of_a_cond_is_heard_with_its_reason(tmp_path, monkeypatch):
    """Inductor itself compiling a ``torch.cond`` (a higher-order op its FX graph cache does not
    keep) in a cache of its own: counted as bypassed, with torch's reason."""
    torch = pytest.importorskip("torch")
    from inductor_bench.runner import dynamo_counts, trace_log

    def f(x):
        return torch.cond(x.sum() > 0, lambda y: y.sin(), lambda y: y.cos(), (x,))

    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    rec = dynamo_counts.attach_compile_recorder()
    try:
        with torch._inductor.config.patch(fx_graph_cache=True):
            torch.compile(f)(torch.randn(8))
    finally:
        logging.getLogger(trace_log.TRACE_LOGGER).removeHandler(rec)
        logging.getLogger(dynamo_counts.LIMIT_LOGGER).removeHandler(rec)
        torch._dynamo.reset()
    assert dynamo_counts.fx_cache_counts() == {"hits": 0, "misses": 0, "bypassed": 1}
    (why,) = rec.bypass_reasons
    assert re.fullmatch(r"Can't cache HigherOrderOperator(: cond|s\.)", why)


# synthetic, with the figures of a breakdown of models/mlp.py whose cache another torch install
# had filled (torch 2.13 CPU, 2026-12-07): the FX graph cache hit, the C++ kernels were built again
AGAIN = (f"{SHARED_CACHE}: an FX graph cache hit (2 FX graph cache hits, 0 misses), but its C++ kernels "
         "were built again (2 libraries, 53.7 s compiling kernels): the cache holds none built with this "
         "torch install's compiler command line")


def test_a_hit_whose_kernels_were_built_again_says_so():
    assert CompileCache("/c", True, 2, 0, 0, [], 2, 53.73).describe() == AGAIN
    one = CompileCache("/c", True, 1, 0, 0, [], 1, None).describe()
    assert one.endswith("(1 FX graph cache hit, 0 misses), but its C++ kernels were built again (1 library): "
                        "the cache holds none built with this torch install's compiler command line")
    # nothing built, or not counted (a result saved before): a cache hit, as before
    for built in (0, None):
        assert CompileCache("/c", True, 2, 0, 0, [], built, 0.01).describe() == (
            f"{SHARED_CACHE}: a cache hit (2 FX graph cache hits, 0 misses)")
    # a miss builds its kernels: nothing to add
    assert CompileCache("/c", False, 0, 2, 0, [], 2, 9.5).describe() == (
        "fresh cache (cold compile): a cache miss (0 FX graph cache hits, 2 misses)")


def test_the_worker_response_reaches_the_compile_line():
    """The compile worker's ``fx_cache`` answer (hand-built, as ``dynamo_counts.cache_record``
    makes it) into the result, saved and read back, and onto the compile line."""
    from inductor_bench.core.results import BreakdownResult
    from inductor_bench.core.workload import WorkloadOptions
    from inductor_bench.runner.compile_run import CompileOutcome
    from inductor_bench.runner.pipeline import _take_outcome

    comp = CompileOutcome(cache_dir="/c", cache_shared=True, compile_s=62.5, fx_cache={
        "hits": 2, "misses": 0, "bypassed": 0, "bypass_reasons": [], "kernels_built": 2, "kernel_s": 53.73})
    result = BreakdownResult(model="m")
    _take_outcome(result, WorkloadOptions(path="m.py"), comp)
    assert result.compile_cache.describe() == AGAIN
    saved = json.loads(result.to_json())["extras"]["compile_cache"]
    assert (saved["kernels_built"], saved["kernel_s"]) == (2, 53.73)
    assert BreakdownResult.from_dict(json.loads(result.to_json())).compile_cache == result.compile_cache


@pytest.mark.slow
@pytest.mark.e2e
def test_a_second_run_compiles_from_the_warm_cache(tmp_path, monkeypatch):
    from inductor_bench.core.workload import WorkloadOptions
    from inductor_bench.render.breakdown import render_breakdown
    from inductor_bench.runner.pipeline import run_breakdown
    from inductor_bench.runner.settings import RunSettings

    from .conftest import MODELS

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    opts = WorkloadOptions(path=str(MODELS / "mlp.py"), device="cpu", train=True)
    fast = RunSettings(timeout=600, iterations=5, windows=1)
    first, _, err1 = run_breakdown(opts, fast, root=tmp_path / "runs")
    second, run2, err2 = run_breakdown(opts, fast, root=tmp_path / "runs")
    assert err1 is None and err2 is None
    c1, c2 = first.compile_cache, second.compile_cache
    assert (c1.fx_hits, c2.fx_misses) == (0, 0) and c1.fx_misses == c2.fx_hits == 2  # forward, backward
    assert c1.dir == c2.dir and c1.shared and c2.shared
    assert c1.kernels_built > 0 and c2.kernels_built == 0  # its kernels' libraries found, not built
    assert (c1.aot_misses, c1.aot_saved, c2.aot_hits, c2.aot_misses) == (1, 1, 1, 0)  # one frame
    assert "a cache hit (2 FX graph cache hits, 0 misses); AOTAutograd cache: 1 hit, 0 misses" in (
        render_breakdown(second))
    assert [g.ok for g in second.graphs] == [True, True]
    assert (run2 / "cache").resolve() == (tmp_path / "xdg" / "inductor-bench").resolve() / cache.flags_tag(False)
    cold, _, _ = run_breakdown(opts, RunSettings(timeout=600, iterations=5, windows=1, fresh_cache=True),
                               root=tmp_path / "runs")
    assert not cold.compile_cache.shared and cold.compile_cache.fx_hits == 0


def test_the_bypasses_are_saved_with_the_result_and_an_older_result_reads_back_as_saved():
    from inductor_bench.core.results import BreakdownResult

    why = "Can't cache HigherOrderOperator: cond"
    r = BreakdownResult(model="m", compile_cache=CompileCache("/c", True, 0, 0, 1, [why]))
    saved = json.loads(r.to_json())["extras"]["compile_cache"]
    assert saved == {"dir": "/c", "shared": True, "fx_hits": 0, "fx_misses": 0, "fx_bypassed": 1,
                     "bypass_reasons": [why]}
    assert BreakdownResult.from_dict(json.loads(r.to_json())).compile_cache == r.compile_cache
    older = BreakdownResult(model="m", compile_cache=CompileCache("/c", True, 2, 0))
    assert json.loads(older.to_json())["extras"]["compile_cache"] == {
        "dir": "/c", "shared": True, "fx_hits": 2, "fx_misses": 0}


def test_a_script_run_says_whether_its_compile_hit_the_cache():
    """A script's compiles happen inside its own run (no first call timed apart, no
    ``compile_s``): the report still says what the cache gave it. The recorded quiet mlp
    run, made a script's."""
    import dataclasses

    from inductor_bench.core.rundir import load_breakdown
    from inductor_bench.render.breakdown import render_breakdown

    recorded = load_breakdown(FIXTURES / "results" / "cpu_mlp_train_quiet")
    for kept, words in ((CompileCache("/c", True, 2, 0), "a cache hit (2 FX graph cache hits, 0 misses)"),
                         (CompileCache("/c", True, 0, 2), "a cache miss (0 FX graph cache hits, 2 misses)")):
        r = dataclasses.replace(recorded, script=True, compile_s=None, compile_cache=kept)
        lines = render_breakdown(r).splitlines()
        assert f"compile: {SHARED_CACHE}: {words}" in lines
        assert not any(line.startswith("compile (first call") for line in lines)


def test_the_aot_autograd_cache_outcome_is_on_the_compile_line():
    """Synthetic counts: AOTAutograd's cache in front of the FX graph cache (one entry per
    frame). Its miss beside FX graph cache hits says the joint graph was traced again; a
    freezing run's bypass gives torch's reason; a result from before it was counted reads as before."""
    hit = CompileCache("/c", True, 2, 0, 0, [], 0, 0.0, 1, 0, 0)
    assert hit.describe() == (f"{SHARED_CACHE}: a cache hit (2 FX graph cache hits, 0 misses); "
                              "AOTAutograd cache: 1 hit, 0 misses")
    again = CompileCache("/c", True, 2, 0, 0, [], 0, 0.0, 0, 1, 0, [], 1)
    assert again.describe().endswith("AOTAutograd cache: 0 hits, 1 miss (AOTAutograd traced its graphs again)")
    # torch 2.13 CPU, nn.Linear + nn.GELU called with grad enabled and no backward, its second
    # process on one cache (2026-12-07): autograd_cache_miss 1, no autograd_cache_saved, fxgraph_cache_hit 1
    forward_only = CompileCache("/c", True, 1, 0, 0, [], 0, 0.0, 0, 1, 0, [], 0)
    assert forward_only.describe() == (
        f"{SHARED_CACHE}: a cache hit (1 FX graph cache hit, 0 misses); AOTAutograd cache: 0 hits, 1 miss "
        "(AOTAutograd traced its graphs again), 1 not saved (torch saves a training graph's entry once its "
        "backward has compiled: a forward run with grad enabled and no backward leaves none)")
    why = "Cannot cache a graph with freezing enabled"
    frozen = CompileCache("/c", True, 1, 0, 0, [], 0, 0.0, 0, 0, 1, [why])
    assert frozen.describe().endswith(
        "AOTAutograd cache: 0 hits, 0 misses, 1 bypassed (AOTAutograd traced its graphs again); "
        "bypassed because: Cannot cache a graph with freezing enabled")
    cold = CompileCache("/c", False, 0, 2, 0, [], 2, 9.5, 0, 1, 0, [], 1)
    assert cold.describe() == ("fresh cache (cold compile): a cache miss (0 FX graph cache hits, 2 misses); "
                               "AOTAutograd cache: 0 hits, 1 miss")
    assert "AOTAutograd" not in CompileCache("/c", True, 2, 0, 0, [], 0, 0.0).describe()


def test_the_worker_response_carries_the_aot_autograd_outcome_into_the_result():
    """A hand-built ``fx_cache`` answer (as ``dynamo_counts.cache_record`` makes it) with
    AOTAutograd's counts and bypass reason: into the result, saved and read back."""
    from inductor_bench.core.results import BreakdownResult
    from inductor_bench.core.workload import WorkloadOptions
    from inductor_bench.runner.compile_run import CompileOutcome
    from inductor_bench.runner.pipeline import _take_outcome

    why = "Cannot cache a graph with freezing enabled"
    comp = CompileOutcome(cache_dir="/c", cache_shared=True, compile_s=6.2, fx_cache={
        "hits": 1, "misses": 0, "bypassed": 0, "bypass_reasons": [], "kernels_built": 0, "kernel_s": 0.0,
        "aot_hits": 0, "aot_misses": 0, "aot_bypassed": 1, "aot_bypass_reasons": [why], "aot_saved": 0})
    result = BreakdownResult(model="m")
    _take_outcome(result, WorkloadOptions(path="m.py"), comp)
    cc = result.compile_cache
    assert (cc.aot_hits, cc.aot_misses, cc.aot_bypassed, cc.aot_bypass_reasons, cc.aot_saved) == (0, 0, 1, [why], 0)
    saved = json.loads(result.to_json())["extras"]["compile_cache"]
    assert (saved["aot_bypassed"], saved["aot_bypass_reasons"]) == (1, [why])
    assert BreakdownResult.from_dict(json.loads(result.to_json())).compile_cache == cc


def test_the_recorder_keeps_aot_autograds_bypass_reasons_apart_from_the_fx_caches():
    """Synthetic records as torch 2.13 writes them (``aotautograd_cache_{state}``,
    ``AOTAutogradCache.try_load``): a bypass's reason, once; a hit or a miss gives none."""
    from inductor_bench.runner.dynamo_counts import CompileRecorder

    rec = CompileRecorder()
    bypass = {"cache_state": "bypass", "cache_bypass_reason": "Cannot cache a graph with freezing enabled"}
    for _ in range(2):
        rec.emit(_trace_record("aotautograd_cache_bypass", bypass))
    rec.emit(_trace_record("aotautograd_cache_miss", {"cache_state": "miss", "key": "a123"}))
    assert rec.aot_bypass_reasons == ["Cannot cache a graph with freezing enabled"] and rec.bypass_reasons == []


def test_this_torchs_aot_autograd_cache_counters_are_read(monkeypatch):
    torch = pytest.importorskip("torch")
    from inductor_bench.runner.dynamo_counts import aot_cache_counts

    c = torch._dynamo.utils.counters
    monkeypatch.setitem(c, "aot_autograd", type(c["aot_autograd"])(
        {"autograd_cache_hit": 2, "autograd_cache_miss": 1, "autograd_cache_bypass": 1, "autograd_cache_saved": 1}))
    assert aot_cache_counts() == {"aot_hits": 2, "aot_misses": 1, "aot_bypassed": 1, "aot_saved": 1}
