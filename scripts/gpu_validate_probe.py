"""What the machine has (the probe, in the interpreter that runs the tool), the commands'
environment, and the wheels for the packages it lacks."""

from __future__ import annotations

import json
import os
import subprocess
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpu_validate_commands import ROOT

if TYPE_CHECKING:
    from gpu_validate_context import Ctx
# -- the probe -----------------------------------------------------------------------------

PROBE = r"""
import importlib, json, platform, subprocess, sys
out = {"python": platform.python_version(), "executable": sys.executable, "modules": {}, "missing": {}}
try:
    import torch
    out["torch"] = torch.__version__
    out["cuda"] = bool(torch.cuda.is_available())
    out["cuda_version"] = torch.version.cuda
    if out["cuda"]:
        p = torch.cuda.get_device_properties(0)
        out["device_name"] = torch.cuda.get_device_name(0)
        out["capability"] = "%d.%d" % torch.cuda.get_device_capability(0)
        out["memory_gib"] = round(p.total_memory / 2**30, 1)
        out["sm_count"] = p.multi_processor_count
        out["device_count"] = torch.cuda.device_count()
except Exception as e:
    out["torch_error"] = "%s: %s" % (type(e).__name__, e)
try:  # the installed torch's own table of what each mode sets
    from torch._inductor import list_mode_options
    out["mode_table"] = {m: {k: repr(v) for k, v in list_mode_options(m).items()}
                         for m in ("max-autotune", "reduce-overhead")}
except Exception as e:
    out["mode_table_error"] = "%s: %s" % (type(e).__name__, e)
if "--need-cuda" in sys.argv and not out.get("cuda"):  # the refusal needs no more
    print("PROBE " + json.dumps(out))
    sys.exit(0)
for name in ("triton", "msgspec", "isal", "typer", "tabulate", "pytest", "inductor_bench.cli"):
    try:
        m = importlib.import_module(name)
        out["modules"][name] = str(getattr(m, "__version__", "ok"))
    except Exception as e:
        out["missing"][name] = "%s: %s" % (type(e).__name__, e)
if out.get("cuda"):
    try:
        q = "name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw"
        out["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=" + q, "--format=csv,noheader"],
                                           capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as e:
        out["nvidia_smi"] = "not available (%s)" % type(e).__name__
if out.get("cuda"):  # what NVML shows this process, which holds a CUDA context now
    try:
        import os, pynvml
        pynvml.nvmlInit()
        uuid = "GPU-%s" % torch.cuda.get_device_properties(0).uuid
        h = pynvml.nvmlDeviceGetHandleByUUID(uuid.encode())
        pids = sorted(p.pid for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h))
        out["nvml"] = {"version": str(getattr(pynvml, "__version__", "?")), "pids": pids,
                       "own_pid": os.getpid(), "own_listed": os.getpid() in pids}
    except Exception as e:
        out["nvml"] = {"error": "%s: %s" % (type(e).__name__, e)}
print("PROBE " + json.dumps(out))
"""


def probe(python: str, env: dict[str, str], need_cuda: bool = False) -> dict[str, Any]:
    try:
        p = subprocess.run(
            [python, "-c", PROBE, *(["--need-cuda"] if need_cuda else [])],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"torch_error": f"the probe did not finish: {e}"}
    for line in p.stdout.splitlines():
        if line.startswith("PROBE "):
            return json.loads(line[6:])
    tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
    return {"torch_error": f"the probe failed: {tail}"}
def base_env(dry: bool) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    if dry:
        env.setdefault("OMP_NUM_THREADS", "1")  # steadier CPU timings on a shared machine
    return env


def install_wheels(ctx: Ctx) -> str:
    """Unpack the wheels in --wheels into a private directory when a package is missing: a wheel
    is a zip of its installed layout, and unpacking takes well under a second where
    ``pip install --target`` took 29 s on a fresh H200 machine."""
    missing = [m for m in ("msgspec", "isal") if m in ctx.info.get("missing", {})]
    wheels = sorted(Path(ctx.a.wheels).glob("*.whl")) if Path(ctx.a.wheels).is_dir() else []
    if not missing or not wheels:
        return ""
    site = ctx.work / "site"
    rc = 0
    try:
        for w in wheels:
            with zipfile.ZipFile(w) as z:
                z.extractall(site)
    except (OSError, zipfile.BadZipFile) as e:
        rc = 1
        (ctx.logs / "wheels.log").write_text(f"{type(e).__name__}: {e}\n")
    if rc == 0:
        ctx.env["PYTHONPATH"] = os.pathsep.join((str(site), ctx.env["PYTHONPATH"]))
        ctx.info.update({k: v for k, v in probe(ctx.python, ctx.env).items() if k in ("modules", "missing")})
    return f"installed {len(wheels)} wheel(s) from {ctx.a.wheels} for {', '.join(missing)} (exit {rc})"
