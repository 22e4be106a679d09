"""A CPU quota on the process (a container's CPU limit): the cgroup files read, throttling
turned into a share of the quota's periods with exact numbers, the report's warning and hint;
and, where this machine lets the test make a cgroup, a real quota that throttles a real
process."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from inductor_bench.core import cgroup
from inductor_bench.core.cgroup import CgroupMount, CpuLimit
from inductor_bench.core.load import CpuCounters, Load, load_between, throttled_pct
from inductor_bench.core.step import disturbances
from inductor_bench.render.breakdown import render_breakdown

from .conftest import ROOT
from .test_machine_speed import _result

# synthetic: the shapes of /proc/self/mountinfo (man 5 proc) on a cgroup v1 machine with the cpu
# and cpuacct controllers mounted together, inside a container's cgroup namespace, and on v2
MOUNTINFO_V1 = """\
22 1 0:21 / /sys rw,nosuid - sysfs sysfs rw
25 22 0:23 / /sys/fs/cgroup ro - tmpfs tmpfs ro,mode=755
31 25 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
33 25 0:29 /kubepods/pod1 /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct
34 25 0:30 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset
"""
MOUNTINFO_V2 = "26 22 0:24 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
CGROUP_V1 = "12:cpuset:/\n5:cpu,cpuacct:/kubepods/pod1/ctr2\n4:memory:/kubepods/pod1/ctr2\n"
CGROUP_V2 = "0::/user.slice/app.scope\n"


def test_the_cpu_hierarchy_is_found_in_either_version():
    assert cgroup.cpu_mount(MOUNTINFO_V1) == CgroupMount(1, "/kubepods/pod1", "/sys/fs/cgroup/cpu,cpuacct")
    assert cgroup.cpu_mount(MOUNTINFO_V2) == CgroupMount(2, "/", "/sys/fs/cgroup")
    assert cgroup.cpu_mount(MOUNTINFO_V1.replace("rw,cpu,cpuacct", "rw,cpuacct")) is None
    assert cgroup.cpu_mount(r"26 22 0:24 / /a\040b rw - cgroup2 cgroup2 rw") == CgroupMount(2, "/", "/a b")
    assert cgroup.own_path(CGROUP_V1, 1) == "/kubepods/pod1/ctr2"  # not cpuset's "/"
    assert cgroup.own_path(CGROUP_V2, 2) == "/user.slice/app.scope"
    assert cgroup.own_path(CGROUP_V2, 1) is None


def test_our_cgroup_and_its_ancestors_up_to_the_mount_root():
    """Inside a namespace the mount shows the hierarchy from /kubepods/pod1 down: the pod's
    limit is read at the mount point, the container's one level below."""
    v1 = cgroup.cpu_mount(MOUNTINFO_V1)
    assert cgroup.cgroup_dirs(v1, "/kubepods/pod1/ctr2") == [
        "/sys/fs/cgroup/cpu,cpuacct/ctr2", "/sys/fs/cgroup/cpu,cpuacct"]
    assert cgroup.cgroup_dirs(v1, "/other/pod") == []  # not below the mount's root
    v2 = CgroupMount(2, "/", "/sys/fs/cgroup")
    assert cgroup.cgroup_dirs(v2, "/a/b") == ["/sys/fs/cgroup/a/b", "/sys/fs/cgroup/a", "/sys/fs/cgroup"]


@pytest.mark.parametrize(("version", "files", "cores"), [
    (2, {"cpu.max": "60000 100000\n"}, 0.6),
    (2, {"cpu.max": "150000 50000\n"}, 3.0),
    (2, {"cpu.max": "max 100000\n"}, None),
    (2, {}, None),  # the root cgroup has no cpu.max
    (1, {"cpu.cfs_quota_us": "120000\n", "cpu.cfs_period_us": "100000\n"}, 1.2),
    (1, {"cpu.cfs_quota_us": "-1\n", "cpu.cfs_period_us": "100000\n"}, None),
    (1, {"cpu.cfs_quota_us": "garbage"}, None),
])
def test_the_limit_in_cores(version, files, cores):
    assert cgroup.limit_of(version, files) == (pytest.approx(cores) if cores is not None else None)


def test_throttle_counts_in_both_versions():
    v1 = "nr_periods 465\nnr_throttled 393\nthrottled_time 33351426087\nnr_bursts 0\n"
    v2 = "usage_usec 9\nuser_usec 5\nsystem_usec 4\nnr_periods 160\nnr_throttled 101\nthrottled_usec 4482138\n"
    assert cgroup.throttle_counts(v1) == (465, 393)
    assert cgroup.throttle_counts(v2) == (160, 101)
    assert cgroup.throttle_counts("usage_usec 9\n") is None  # a cgroup without the cpu controller
    limits = [CpuLimit(2.0, 0, 0, "/pod"), CpuLimit(0.6, 0, 0, "/pod/ctr")]
    assert cgroup.tightest(limits).where == "/pod/ctr" and cgroup.tightest([]) is None


