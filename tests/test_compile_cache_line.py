"""The compile line's account of the compile cache (core/run_extras.CompileCache.describe): each
count in its number, a partial hit's compiles and kernels, and the kernel libraries a run counts
as built (runner/dynamo_counts.py): its own, not another run's sharing the cache."""

from __future__ import annotations

import json
import logging

import pytest

from inductor_bench.core.results import BreakdownResult, CompileCache
from inductor_bench.runner import dynamo_counts

SHARED_CACHE = "inductor-bench's private cache (reused across runs)"  # as the compile line says it
AGAIN_WHY = "the cache holds none of {} kernels built with this torch install's compiler command line"


def test_each_count_of_one_is_said_in_the_singular():
    """Synthetic counts of one of each: a hit, a miss, a bypass, AOTAutograd's hit and miss."""
    assert CompileCache("/c", True, 1, 0, 0, [], 0, 0.0, 1, 0, 0, [], 0).describe() == (
        f"{SHARED_CACHE}: a cache hit (1 FX graph cache hit, 0 misses); AOTAutograd cache: 1 hit, 0 misses")
    assert CompileCache("/c", False, 0, 1, 1, ["why"], 1, 0.5, 0, 1, 0, [], 1).describe() == (
        "fresh cache (cold compile): a cache miss (0 FX graph cache hits, 1 miss, 1 bypassed); "
        "bypassed because: why; AOTAutograd cache: 0 hits, 1 miss")
    assert CompileCache("/c", True, 3, 2).describe() == (
        f"{SHARED_CACHE}: partly a cache hit (3 FX graph cache hits, 2 misses)")


def test_a_partial_hit_names_the_compiles_and_the_kernels_the_hits_built_again():
    """Synthetic: compile 0's forward and backward hit, compile 1's graph missed; of the 3
    libraries built, 1 by the graphs that hit (their verdicts as the recorder keeps them)."""
    verdicts = [["0", "hit"], ["0", "hit"], ["1", "miss"]]
    partly = CompileCache("/c", True, 2, 1, 0, [], 3, 4.26, fx_verdicts=verdicts, kernels_built_on_hits=1)
    assert partly.describe() == (
        f"{SHARED_CACHE}: partly a cache hit (2 FX graph cache hits: compile 0; 1 miss: compile 1); C++ kernels "
        f"built: 3 libraries, 4.3 s compiling kernels, 1 of them again for the graphs that hit ({AGAIN_WHY.format('their')})")
    one = CompileCache("/c", True, 1, 2, 0, [], 3, None, fx_verdicts=[["0", "miss"], ["1", "hit"], ["1.1", "miss"]],
                       kernels_built_on_hits=3)
    assert one.describe() == (
        f"{SHARED_CACHE}: partly a cache hit (1 FX graph cache hit: compile 1; 2 misses: compiles 0, 1.1); C++ "
        f"kernels built: 3 libraries, 3 of them again for the graph that hit ({AGAIN_WHY.format('its')})")
    found = CompileCache("/c", True, 1, 1, 0, [], 1, 0.8, fx_verdicts=[["0", "hit"], ["1", "miss"]],
                         kernels_built_on_hits=0)
    assert found.describe().endswith(
        "(1 FX graph cache hit: compile 0; 1 miss: compile 1); C++ kernels built: 1 library, 0.8 s compiling "
        "kernels, none of them for the graph that hit (the cache held its kernels)")
    # the graphs' verdicts not kept (torch 2.5, or a result saved before): all built, said so
    older = CompileCache("/c", True, 1, 1, 1, ["why"], 2, 1.5)
    assert older.describe() == (
        f"{SHARED_CACHE}: partly a cache hit (1 FX graph cache hit, 1 miss, 1 bypassed); C++ kernels built: "
        "2 libraries, 1.5 s compiling kernels, for the graphs that did not hit and perhaps again for the graph "
        "that hit; bypassed because: why")


def test_the_verdicts_and_the_kernels_built_on_hits_are_saved_and_read_back():
    kept = CompileCache("/c", True, 1, 1, 0, [], 2, 1.0, fx_verdicts=[["0", "hit"], ["1", "miss"]],
                        kernels_built_on_hits=1)
    r = BreakdownResult(model="m", compile_cache=kept)
    saved = json.loads(r.to_json())["extras"]["compile_cache"]
    assert (saved["fx_verdicts"], saved["kernels_built_on_hits"]) == ([["0", "hit"], ["1", "miss"]], 1)
    assert BreakdownResult.from_dict(json.loads(r.to_json())).compile_cache == kept
    assert "fx_verdicts" not in json.loads(BreakdownResult(model="m", compile_cache=CompileCache(
        "/c", True, 2, 0)).to_json())["extras"]["compile_cache"]


