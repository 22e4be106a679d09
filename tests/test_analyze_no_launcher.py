"""A top kernel none of whose launches an op (or a range other than the step's) encloses reads
``-`` under launched by, with a line under the table saying what that means, in text, markdown
and HTML alike; the JSON keeps null. Before, the cell was blank, as if data were missing."""

from __future__ import annotations

import json

from .conftest import FIXTURES
from .test_analyze import raw_events, run_cli

SYNC = FIXTURES / "hta_small" / "event_sync_trace.json.gz"
SPIN = "at::cuda::(anonymous namespace)::spin_kernel(long)"
NOTE = "launched by -: no op was open on the CPU thread at any of its launches"


def _enclosing_ops() -> dict[str, list[str]]:
    """Each kernel's launch (same correlation) and the ops and ranges (step markers aside) on
    the launch's thread whose span holds it, read from the raw JSON."""
    evs = raw_events(SYNC)
    launch = {e["args"]["correlation"]: e for e in evs if e.get("cat") == "cuda_runtime"}
    around = [e for e in evs if e.get("cat") in ("cpu_op", "user_annotation")
              and not e["name"].startswith("ProfilerStep#")]
    out = {}
    for k in (e for e in evs if e.get("cat") == "kernel"):
        lo = launch[k["args"]["correlation"]]
        out[k["name"]] = [o["name"] for o in around if o["tid"] == lo["tid"]
                          and o["ts"] <= lo["ts"] and lo["ts"] + lo["dur"] <= o["ts"] + o["dur"]]
    return out


def test_a_kernel_launched_in_no_op_reads_a_dash_in_every_format(capsys):
    ops = _enclosing_ops()
    assert ops[SPIN] == [] and all(ops[k] for k in ops if k != SPIN)  # spin_kernel alone has none
    code, out, _ = run_cli(capsys, str(SYNC), "--format", "json")
    kernels = {k["name"]: k for k in json.loads(out)["kernels"]}
    assert code == 0 and kernels[SPIN]["launched_by"] is None and kernels[SPIN]["launchers"] == []
    assert all(k["launched_by"] for name, k in kernels.items() if name in ops and name != SPIN)

    code, text, _ = run_cli(capsys, str(SYNC))
    row = next(line for line in text.splitlines() if "spin_kernel(long)" in line and "70.6%" in line)
    assert code == 0 and row.rstrip().endswith("70.6%  -")
    assert NOTE in text and text.count(NOTE) == 1

    code, md, _ = run_cli(capsys, str(SYNC), "--format", "markdown")
    row = next(line for line in md.splitlines() if "spin_kernel(long)" in line and line.startswith("|"))
    assert code == 0 and row.split("|")[-2].strip() == "-" and NOTE in md

    code, page, _ = run_cli(capsys, str(SYNC), "--format", "html")
    row = next(line for line in page.splitlines() if "spin_<wbr>kernel(long)</code></td>" in line)
    assert code == 0 and row.endswith("<td>-</td></tr>") and NOTE in page


def _trace(path, launched: bool, in_op: bool):
    """Synthetic: one step, one kernel; its launch recorded or not, inside an op or not."""
    evs = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 100, "pid": 1, "tid": 1},
           {"ph": "X", "cat": "kernel", "name": "k", "ts": 20, "dur": 50, "pid": 0, "tid": 7,
            "args": {"correlation": 5}}]
    if launched:
        evs.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 12, "dur": 2,
                    "pid": 1, "tid": 1, "args": {"correlation": 5}})
    if in_op:
        evs.append({"ph": "X", "cat": "cpu_op", "name": "aten::relu", "ts": 10, "dur": 6, "pid": 1, "tid": 1})
    path.write_text(json.dumps({"traceEvents": evs}))
    return path


def test_the_note_says_why_no_launcher_is_known(capsys, tmp_path):
    """Launched in aten::relu: its name, no note; launched in no op: a dash and the note; a trace
    without launch records: a dash, and the note says the trace holds none."""
    code, out, _ = run_cli(capsys, str(_trace(tmp_path / "a.json", launched=True, in_op=True)))
    assert code == 0 and "aten::relu" in out and "launched by -" not in out
    code, out, _ = run_cli(capsys, str(_trace(tmp_path / "b.json", launched=True, in_op=False)))
    assert code == 0 and NOTE in out
    code, out, _ = run_cli(capsys, str(_trace(tmp_path / "c.json", launched=False, in_op=True)))
    assert code == 0 and "launched by -: the trace holds no launch records" in out and NOTE not in out