STAT = "cpu  {busy} 0 0 {idle} 0 0 0 0 0 0\ncpu0 0 0 0 0 0 0 0 0 0 0\ncpu1 0 0 0 0 0 0 0 0 0 0\n"


def _counters(busy: int, idle: int, own_s: float, wall_s: float, limit: CpuLimit | None) -> CpuCounters:
    return CpuCounters.parse(STAT.format(busy=busy, idle=idle), 100.0, own_s, wall_s, limit=limit)


def test_throttling_over_a_measurement_is_the_share_of_its_periods():
    """Between the readings the quota's cgroup ran 20 periods and was throttled in 17 of them:
    85%. The machine's counters see nothing: our process used all the busy time."""
    before = _counters(1000, 5000, 10.0, 100.0, CpuLimit(0.6, 440, 370, "/sys/fs/cgroup/cpu/q"))
    after = _counters(1120, 5080, 11.2, 102.0, CpuLimit(0.6, 460, 387, "/sys/fs/cgroup/cpu/q"))
    load = load_between(before, after)
    assert load.others_cores == pytest.approx(0.0)
    assert (load.cpu_limit, load.throttled_pct) == (0.6, pytest.approx(100 * 17 / 20))
    assert load.disturbed
    assert load.describe() == "the cgroup's CPU limit (0.6 cores) throttled the process in 85% of its periods"
    assert load.to_dict() == {"others_cores": 0.0, "steal_pct": 0.0, "cores": 2, "cpu_limit": 0.6,
                              "throttled_pct": pytest.approx(85.0)}
    assert Load.from_dict(load.to_dict()) == load


def test_no_quota_or_no_throttling_is_no_disturbance():
    assert throttled_pct(None, None) is None
    assert throttled_pct(CpuLimit(1, 5, 1, "/a"), CpuLimit(1, 9, 1, "/b")) is None  # not the same cgroup
    assert throttled_pct(CpuLimit(1, 5, 1, "/a"), CpuLimit(1, 5, 1, "/a")) == 0.0  # no period passed
    quiet = Load(others_cores=0.0, steal_pct=0.0, cores=2, cpu_limit=1.5, throttled_pct=4.0)
    assert not quiet.disturbed and quiet.describe() == "quiet"
    # a load saved before quotas were read keeps its saved form
    old = Load(others_cores=0.2, steal_pct=0.0, cores=2)
    assert old.to_dict() == {"others_cores": 0.2, "steal_pct": 0.0, "cores": 2}


@pytest.mark.parametrize(("limit", "throttled", "warned", "hint"), [
    (0.6, 85.0, True, True),  # 2 threads in 0.6 cores, throttled: both
    (0.6, 0.0, False, True),  # not throttled in the kept window, but 2 threads cannot fit in 0.6
    (2.0, 30.0, True, False),  # throttled, but the threads fit in the limit
    (None, None, False, False),  # no quota
])
def test_the_report_warns_of_throttling_and_hints_at_the_threads(limit, throttled, warned, hint):
    """Synthetic: the kept window's load under a quota, the run's ceilings measured with 2
    threads (the intra-op threads the kernels ran)."""
    from inductor_bench.core.ceilings import Ceilings, Roofline

    r = _result([1.0, 1.0], 0.0)
    r.device = "cpu"
    load = Load(others_cores=0.0, steal_pct=0.0, cores=2, cpu_limit=limit, throttled_pct=throttled)
    r.graphs[0].window_load = [None, load]
    r.roofline = Roofline(measured=Ceilings(device_name="x", gbps=10.0, threads=2))
    text = render_breakdown(r)
    warning = (f"0-backward was measured while the cgroup's CPU limit ({limit:.2g} cores) throttled the "
               f"process in {throttled:.0f}% of its periods: its times may be inflated") if limit else ""
    assert (warning in disturbances(r)) is warned
    assert ("hint: the kernels ran 2 intra-op threads while a cgroup limits the process to 0.6 cores"
            in text) is hint
    assert "other processes kept" not in text  # none did