def _verdict(name: str, frame: int, compile_id: int) -> logging.LogRecord:
    r = logging.LogRecord("torch.__trace", logging.DEBUG, "", 0, "", (), None)
    r.metadata = {"artifact": {"name": name, "encoding": "json"}, "frame_id": frame, "frame_compile_id": compile_id}
    r.payload = json.dumps({"cache_state": name.rsplit("_", 1)[1], "key": "f123"})
    return r


def test_the_recorder_gives_the_graphs_that_hit_the_libraries_built_before_their_verdict(monkeypatch):
    """Synthetic records as torch 2.13 writes them (``fx_graph_cache_{state}``, once a graph's
    module and its kernels are loaded): each library built falls to the next verdict."""
    monkeypatch.setattr(dynamo_counts, "KERNEL_BUILDS", ["/other/recorder's.main.so"])
    rec = dynamo_counts.CompileRecorder()
    assert rec.kernels_built() == 0 and rec.kernels_built_on_hits() is None
    dynamo_counts.KERNEL_BUILDS.append("/c/a.main.so")
    rec.emit(_verdict("fx_graph_cache_miss", 0, 0))  # compile 0: 1 library
    dynamo_counts.KERNEL_BUILDS.extend(["/c/b.main.so", "/c/c.main.so"])
    rec.emit(_verdict("fx_graph_cache_hit", 1, 0))  # compile 1: 2 built again
    rec.emit(_verdict("fx_graph_cache_hit", 1, 1))  # compile 1.1: its kernels found
    dynamo_counts.KERNEL_BUILDS.append("/c/d.main.so")
    rec.emit(_verdict("fx_graph_cache_bypass", 2, 0))
    assert rec.verdicts == [("0", "miss", 1), ("1", "hit", 3), ("1.1", "hit", 3), ("2", "bypass", 4)]
    assert (rec.kernels_built(), rec.kernels_built_on_hits()) == (4, 2)


def test_a_run_counts_the_kernel_libraries_it_built_not_another_runs_in_the_same_cache(tmp_path, monkeypatch):
    """Two runs sharing the cache at once: the other run's library, written into the cache's
    directory while this one compiles, is not counted; this process's own build is, once (loaded
    again with the library on disk, nothing is built)."""
    pytest.importorskip("torch")
    from torch._inductor.codecache import CppCodeCache
    from torch._inductor.cpp_builder import CppBuilder

    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(CppBuilder, "build", CppBuilder.build)  # torch's own again afterwards
    monkeypatch.setattr(dynamo_counts, "KERNEL_BUILDS", [])
    dynamo_counts.count_kernel_builds()
    rec = dynamo_counts.CompileRecorder()
    other = tmp_path / "zz" / "czzanotherrun.main.so"
    other.parent.mkdir()
    other.write_bytes(b"")  # another run's library, built meanwhile
    code = 'extern "C" int seven() { return 7; }  // inductor-bench counting test'
    assert CppCodeCache.load(code, needs_vec_isa=False).seven() == 7
    built = dynamo_counts.KERNEL_BUILDS[rec.builds_from:]
    assert rec.kernels_built() == 1 and built[0].startswith(str(tmp_path)) and built[0].endswith(".main.so")
    CppCodeCache.cache.clear()  # as another process loading it: the library is on disk
    assert CppCodeCache.load(code, needs_vec_isa=False).seven() == 7
    assert rec.kernels_built() == 1


# recorded: a breakdown of a two-frame model (a graph break between them) whose second frame's
# code changed, its cache's kernel libraries removed beforehand (torch 2.13 CPU, 2026-12-07)
PARTLY = {"dir": "/c", "shared": True, "fx_hits": 1, "fx_misses": 1, "fx_bypassed": 0, "kernels_built": 2,
          "kernel_s": 6.292, "aot_hits": 1, "aot_misses": 1, "aot_bypassed": 0, "aot_saved": 1,
          "fx_verdicts": [["0", "hit"], ["1", "miss"]], "kernels_built_on_hits": 1}


