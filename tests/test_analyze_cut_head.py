"""A gzipped trace cut short before ``HEADER_CHARS`` characters of its text: its header is
still read (``trace_head``: what its stream held before it ended), so its rank, host and
process are known; it read as nothing (EOFError before the read was done). Where every trace
of a set is cut short (found so as it is read) or holds nothing profiled, the refusal says how
many were cut: it counted them among the traces holding nothing. The traces are cut here
from ``tests/fixtures/ranks/cpu_gloo`` (recorded, torch 2.13.0 CPU, two gloo ranks),
``tests/fixtures/ranks`` (synthetic ranks made from a real A100 trace), a synthetic
handler cycle (``test_analyze_cycles.handler_file``) and ``tests/fixtures/ranks/cpu_gloo_cycles``
(recorded, torch 2.13.0 CPU, two ranks of two cycles); a trace with nothing profiled is
synthetic (``EXIT_CYCLE``)."""

from __future__ import annotations

import gzip
import json
import re

from inductor_bench.core.ranks import rank_of
from inductor_bench.core.trace_files import HEADER_CHARS, trace_head
from inductor_bench.core.trace_sets import origin_of

from .conftest import FIXTURES
from .test_analyze import run_cli
from .test_analyze_cut_in_reading import _cut_after_an_event
from .test_analyze_cut_short import RANKS
from .test_analyze_cycles import CYCLE_A, CYCLE_B, EXIT_CYCLE, handler_file

GLOO_RANK_1 = FIXTURES / "ranks" / "cpu_gloo" / "rank-1.json.gz"
CUT_BYTES = 2000  # of 11874 gzipped: about 17K characters of its 140K


def test_a_gzipped_trace_cut_before_its_head_is_read_keeps_what_it_held(tmp_path):
    cut = tmp_path / "rank-1.json.gz"
    cut.write_bytes(GLOO_RANK_1.read_bytes()[:CUT_BYTES])
    text = gzip.decompress(GLOO_RANK_1.read_bytes()).decode()
    head = trace_head(cut)
    assert 0 < len(head) < HEADER_CHARS and text.startswith(head)
    meta = json.loads(text)
    pid = next(e["pid"] for e in meta["traceEvents"] if e.get("name") == "process_name")
    assert (meta["distributedInfo"]["rank"], meta["host_name"], pid) == (1, "vm", 847)
    assert rank_of(cut) == 1
    o = origin_of(cut)
    assert (o.host, o.pid, o.began_ns) == ("vm", 847, meta["baseTimeNanoseconds"])


def test_ranks_all_cut_or_empty_say_how_many_were_cut(capsys, tmp_path):
    """Ranks 0 and 1 cut after an event (found as they are read), rank 2 with nothing profiled."""
    for rank in (0, 1):
        _cut_after_an_event(RANKS / f"rank-{rank}.json.gz", tmp_path / f"rank-{rank}.json")
    (tmp_path / "rank-2.json").write_text(json.dumps({"traceEvents": EXIT_CYCLE}))
    code, out, err = run_cli(capsys, str(tmp_path))
    assert (code, out) == (2, "")
    assert err.endswith("inductor-bench: error: none of the 3 traces holds GPU activity or CPU ops (2 cut short, "
                        "found so as they were read; 1 with nothing profiled): nothing to analyse\n")


def test_cycles_all_cut_or_empty_say_how_many_were_cut(capsys, tmp_path):
    """One process's cycles (synthetic): one cut after an event, the exit's with nothing profiled."""
    whole = handler_file(tmp_path, 7, 40_000, CYCLE_A + [dict(e, pid=7) for e in CYCLE_B])
    _cut_after_an_event(whole, whole)
    handler_file(tmp_path, 7, 9_000, EXIT_CYCLE)
    code, out, err = run_cli(capsys, str(tmp_path))
    assert (code, out) == (2, "")
    assert re.search(r"none of the 2 traces holds GPU activity or CPU ops \(1 cut short, found so as it was "
                     r"read; 1 with nothing profiled\): nothing to analyse\n$", err), err


def test_ranks_cycles_all_cut_or_empty_say_how_many_were_cut(capsys, tmp_path):
    """Each gloo rank's first cycle cut after an event (recorded, found as it is read), its
    second with nothing profiled (synthetic, naming the rank)."""
    gloo = FIXTURES / "ranks" / "cpu_gloo_cycles"
    for rank, pid in enumerate((12141, 12142)):
        first = min(gloo.glob(f"vm_{pid}.*.pt.trace.json.gz"))
        _cut_after_an_event(first, tmp_path / first.name)
        (tmp_path / f"vm_{pid}.1796275478999999999.pt.trace.json").write_text(json.dumps(
            {"distributedInfo": {"rank": rank, "world_size": 2}, "host_name": "vm", "traceEvents": EXIT_CYCLE}))
    code, out, err = run_cli(capsys, str(tmp_path))
    assert (code, out) == (2, "")
    assert err.endswith("inductor-bench: error: none of the 4 traces holds GPU activity or CPU ops (2 cut short, "
                        "found so as they were read; 2 with nothing profiled): nothing to analyse\n")
