"""``scripts/bench_trace_parse.py`` run as a user runs it, on traces of about 1 MB: the events
each reader keeps are the ones the script wrote, counted here from how it writes them. Its
timings depend on the machine and are not judged."""

from __future__ import annotations

import math
import re
import subprocess
import sys

import pytest

from inductor_bench.core.trace import load_trace

from .conftest import ROOT

SCRIPT = ROOT / "scripts" / "bench_trace_parse.py"


def _run(*args: str) -> tuple[int, dict[str, str]]:
    """(events written, {case: events kept}) from the script's header line and table."""
    out = subprocess.run([sys.executable, str(SCRIPT), "--mb", "1", "--repeat", "1", *args],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    written = re.search(r"trace: ([\d,]+) events", out.stdout)
    assert written, out.stdout
    rows = {}
    for line in out.stdout.splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) >= 8 and re.fullmatch(r"[\d,]+|-", cells[1]):
            rows[cells[0]] = cells[1]
    return int(written[1].replace(",", "")), rows


def test_the_launch_shaped_trace_is_read_whole_by_every_reader():
    """Per launch: 5 complete events (two Python, the op, the launch, the kernel), and a flow
    pair on every third. Of the written events, load_trace keeps every complete one, the
    analysis the op, launch and kernel of each, analyze each launch's kernel."""
    written, kept = _run("--kinds", "new,analyze,inflate")
    launches = int(kept["analyze"].replace(",", ""))
    assert written == 5 * launches + 2 * math.ceil(launches / 3)
    assert {k: int(v.replace(",", "")) for k, v in kept.items() if v != "-"} == {
        "analyze": launches, "analyze, gzipped": launches,
        "load_for_analysis": 3 * launches, "load_for_analysis, gzipped": 3 * launches,
        "load_trace (all events, all args)": 5 * launches,
        "load_trace (all events, all args), gzipped": 5 * launches,
        "decoding floor (load_trace keeping nothing)": 0}
    assert kept["inflate only: stdlib gzip (zlib)"] == "-"


def test_the_kernel_heavy_trace_has_a_step_marker_every_thousand_launches():
    written, kept = _run("--kinds", "new", "--shape", "kernel-heavy", "--plain-only")
    complete = int(kept["load_trace (all events, all args)"].replace(",", ""))
    launches = int(kept["load_for_analysis"].replace(",", "")) // 3
    assert complete == 3 * launches + math.ceil(launches / 1000)
    assert written == complete + 2 * launches


@pytest.mark.parametrize("trace", ["cpu_mlp_train/0-forward/trace.json.gz"])
def test_a_replicated_real_trace_holds_whole_copies_of_its_events(trace):
    """--replicate repeats a recorded trace's events verbatim: load_trace keeps a whole
    multiple of what it keeps of the original."""
    source = ROOT / "tests" / "fixtures" / trace
    once = len(load_trace(source).events)
    written, kept = _run("--kinds", "new", "--plain-only", "--replicate", str(source))
    copies, rest = divmod(int(kept["load_trace (all events, all args)"].replace(",", "")), once)
    assert rest == 0 and copies >= 1
    assert written % copies == 0