def test_a_recorded_partial_hit_reads_as_it_happened():
    """Compile 0 hit and built its one library again; compile 1 missed, built its own and missed
    AOTAutograd's cache as a new compile does: nothing traced again behind a hit."""
    assert CompileCache(**PARTLY).describe() == (
        f"{SHARED_CACHE}: partly a cache hit (1 FX graph cache hit: compile 0; 1 miss: compile 1); C++ kernels "
        f"built: 2 libraries, 6.3 s compiling kernels, 1 of them again for the graph that hit ({AGAIN_WHY.format('its')}); "
        "AOTAutograd cache: 1 hit, 1 miss")
    # synthetic: AOTAutograd missed the compile that hit too
    behind = CompileCache(**{**PARTLY, "aot_hits": 0, "aot_misses": 2, "aot_saved": 2})
    assert behind.describe().endswith("AOTAutograd cache: 0 hits, 2 misses (AOTAutograd traced its graphs again)")


def test_a_partial_hit_names_the_graphs_that_hit_and_missed():
    """Synthetic training run of two compiles, verdicts in the order torch writes them (each
    compile's forward, then the backwards as the first backward pass compiles them): all hit but
    compile 1's backward."""
    verdicts = [["0", "hit"], ["1", "hit"], ["1", "miss"], ["0", "hit"]]
    graphs = ["0-forward", "0-backward", "1-forward", "1-backward"]
    partly = CompileCache("/c", True, 3, 1, 0, [], 1, None, fx_verdicts=verdicts, kernels_built_on_hits=0)
    assert partly.describe(graphs) == (
        f"{SHARED_CACHE}: partly a cache hit (3 FX graph cache hits: graphs 0-forward, 1-forward, 0-backward; "
        "1 miss: graph 1-backward); C++ kernels built: 1 library, none of them for the graphs that hit "
        "(the cache held their kernels)")
    # the same verdicts named by compile where the run's graphs are not given
    assert "(3 FX graph cache hits: compiles 0, 1; 1 miss: compile 1)" in partly.describe()


def test_a_compile_whose_graphs_cannot_be_told_apart_is_named_by_its_compile():
    """Synthetic: compile 0 made two forward graphs (which verdict is whose is not known), one
    hit and one missed; compile 1's one graph missed."""
    verdicts = [["0", "hit"], ["0", "miss"], ["1", "miss"]]
    partly = CompileCache("/c", True, 1, 2, fx_verdicts=verdicts)
    assert partly.describe(["0-forward", "0-forward-2", "1-inference"]) == (
        f"{SHARED_CACHE}: partly a cache hit (1 FX graph cache hit: compile 0; 2 misses: graph 1-inference "
        "and compile 0)")
    # a compile with more verdicts than graphs kept: by its compile too
    assert "(1 FX graph cache hit: compile 0; 2 misses: compiles 0, 1)" in partly.describe(["0-forward", "1-x"])


def test_a_partial_hit_that_built_no_kernel_library_says_so():
    """Synthetic: the graph that missed found its kernel libraries in the cache as well."""
    partly = CompileCache("/c", True, 1, 1, 0, [], 0, 0.0, fx_verdicts=[["0", "hit"], ["1", "miss"]],
                          kernels_built_on_hits=0)
    assert partly.describe(["0-inference", "1-inference"]) == (
        f"{SHARED_CACHE}: partly a cache hit (1 FX graph cache hit: graph 0-inference; 1 miss: graph "
        "1-inference); C++ kernels built: none (the cache held those of the graphs that did not hit too)")
    # not counted (a result from before they were): nothing said of them
    assert CompileCache("/c", True, 1, 1, fx_verdicts=[["0", "hit"], ["1", "miss"]]).describe().endswith(
        "1 miss: compile 1)")


def test_the_breakdown_compile_line_names_the_run_s_graphs():
    """Synthetic run of two inference graphs, compile 0's hit and compile 1's missed."""
    from inductor_bench.core.results import GraphResult
    from inductor_bench.render.breakdown import render_breakdown

    cache = CompileCache("/c", True, 1, 1, 0, [], 1, 0.5, fx_verdicts=[["0", "hit"], ["1", "miss"]],
                         kernels_built_on_hits=0)
    graphs = [GraphResult(id="0-inference", role="inference"), GraphResult(id="1-inference", role="inference")]
    text = render_breakdown(BreakdownResult(model="m", graphs=graphs, compile_s=2.04, compile_cache=cache))
    line = next(ln for ln in text.splitlines() if ln.startswith("compile (first call"))
    assert line == (
        f"compile (first call, timed on its own): 2.0 s; {SHARED_CACHE}: partly a cache hit (1 FX graph cache "
        "hit: graph 0-inference; 1 miss: graph 1-inference); C++ kernels built: 1 library, 0.5 s compiling "
        "kernels, none of them for the graph that hit (the cache held its kernels)")
