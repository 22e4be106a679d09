"""One worker for many requests (runner/batch.py), with a stand-in worker: answers in order,
one process for all, and a crash, a hang or an error costs that request only."""

from __future__ import annotations

import time

import pytest

from inductor_bench.core import errors
from inductor_bench.runner.batch import BatchItem, Standby, run_batch

from .batch_worker import HANG_S

WORKER = "tests.batch_worker"


def items(*behaviours: str) -> list[BatchItem]:
    return [BatchItem(f"g{i}", {"do": b, "value": i}) for i, b in enumerate(behaviours)]


def test_one_process_answers_every_request_in_order(tmp_path):
    started, done = [], []
    out = run_batch(WORKER, items("ok", "ok", "ok"), timeout=60, log_path=tmp_path / "w.log",
                    on_start=started.append, on_done=lambda k, a: done.append(k))
    assert started == done == ["g0", "g1", "g2"]
    assert [out[k]["value"] for k in ("g0", "g1", "g2")] == [0, 1, 2]
    assert len({out[k]["pid"] for k in out}) == 1  # torch and the model imported once


def test_a_crash_costs_that_request_and_a_new_worker_takes_the_rest(tmp_path):
    out = run_batch(WORKER, items("ok", "crash", "ok", "raise", "ok"), timeout=60,
                    log_path=tmp_path / "w.log")
    assert isinstance(out["g1"], errors.WorkerError) and "exited with code 139 while working on g1" in str(out["g1"])
    assert isinstance(out["g3"], errors.WorkloadError) and str(out["g3"]) == "the graph raised"
    assert out["g0"]["pid"] != out["g2"]["pid"] == out["g4"]["pid"]  # restarted after the crash
    assert [out[k]["value"] for k in ("g0", "g2", "g4")] == [0, 2, 4]


def test_a_hang_times_out_alone(tmp_path):
    """The hanging request is cut at the timeout: the whole batch ends before the hang would
    have (two worker starts and the timeout, however slow this machine is now)."""
    t0 = time.monotonic()
    out = run_batch(WORKER, items("ok", "hang", "ok"), timeout=3, log_path=tmp_path / "w.log")
    assert isinstance(out["g1"], errors.WorkerTimeout) and "on g1" in str(out["g1"])
    assert out["g0"]["value"] == 0 and out["g2"]["value"] == 2
    assert time.monotonic() - t0 < HANG_S
    # before it was killed, the hanging worker wrote where it was to the log
    log = (tmp_path / "w.log").read_text()
    assert "Current thread" in log or "Thread 0x" in log
    assert 'in handle' in log and "batch_worker.py" in log


def test_ctrl_c_keeps_what_was_answered(tmp_path):
    done: dict = {}

    def on_done(key, answer):
        done[key] = answer
        if key == "g0":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_batch(WORKER, items("ok", "hang"), timeout=60, log_path=tmp_path / "w.log", on_done=on_done)
    assert list(done) == ["g0"] and done["g0"]["value"] == 0


def _wait(path, limit=30.0):
    t0 = time.monotonic()
    while not path.exists() and time.monotonic() - t0 < limit:
        time.sleep(0.02)
    return path.exists()


def test_a_standby_worker_prepares_before_its_batch_and_then_answers_it(tmp_path):
    sb = Standby(WORKER, {"sleep": 0.3, "tag": "imported"}, log_path=tmp_path / "w.log")
    try:
        assert _wait(sb.ready_file)  # prepared, and waiting for the batch
        ready_at = time.time()
        time.sleep(0.2)
        assert sb.proc.poll() is None
        out = run_batch(WORKER, items("ok", "ok"), timeout=60, log_path=tmp_path / "w.log", standby=sb)
    finally:
        sb.close()
    assert out["g0"]["pid"] == out["g1"]["pid"] == sb.proc.pid  # the standby took the batch
    assert out["g0"]["prepared"]["tag"] == "imported" and out["g0"]["prepared"]["at"] <= ready_at


def test_a_standby_whose_preparation_fails_is_ready_and_still_answers(tmp_path):
    sb = Standby(WORKER, {"fail": True}, log_path=tmp_path / "w.log")
    try:
        assert _wait(sb.ready_file)
        out = run_batch(WORKER, items("ok"), timeout=60, log_path=tmp_path / "w.log", standby=sb)
    finally:
        sb.close()
    assert out["g0"]["value"] == 0 and out["g0"]["prepared"] == {}
    assert "ImportError: no module named broken" in (tmp_path / "w.log").read_text()


def test_a_dead_standby_is_replaced_by_a_fresh_worker(tmp_path):
    sb = Standby(WORKER, {}, log_path=tmp_path / "w.log")
    try:
        sb.proc.kill()
        sb.proc.wait()
        out = run_batch(WORKER, items("ok", "crash", "ok"), timeout=60, log_path=tmp_path / "w.log", standby=sb)
    finally:
        sb.close()
    assert out["g0"]["pid"] != sb.proc.pid and out["g0"]["value"] == 0
    assert isinstance(out["g1"], errors.WorkerError) and out["g2"]["value"] == 2


def test_an_unused_standby_is_killed_by_close(tmp_path):
    sb = Standby(WORKER, {}, log_path=tmp_path / "w.log")
    assert _wait(sb.ready_file)
    sb.close()
    assert sb.proc.poll() is not None and not sb.wdir.exists()


def test_a_standby_after_another_prepares_once_that_one_is_ready(tmp_path):
    """Two standbys never import at once: the second starts preparing after the first made
    its ready file, and the first's batch does not wait for the second."""
    first = Standby(WORKER, {"sleep": 1.0, "tag": "first"}, log_path=tmp_path / "w.log")
    second = Standby(WORKER, {"sleep": 0.5, "tag": "second"}, log_path=tmp_path / "w.log", after=first)
    try:
        assert _wait(first.ready_file)
        one = run_batch(WORKER, items("ok"), timeout=60, log_path=tmp_path / "w.log", standby=first)
        assert _wait(second.ready_file)
        two = run_batch(WORKER, items("ok"), timeout=60, log_path=tmp_path / "w.log", standby=second)
    finally:
        first.close()
        second.close()
    a, b = one["g0"]["prepared"], two["g0"]["prepared"]
    assert (a["tag"], b["tag"]) == ("first", "second") and "after_ready" not in b
    assert b["started"] >= a["at"]  # prepared after the first had prepared
    assert one["g0"]["pid"] == first.proc.pid and two["g0"]["pid"] == second.proc.pid


def test_a_standby_after_one_that_died_prepares_all_the_same(tmp_path):
    first = Standby(WORKER, {"sleep": 30}, log_path=tmp_path / "w.log")
    second = Standby(WORKER, {"tag": "second"}, log_path=tmp_path / "w.log", after=first)
    try:
        first.proc.kill()
        first.proc.wait()
        assert _wait(second.ready_file)  # not 30 s later, nor never
        out = run_batch(WORKER, items("ok"), timeout=60, log_path=tmp_path / "w.log", standby=second)
    finally:
        first.close()
        second.close()
    assert out["g0"]["prepared"]["tag"] == "second"
