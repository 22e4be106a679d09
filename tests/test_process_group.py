"""A graph with a compiled collective runs in a profiling worker as it ran in the model: the
model's default process group is noted as it is set up, carried with the settings, and stood
up again, alone, where it had one process (runner/process_group.py); a collective is
communication, held against no memory or compute ceiling (core/classify.py, core/ceilings.py)."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import pytest

from inductor_bench.core.ceilings import COLLECTIVE, Ceilings, kernel_roof
from inductor_bench.core.classify import classify
from inductor_bench.core.devices import HOST_BACKEND

from .test_cli_errors import cli

IN_A_FRESH_PROCESS = textwrap.dedent("""
    import json, os, torch, torch.distributed as dist
    from inductor_bench.core.errors import WorkloadError
    from inductor_bench.runner import process_group, torch_settings

    out = {"before": torch_settings.snapshot().get("process_group")}
    process_group.watch()
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=os.environ["PORT"])
    dist.init_process_group("gloo", rank=0, world_size=1)
    dist.destroy_process_group()
    out["after"] = torch_settings.snapshot().get("process_group")  # kept after the model destroyed it
    try:
        process_group.join(torch, "gloo, world size 2")
    except ValueError as e:
        out["several"] = str(e)
    out["failed"] = torch_settings.apply({"process_group": "gloo, world size 2"})
    module = "torch.ops._c10d_functional.all_reduce_.default(buf1, 'sum', '0')"
    try:
        process_group.check(module, "gloo, world size 2", out["failed"])
    except WorkloadError as e:
        out["refused"] = str(e)
    process_group.check("buf1 = buf0", "gloo, world size 2", out["failed"])  # no collective: runs
    process_group._seen.clear()  # as in a profiling worker, which notes no group of its own
    out["applied"] = torch_settings.apply({"process_group": out["after"]})
    out["name"] = dist.group.WORLD.group_name
    buf = torch.ones(4)
    torch.ops._c10d_functional.all_reduce_.default(buf, "sum", "0")
    torch.ops._c10d_functional.wait_tensor.default(buf)
    out["reduced"] = buf.tolist()
    out["again"] = torch_settings.apply({"process_group": out["after"], "num_threads": torch.get_num_threads()})
    print(json.dumps(out))
""")


def test_the_models_group_is_noted_carried_and_stood_up_alone_where_it_had_one_process():
    pytest.importorskip("torch")
    import random

    env = {"PORT": str(random.randint(20000, 40000))}
    p = subprocess.run([sys.executable, "-c", IN_A_FRESH_PROCESS], capture_output=True, text=True, timeout=300,
                       env={**__import__("os").environ, **env})
    assert p.returncode == 0, p.stderr[-2000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["before"] is None and out["after"] == "gloo, world size 1"
    assert out["several"] == "a process group of 2 processes cannot be joined alone"
    assert out["failed"] == ["process_group"]
    assert out["refused"] == (
        "its collectives ran in the model's process group (gloo, world size 2), whose other processes a "
        "profiling worker does not have: breakdown profiles one process; profile each rank with "
        "torch.profiler and read the traces with `inductor-bench analyze DIR`")
    # stood up alone: the module's group name resolves, and a one-process all-reduce is the identity
    assert (out["applied"], out["name"], out["reduced"], out["again"]) == ([], "0", [1.0] * 4, [])


def test_a_collective_is_communication_on_the_host_and_on_a_device_and_gets_no_percent():
    assert classify("_c10d_functional::all_reduce_") == "communication"
    assert classify("_c10d_functional::wait_tensor") == "communication"
    assert classify("c10d::allreduce_") == "communication"
    assert classify("aten::add") != "communication"
    assert classify("ncclDevKernel_AllReduce_Sum_f32_RING_LL", None,
                    ("_c10d_functional::all_reduce_",)) == "communication"
    ceilings = Ceilings("cpu", gbps=40.0, tflops={"fp32": 0.2})
    k = SimpleNamespace(name="_c10d_functional::all_reduce_ #1", category="communication", bytes=8192.0,
                        flops=None, ms=0.024, compute=None)
    roof = kernel_roof(k, ceilings, HOST_BACKEND.name)
    assert (roof.pct, roof.bound) == (None, COLLECTIVE)
    assert roof.gbps == pytest.approx(8192 / 24e-6 / 1e9)


SCRIPT = """
import os
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as fc

os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="{port}")
dist.init_process_group("gloo", rank=0, world_size=1)


@torch.compile
def step(x, w):
    y = fc.all_reduce((x @ w).relu(), "sum", dist.group.WORLD)
    return y * 2


w = torch.randn(64, 64)
for _ in range(2):
    step(torch.randn(32, 64), w)
dist.destroy_process_group()
"""


@pytest.mark.slow
@pytest.mark.e2e
def test_breakdown_profiles_a_graph_with_a_collective_of_a_one_process_run(tmp_path):
    import random

    (tmp_path / "coll.py").write_text(SCRIPT.format(port=random.randint(20000, 40000)))
    p = cli("breakdown", str(tmp_path / "coll.py"), "--out", str(tmp_path / "run"), "--iterations", "5",
            "--windows", "1", "--processes", "1", "--json", str(tmp_path / "r.json"))
    assert p.returncode == 0, p.stderr[-2000:]
    assert "process_group gloo, world size 1 (set by the model)" in p.stdout
    (g,) = json.loads((tmp_path / "r.json").read_text())["graphs"]
    comm = {k["name"]: k for k in g["kernels"] if k["category"] == "communication"}
    assert any(n.startswith("_c10d_functional::all_reduce_") for n in comm), sorted(comm)
    assert g["categories"]["communication"] == pytest.approx(sum(k["ms"] for k in comm.values()))
    assert "- (a collective: no ceiling for its links)" in p.stdout