def test_more_threads_than_cores_on_a_quiet_machine_without_a_limit_gets_no_hint():
    """Synthetic: 4 intra-op threads on 2 cores, nobody else busy, no quota: nothing the load
    readings know of took the cores, so there is nothing to blame."""
    from inductor_bench.core.ceilings import Ceilings, Roofline

    r = _result([1.0, 1.0], 0.0)
    r.device = "cpu"
    r.graphs[0].window_load = [None, Load(others_cores=0.1, steal_pct=0.0, cores=2)]
    r.roofline = Roofline(measured=Ceilings(device_name="x", gbps=10.0, threads=4))
    assert "hint: " not in render_breakdown(r)


QUOTA_CHILD = """
import threading, time
from inductor_bench.core.load import load_between
from inductor_bench.runner import machine
before = machine.cpu_counters()
cpu_end, wall_end = time.process_time() + 0.3, time.monotonic() + 30
def spin():
    while time.process_time() < cpu_end and time.monotonic() < wall_end:
        pass
threads = [threading.Thread(target=spin) for _ in range(2)]
[t.start() for t in threads]
[t.join() for t in threads]
load = load_between(before, machine.cpu_counters())
print(load.cpu_limit, load.throttled_pct)
"""


def _quota_cgroup(cores: float) -> Path | None:
    """A new cgroup below ours with a CPU quota of ``cores``; None where this machine does not
    let the test make one (not root, no writable cpu hierarchy, v2 without the controller)."""
    from inductor_bench.runner.machine import _cgroup_dirs

    version, dirs = _cgroup_dirs()
    if not dirs:
        return None
    d = Path(dirs[0]) / f"inductor-bench-test-{uuid.uuid4().hex[:8]}"
    try:
        d.mkdir()
        if version == 1:
            (d / "cpu.cfs_period_us").write_text("100000")
            (d / "cpu.cfs_quota_us").write_text(str(int(cores * 100000)))
        else:
            (d / "cpu.max").write_text(f"{int(cores * 100000)} 100000")
        return d
    except OSError:
        if d.is_dir():
            d.rmdir()
        return None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="cgroups are Linux's")
def test_a_real_quota_is_read_and_its_throttling_measured():
    """Real: a child process moved into a cgroup limited to 0.1 cores spins two threads until
    they have spent 0.3 s of CPU time (the GIL lets them use one core; 3 s or more of wall time):
    every one of its 100 ms periods is throttled once it has spent 10 ms. The work is counted in
    CPU time, not wall time, so a busy machine makes the spin longer, not less throttled (with
    0.6 s of wall time, a machine that left the child under 30 ms of each period at a 0.3-core
    quota saw no throttling). The child reads the limit and the throttling through the tool's
    own readers."""
    d = _quota_cgroup(0.1)
    if d is None:
        pytest.skip("this machine does not let the test make a cgroup with a CPU quota")
    try:
        move = f"echo $$ > {d}/cgroup.procs && exec {sys.executable} -c \"$0\""
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        out = subprocess.run(["sh", "-c", move, QUOTA_CHILD], capture_output=True, text=True,
                             env=env, timeout=60, check=True).stdout.split()
    finally:
        d.rmdir()
    limit, share = float(out[0]), float(out[1])
    assert limit == pytest.approx(0.1)
    assert share >= 50.0


def test_the_host_names_a_limit_below_its_cores(monkeypatch):
    """The device line (and the ceilings' cache key) of a process under a quota names it."""
    import torch

    from inductor_bench.runner import device, machine

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(torch, "get_num_threads", lambda: 2)
    monkeypatch.setattr(machine, "cpu_limit", lambda: CpuLimit(0.6, 10, 3, "/sys/fs/cgroup/cpu/q"))
    assert device._host_name().endswith(" (2 cores, 2 threads, limited to 0.6 cores)")
    monkeypatch.setattr(machine, "cpu_limit", lambda: CpuLimit(1.0, 10, 3, "/sys/fs/cgroup/cpu/q"))
    assert device._host_name().endswith(" (2 cores, 2 threads, limited to 1 core)")
    monkeypatch.setattr(machine, "cpu_limit", lambda: CpuLimit(4.0, 10, 0, "/sys/fs/cgroup/cpu/q"))
    assert device._host_name().endswith(" (2 cores, 2 threads)")  # a limit above the cores limits nothing
    monkeypatch.setattr(machine, "cpu_limit", lambda: None)
    monkeypatch.setattr(torch, "get_num_threads", lambda: 1)
    assert device._host_name().endswith(" (2 cores, 1 thread)")


def test_a_limit_is_written_to_the_hundredth():
    assert [cgroup.cores_text(x) for x in (0.6, 1.25, 12.5, 16.0, 2 / 3, 1.0, 1.001)] == [
        "0.6 cores", "1.25 cores", "12.5 cores", "16 cores", "0.67 cores", "1 core", "1 core"]
