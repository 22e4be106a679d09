"""`inductor-bench kernel`: validation and its messages, run-directory lookup, the worker's
failure paths, and the report as text, markdown and JSON (from a canned worker response)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from inductor_bench.cli import main
from inductor_bench.commands import kernel as kernel_cmd
from inductor_bench.core.categories import label
from inductor_bench.core.errors import DeviceError, UsageError, WorkerError, WorkerTimeout
from inductor_bench.core.kernel_report import build_report
from inductor_bench.core.kernelfile import read_kernel_file
from inductor_bench.core.peaks import Peak
from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat
from inductor_bench.render.doc import TextDoc
from inductor_bench.render.format import duration as fmt_time
from inductor_bench.render.kernel import render_kernel, render_retuning
from inductor_bench.runner import kernelbench
from inductor_bench.runner.rundir import record_digests

from .conftest import FIXTURES, ROOT, skip_unless_kernel_files_load

KERNELS = FIXTURES / "triton_kernels"
RED = KERNELS / "synthetic_cuda" / "triton_red_fused_sum_0.py"
SIN = KERNELS / "synthetic_cuda" / "triton_poi_fused_add_sin_0.py"
TEM = KERNELS / "synthetic_cuda" / "triton_tem_fused_mm_0.py"

RED_CFG = {"XBLOCK": 1, "R0_BLOCK": 2048, "num_warps": 16, "num_stages": 1}
# what a refusal tells of RED from its file alone: its decorator's size hints, Inductor's
# kernel_num_gb (8 x 65536 fp32 read and 8 written: 2,097,184 bytes), its tuning switches (all off)
RED_SAYS = ("the file says: Triton reduction, size hints x=8 r0_=65536, 2.097 MB a launch (Inductor's "
            "estimate), generated with no autotuning switch on")
# What the refusal adds, listed by torch 2.13's heuristics for this 8 x 65536 reduction (the
# sizes test_autotune.py asserts: 1 -> 5) and its mode table (max_autotune, coordinate descent).
RED_WOULD_TUNE = (
    "it would tune over: 1 config (XBLOCK=1, R0_BLOCK=2048, num_warps=16, num_stages=1) as the file "
    "stands; with --max-autotune (max-autotune as torch 2.13 defines it: max_autotune, "
    "coordinate_descent_tuning) 5 configs (XBLOCK=1, R0_BLOCK=2048, num_warps=16, num_stages=1; "
    "XBLOCK=2, R0_BLOCK=64, num_warps=2, num_stages=1; XBLOCK=8, R0_BLOCK=64, num_warps=2, num_stages=1; "
    "XBLOCK=8, R0_BLOCK=512, num_warps=4, num_stages=1; XBLOCK=8, R0_BLOCK=4, num_warps=8, num_stages=1), "
    "then coordinate descent from the best (radius 1)")
TUNED_CFG = {"XBLOCK": 8, "R0_BLOCK": 256, "num_warps": 8, "num_stages": 1}


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = 0
    try:
        main(["kernel", *args])
    except SystemExit as e:
        code = e.code or 0
    out, err = capsys.readouterr()
    return code, out, err


def error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.startswith("inductor-bench: error:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0].removeprefix("inductor-bench: error: ")


def canned_response(max_autotune: bool, all_configs: bool = False, device="NVIDIA H100 PCIe"):
    base = {"mode": "baseline", "space": [RED_CFG], "tried": 1, "tune_s": 0.4, "config": RED_CFG,
            "samples_ms": [0.0200, 0.0202, 0.0198, 0.0200, 0.0201, 0.0199], "regs": 32,
            "spills": 0, "shared": 64}
    runs = [base]
    if max_autotune:
        runs.append({**base, "mode": "max-autotune", "space": [RED_CFG, TUNED_CFG] * 2 + [RED_CFG],
                     "tried": 12, "config": TUNED_CFG, "regs": 28, "shared": 0,
                     "samples_ms": [0.0100, 0.0101, 0.0099, 0.0100, 0.01005, 0.00995]})
    timed = [{"config": c, "samples_ms": [ms] * 6, "regs": 30, "spills": 0, "shared": 0}
             for c, ms in ((RED_CFG, 0.02), (TUNED_CFG, 0.012))] if all_configs else []
    return {"device": {"name": device, "index": 0, "capability": [9, 0]},
            "versions": {"torch": "2.11.0", "triton": "3.5.0"}, "runs": runs,
            "all_configs": timed, "all_configs_mode": runs[-1]["mode"] if all_configs else None,
            "measured_copy_gbps": 1800.0 if device == "Some GPU" else None}


@pytest.fixture
def fake_worker(monkeypatch):
    """Replace the worker with a canned response; record what the command asked for."""
    calls: list[dict] = []

    def fake(kf, **kw):
        calls.append({"kernel": kf.name, **kw})
        return canned_response(kw["max_autotune"] and not kf.is_template, kw["all_configs"],
                               device=fake.device)

    fake.device = "NVIDIA H100 PCIe"
    monkeypatch.setattr(kernel_cmd, "run_kernel_bench", fake)
    fake.calls = calls
    return fake


# --- validation: errors come before any worker starts ----------------------------------------


@pytest.mark.parametrize("path,message", [
    (KERNELS / "nope.py", "no such file"),
    (KERNELS / "README.md", "not a Python file"),
    (ROOT / "inductor_bench" / "cli.py", "not an Inductor Triton kernel file"),
    (KERNELS / "cpu" / "triton_poi_fused_add_sin_0.py",
     ("was generated for the CPU (Inductor's Triton CPU backend); inductor-bench kernel "
     "benchmarks CUDA kernels")),
    (KERNELS / "cpu" / "no_harness" / "triton_poi_fused_cos_mul_0.py",
     "has no benchmark harness (get_args, call missing)"),
])
def test_bad_kernel_files(capsys, fake_worker, path, message):
    code, out, err = run_cli(capsys, str(path))
    assert code == 2
    assert message in error_line(err)
    assert out == ""
    assert fake_worker.calls == []


def test_wrong_kernel_name(capsys, fake_worker):
    code, _, err = run_cli(capsys, str(RED), "triton_red_fused_sum_1")
    assert code == 2
    assert error_line(err).endswith("holds kernel triton_red_fused_sum_0, not triton_red_fused_sum_1")


@pytest.mark.parametrize("args,message", [
    (["--peak-gbps", "-5"], "--peak-gbps must be a finite number above 0, not -5"),
    # nan printed "peak: nan GB/s (--peak-gbps)" and a % peak BW of nan; inf a 0.0%
    (["--peak-gbps", "nan"], "--peak-gbps must be a finite number above 0, not nan"),
    (["--peak-gbps", "inf"], "--peak-gbps must be a finite number above 0, not inf"),
    (["--peaks-file", "/nonexistent/peaks.json"], "--peaks-file /nonexistent/peaks.json: no such file"),
])
def test_bad_peak_options(capsys, fake_worker, args, message):
    code, _, err = run_cli(capsys, str(RED), *args)
    assert code == 2
    assert error_line(err) == message
    assert fake_worker.calls == []


def _torch_2_13_lists_the_spaces() -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    skip_unless_kernel_files_load()
    if not torch.__version__.startswith("2.13."):
        pytest.skip("RED_WOULD_TUNE is torch 2.13's config spaces")


def test_no_cuda_exits_with_one_line_that_lists_what_it_would_tune():
    """Where torch certainly has no CUDA (runner/presence.py), the command says so in one line
    after validating the file: what the file says, and the configs each mode would tune over,
    listed by a worker without a device."""
    _torch_2_13_lists_the_spaces()
    from inductor_bench.runner.presence import absent

    why = absent("cuda")
    assert why is not None
    p = subprocess.run([sys.executable, "-m", "inductor_bench", "kernel", str(RED), "--max-autotune"],
                       capture_output=True, text=True, timeout=300, check=False)
    assert p.returncode == 2
    assert error_line(p.stderr) == (
        f"no CUDA device is available here ({why}); benchmarking triton_red_fused_sum_0 needs an NVIDIA GPU; "
        f"{RED_SAYS}; {RED_WOULD_TUNE}")
    assert p.stdout == ""


def test_no_cuda_says_why_the_spaces_could_not_be_listed(monkeypatch):
    """A listing worker that cannot start costs the refusal its spaces, not its one line."""
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")

    def no_process(*a, **k):
        raise OSError("no process may start")

    monkeypatch.setattr(kernelbench, "absent", lambda device: "no CUDA here")
    monkeypatch.setattr(kernelbench, "run_worker", no_process)
    with pytest.raises(DeviceError) as e:
        kernelbench.run_kernel_bench(read_kernel_file(RED))
    assert str(e.value) == ("no CUDA device is available here (no CUDA here); benchmarking "
                            f"triton_red_fused_sum_0 needs an NVIDIA GPU; {RED_SAYS}; its config spaces "
                            "could not be listed here (OSError: no process may start)")


def test_no_cuda_says_why_a_file_another_torch_wrote_cannot_be_listed(monkeypatch, tmp_path):
    """A file calling at its top level what the installed torch lacks: the refusal ends with the
    import's own one line, as the worker words it on a GPU."""
    _torch_2_13_lists_the_spaces()
    old = tmp_path / RED.name
    text = RED.read_text()
    assert text.count("\nimport triton\n") == 1
    old.write_text(text.replace("\nimport triton\n", "\nimport triton\ntriton_helpers_gone()\n"))
    monkeypatch.setattr(kernelbench, "absent", lambda device: "no CUDA here")
    with pytest.raises(DeviceError) as e:
        kernelbench.run_kernel_bench(read_kernel_file(old))
    import torch
    import triton

    assert str(e.value).endswith(
        f"{RED_SAYS}; its config spaces could not be listed here ({old}: torch {torch.__version__} and "
        f"triton {triton.__version__} cannot import it (NameError: name 'triton_helpers_gone' is not "
        "defined); a kernel file another torch version wrote needs that version and its Triton)")


def test_the_worker_says_the_same_where_only_torch_can_tell(monkeypatch):
    """Where the parent cannot tell (e.g. a CUDA build whose driver it cannot ask), the real
    worker starts, asks torch, and fails the same way."""
    _torch_2_13_lists_the_spaces()
    monkeypatch.setattr(kernelbench, "absent", lambda device: None)
    with pytest.raises(DeviceError) as e:
        kernelbench.run_kernel_bench(read_kernel_file(RED))
    assert str(e.value) == ("no CUDA device is available here (torch.cuda.is_available() is False); "
                            f"benchmarking triton_red_fused_sum_0 needs an NVIDIA GPU; {RED_SAYS}; {RED_WOULD_TUNE}")


def test_worker_timeout_is_one_clear_error(monkeypatch):
    monkeypatch.setattr(kernelbench, "absent", lambda device: None)  # the worker must start
    kf = read_kernel_file(RED)
    with pytest.raises(WorkerTimeout, match=r"kernelbench worker exceeded --timeout 0.01s"):
        kernelbench.run_kernel_bench(kf, timeout=0.01)


def test_worker_crash_becomes_exit_4(capsys, monkeypatch):
    def crash(kf, **kw):
        raise WorkerError("kernelbench worker was killed by SIGSEGV without a result")

    monkeypatch.setattr(kernel_cmd, "run_kernel_bench", crash)
    code, _, err = run_cli(capsys, str(RED))
    assert code == 4
    assert error_line(err) == "kernelbench worker was killed by SIGSEGV without a result"


def test_bad_reps_are_refused_before_the_worker():
    for reps, warmup in ((0, 10), (10_001, 10), (100, -1), (100, 10_001)):
        with pytest.raises(UsageError) as e:
            kernelbench.run_kernel_bench(read_kernel_file(RED), reps=reps, warmup=warmup)
        assert str(e.value) == "--reps must be 1 to 10000 and --warmup 0 to 10000"


# --- a run directory -----------------------------------------------------------------------


@pytest.fixture
def run_dir(tmp_path):
    def stat(name, category, ms, file=None):
        return KernelStat(name=name, category=category, calls=1, ms=ms, file=file)

    graphs = []
    for gid in ("0-forward", "1-forward"):
        rel = f"graphs/{gid}/kernels/triton_poi_fused_add_sin_0.py"
        (tmp_path / rel).parent.mkdir(parents=True)
        shutil.copyfile(SIN, tmp_path / rel)
        kernels = [stat("triton_poi_fused_add_sin_0", "triton_pointwise", 0.5, rel)]
        if gid == "0-forward":
            red = f"graphs/{gid}/kernels/triton_red_fused_sum_0.py"
            shutil.copyfile(RED, tmp_path / red)
            kernels += [stat("triton_red_fused_sum_0", "triton_reduction", 2.0, red),
                        stat("cpp_fused_gelu_0", "cpp_pointwise", 0.3),
                        stat("triton_tem_fused_mm_1", "triton_template", 1.0),
                        stat("sm90_xmma_gemm_bf16", "extern_gemm", 4.0)]
        graphs.append(GraphResult(id=gid, role="forward", frame_id=int(gid[0]), kernels=kernels,
                                  wall_ms=10.0, kernel_ms=sum(k.ms for k in kernels)))
    result = BreakdownResult(model="m", device="cuda", graphs=graphs)
    (tmp_path / "breakdown.json").write_text(result.to_json())
    record_digests(tmp_path, sorted((tmp_path / "graphs").rglob("*.py")))  # as the run records them
    return tmp_path


@pytest.mark.parametrize("name,message", [
    (None, "is a run directory: name the kernel (inductor-bench kernel RUN_DIR KERNEL_NAME)"),
    ("triton_poi_fused_add_sin_0", ("triton_poi_fused_add_sin_0 is in 2 graphs of {run}; name "
     "one: 0-forward/triton_poi_fused_add_sin_0, 1-forward/triton_poi_fused_add_sin_0")),
    ("triton_poi_fused_add_sin", ("no kernel triton_poi_fused_add_sin in {run}; close matches: "
     "triton_poi_fused_add_sin_0")),
    ("1-forward/triton_red_fused_sum_0", ("no kernel triton_red_fused_sum_0 in graph 1-forward "
     "in {run}; it is in: 0-forward/triton_red_fused_sum_0")),
    ("2-forward/triton_red_fused_sum_0", "no graph 2-forward in {run}; its graphs: 0-forward, 1-forward"),
    # a graph and no kernel: said so, where it read "no kernel  in graph 0-forward" and listed
    # the Triton kernels of every graph
    ("0-forward/", ("'0-forward/' names no kernel: write GRAPH_ID/KERNEL_NAME or KERNEL_NAME (its "
     "graphs: 0-forward, 1-forward)")),
    (" ", "' ' names no kernel: write GRAPH_ID/KERNEL_NAME or KERNEL_NAME"),
    ("1-forward/triton_red_fused_sum", ("no kernel triton_red_fused_sum in graph 1-forward in {run}; "
     "close matches: triton_red_fused_sum_0")),
    # its category as the report's tables name it (C++ pointwise), not the JSON's cpp_pointwise
    ("cpp_fused_gelu_0", ("0-forward/cpp_fused_gelu_0 has no Triton kernel file (category "
     "C++ pointwise): C++ kernels are re-tuned by recompiling: inductor-bench breakdown "
     "MODEL.py --autotune-top N")),
    ("sm90_xmma_gemm_bf16", ("0-forward/sm90_xmma_gemm_bf16 has no Triton kernel file (category "
     "GEMM (extern)): only Triton kernels can be benchmarked")),
    # a Triton kernel whose file the run did not save is not called something else
    ("triton_tem_fused_mm_1", ("0-forward/triton_tem_fused_mm_1 has no Triton kernel file (category "
     "Triton template): the run saved no file for this Triton kernel")),
    # an extern call as the report's tables number it: its op
    ("sm90_xmma_gemm_bf16 #1", ("0-forward/sm90_xmma_gemm_bf16 has no Triton kernel file (category "
     "GEMM (extern)): only Triton kernels can be benchmarked")),
    # part of a name (difflib alone finds nothing as close as 0.6 to it)
    ("fused_sum", "no kernel fused_sum in {run}; close matches: triton_red_fused_sum_0"),
    ("xmma", "no kernel xmma in {run}; close matches: sm90_xmma_gemm_bf16"),
    # nothing close: the kernels it can benchmark, those with a Triton file
    ("zzzz", "no kernel zzzz in {run}; its Triton kernels: triton_poi_fused_add_sin_0, triton_red_fused_sum_0"),
])
def test_run_dir_lookup_errors(capsys, fake_worker, run_dir, name, message):
    code, _, err = run_cli(capsys, str(run_dir), *([name] if name else []))
    assert code == 2
    assert message.format(run=run_dir) in error_line(err)
    assert fake_worker.calls == []


@pytest.mark.parametrize("name", ["triton_red_fused_sum_0", "0-forward/triton_poi_fused_add_sin_0",
                                  "1-forward/triton_poi_fused_add_sin_0"])
def test_run_dir_lookup(capsys, fake_worker, run_dir, name):
    code, out, _ = run_cli(capsys, str(run_dir), name)
    assert code == 0
    assert fake_worker.calls[0]["kernel"] == name.rsplit("/")[-1]
    assert out.startswith(f"{name.rsplit('/')[-1]}: Triton ")


def test_a_result_naming_another_kernels_file_is_refused(capsys, fake_worker, run_dir):
    """A breakdown.json (which no digest covers) naming for triton_red_fused_sum_0 the file of
    triton_poi_fused_add_sin_0, a file the run did write: refused, where the sin kernel was
    timed and reported under the name asked for."""
    result = json.loads((run_dir / "breakdown.json").read_text())
    (red,) = [k for k in result["graphs"][0]["kernels"] if k["name"] == "triton_red_fused_sum_0"]
    red["file"] = "graphs/0-forward/kernels/triton_poi_fused_add_sin_0.py"
    (run_dir / "breakdown.json").write_text(json.dumps(result))
    code, _, err = run_cli(capsys, str(run_dir), "triton_red_fused_sum_0")
    assert code == 2 and fake_worker.calls == []
    assert error_line(err) == (f"{run_dir}/graphs/0-forward/kernels/triton_poi_fused_add_sin_0.py "
                               "holds kernel triton_poi_fused_add_sin_0, not triton_red_fused_sum_0")


def test_a_cpu_run_says_it_has_no_triton_kernel_to_benchmark(capsys, fake_worker, tmp_path):
    """The README's `kernel runs/<run>/ triton_poi_fused_add_0` asked of a CPU run, whose kernels
    are C++ in the compiled module: said so, with the command that re-tunes them, not a bare
    `no kernel ... in runs`."""
    kernels = [KernelStat(name="cpp_fused_gelu_1", category="cpp_pointwise", calls=1, ms=0.007),
               KernelStat(name="aten::addmm", category="extern_gemm", calls=3, ms=0.3)]
    result = BreakdownResult(model="mlp", device="cpu", graphs=[
        GraphResult(id="0-inference", role="inference", kernels=kernels, wall_ms=0.36, kernel_ms=0.307)])
    (tmp_path / "breakdown.json").write_text(result.to_json())
    code, _, err = run_cli(capsys, str(tmp_path), "triton_poi_fused_add_0")
    assert code == 2 and fake_worker.calls == []
    assert error_line(err) == (
        f"no kernel triton_poi_fused_add_0 in {tmp_path}; it has no Triton kernel file to benchmark "
        "(a CPU run's C++ kernels are re-tuned by recompiling: inductor-bench breakdown MODEL.py "
        "--autotune-top N)")


def test_directory_without_result(capsys, tmp_path):
    code, _, err = run_cli(capsys, str(tmp_path))
    assert code == 2
    assert error_line(err) == f"{tmp_path}: no breakdown.json in this directory"


def test_a_compare_run_directory_names_its_modes_runs(capsys, run_dir, tmp_path):
    """compare's directory holds a breakdown run per mode: the refusal names them."""
    cmp = tmp_path / "cmp"
    cmp.mkdir()
    (cmp / "compare.json").write_text("{}")
    (cmp / "default").mkdir()
    shutil.copyfile(run_dir / "breakdown.json", cmp / "default" / "breakdown.json")
    code, _, err = run_cli(capsys, str(cmp), "triton_red_fused_sum_0")
    assert code == 2
    assert error_line(err) == (f"{cmp}: no breakdown.json in this directory; the runs in it, newest first: "
                               f"{cmp / 'default'}")


# --- the report ------------------------------------------------------------------------------


def test_text_report_side_by_side(capsys, fake_worker):
    code, out, _ = run_cli(capsys, str(RED), "--max-autotune", "--reps", "6", "--warmup", "2")
    assert code == 0
    assert fake_worker.calls[0] | {} == {
        "kernel": "triton_red_fused_sum_0", "max_autotune": True, "all_configs": False,
        "reps": 6, "warmup": 2, "timeout": kernelbench.DEFAULT_TIMEOUT_S, "peak_override": None,
        "peak_table": None, "echo": False}
    lines = out.splitlines()
    assert lines[0] == "triton_red_fused_sum_0: Triton reduction (@reduction)"
    assert lines[2] == "device: NVIDIA H100 PCIe (sm 9.0) · torch 2.11.0 · triton 3.5.0"
    assert lines[3] == ("size hints: x=8, r0_=65536 · moves 2.097 MB per launch (Inductor's "
                        "estimate) · no FLOP count")
    assert lines[4] == "peak: 2000 GB/s (datasheet: H100 PCIe)"  # no FLOP count: no FLOP peak
    base = next(ln for ln in lines if ln.startswith("baseline "))
    tuned = next(ln for ln in lines if ln.startswith("max-autotune "))
    # 0.002097184 GB in 20 µs = 104.9 GB/s = 5.2 % of 2000 GB/s; 10 µs: 209.7 GB/s, 10.5 %
    assert base.split() == ["baseline", "1", "1", "20.00", "µs", "±0.7%", "104.9", "5.2", "32", "0",
                            "64"]
    assert tuned.split() == ["max-autotune", "5", "12", "10.00", "µs", "±0.7%", "209.7", "10.5", "28",
                             "0", "0"]
    assert "baseline config: XBLOCK=1, R0_BLOCK=2048, num_warps=16, num_stages=1" in lines
    assert "max-autotune config: XBLOCK=8, R0_BLOCK=256, num_warps=8, num_stages=1" in lines
    verdict = next(ln for ln in lines if ln.startswith("max-autotune is faster: "))
    m = re.fullmatch(r"max-autotune is faster: 2\.00x \[(\d\.\d\d)x-(\d\.\d\d)x\] \(50\.0% less time\)", verdict)
    assert m and float(m[1]) < 2.0 < float(m[2]), verdict  # the interval it rests on


def test_json_report(capsys, fake_worker, tmp_path):
    dest = tmp_path / "k.json"
    code, out, _ = run_cli(capsys, str(RED), "--max-autotune", "--all-configs", "--json", str(dest))
    assert code == 0 and out.startswith("triton_red_fused_sum_0")
    d = json.loads(dest.read_text())
    assert d["schema"] == "inductor-bench/kernel" and d["schema_version"] == 1
    assert [r["mode"] for r in d["runs"]] == ["baseline", "max-autotune"]
    assert [r["tried"] for r in d["runs"]] == [1, 12]
    assert d["comparison"]["verdict"] == "faster"
    assert d["comparison"]["speedup"] == pytest.approx(2.0)
    assert d["peak"] == {"gbps": 2000.0, "tflops": 756.0, "source": "datasheet: H100 PCIe",
                         "tflops_fp32": 51.0, "tflops_tf32": 378.0, "tflops_fp8": 1513.0}
    assert d["peak_flops"] == {"compute_type": "fp32", "tflops": 51.0}
    assert [t["label"] for t in d["all_configs"]] == [
        "XBLOCK=1, R0_BLOCK=2048, num_warps=16, num_stages=1",
        "XBLOCK=8, R0_BLOCK=256, num_warps=8, num_stages=1"]
    code, _, err = run_cli(capsys, str(RED), "--json", str(dest))
    assert code == 2 and "already exists" in error_line(err)


def test_json_to_stdout_only(capsys, fake_worker):
    code, out, _ = run_cli(capsys, str(RED), "--json", "-")
    assert code == 0
    assert json.loads(out)["runs"][0]["ms"] == pytest.approx(0.02)
    code, out2, _ = run_cli(capsys, str(RED), "--format", "json")
    assert json.loads(out2) == json.loads(out)


def test_peak_options_reach_the_report(capsys, fake_worker, tmp_path):
    peaks = tmp_path / "peaks.json"
    peaks.write_text(json.dumps({"NVIDIA H100 PCIe": {"gbps": 1000}}))
    _, out, _ = run_cli(capsys, str(RED), "--peaks-file", str(peaks), "--json", "-")
    assert json.loads(out)["peak"]["source"] == f"--peaks-file {peaks} (NVIDIA H100 PCIe)"
    assert json.loads(out)["runs"][0]["pct_of_peak_bw"] == pytest.approx(10.48592)
    assert fake_worker.calls[0]["peak_table"] == {"NVIDIA H100 PCIe": {
        "gbps": 1000.0, "tflops": None, "tflops_fp32": None, "tflops_tf32": None,
        "tflops_fp8": None}}
    _, out, _ = run_cli(capsys, str(RED), "--peak-gbps", "500", "--json", "-")
    assert json.loads(out)["peak"] == {"gbps": 500.0, "tflops": 756.0, "source": "--peak-gbps",
                                       "tflops_fp32": 51.0, "tflops_tf32": 378.0,
                                       "tflops_fp8": 1513.0}
    fake_worker.device = "Some GPU"
    _, out, _ = run_cli(capsys, str(RED), "--json", "-")
    assert json.loads(out)["peak"] == {"gbps": 1800.0, "tflops": None,
                                       "source": "measured: device-to-device copy",
                                       "tflops_fp32": None, "tflops_tf32": None,
                                       "tflops_fp8": None}


def test_template_runs_baseline_only_and_says_why(capsys, fake_worker):
    code, out, _ = run_cli(capsys, str(TEM), "--max-autotune", "--format", "markdown")
    assert code == 0
    assert fake_worker.calls[0]["max_autotune"] is True
    assert "| max-autotune" not in out
    # the heuristic a code span: '@template' in a pull request would mention a user
    assert out.startswith(f"`triton_tem_fused_mm_0`: {label('triton_template')} (`@template`)  \n")
    assert "note: triton_tem_fused_mm_0 is a template kernel" in out
    row = next(ln for ln in out.splitlines() if ln.startswith("| baseline"))
    # 33,554,432 FLOP in 20 µs = 1.68 TFLOP/s: 3.3 % of the H100 PCIe's 51 TFLOP/s fp32 peak
    # (fp32 inputs, ALLOW_TF32 off), not 0.2 % of its 756 TFLOP/s bf16 one
    assert [c.strip() for c in row.strip("|").split("|")] == [
        "baseline", "1", "1", "20.00 µs", "±0.7%", "39.3", "2.0", "1.68", "3.3", "32", "0", "64"]
    assert ("peak: 2000 GB/s, 51.0 TFLOP/s dense fp32 (the kernel's compute type) (datasheet: "
            "H100 PCIe)") in out.splitlines()  # the block's last line: no hard break


def test_the_footer_counts_every_repetition_and_says_how_many_were_left_out():
    """100 repetitions of which 7 stalled (a busy machine, synthetic samples): the footer says
    100, not the 93 kept, and how many each mode lost; the time is the mean of the 93."""
    kf = read_kernel_file(RED)
    resp = canned_response(True)
    steady_base = [0.0200 + 0.0001 * (i % 5 - 2) for i in range(93)]  # mean 0.02 exactly
    resp["runs"][0]["samples_ms"] = steady_base[:50] + [0.0600] * 7 + steady_base[50:]
    resp["runs"][1]["samples_ms"] = [0.0100 + 0.0001 * (i % 3 - 1) for i in range(100)]
    text = render_kernel(build_report(kf, resp, Peak(2000.0, None, "x"), max_autotune=True))
    assert ("times: mean of the steady ones of 100 repetitions, each after an L2 flush (CUDA "
            "events); left out as disturbed, far slower than the median (docs/statistics.md): "
            "7 of baseline's, none of max-autotune's;") in text
    base_row = next(ln.split() for ln in text.splitlines() if ln.startswith("baseline "))
    assert base_row[3:5] == [fmt_time(sum(steady_base) / 93).split()[0], "µs"]
    assert base_row[3] == "20.00"
    one_mode = render_kernel(build_report(kf, canned_response(False), Peak(2000.0, None, "x")))
    assert "of 6 repetitions, each after an L2 flush (CUDA events); left out as disturbed, " \
           "far slower than the median (docs/statistics.md): none;" in one_mode


def test_all_configs_table():
    kf = read_kernel_file(RED)
    r = build_report(kf, canned_response(True, True), Peak(2000.0, None, "x"), max_autotune=True)
    text = render_kernel(r)
    assert ("Every candidate config (max-autotune space, 2 compiled, each timed alone, no "
            "coordinate descent)") in text
    rows = [ln.split() for ln in text.splitlines() if ln.startswith("XBLOCK=")]
    assert rows[0][-4:] == ["0", "fastest,", "autotuner's", "pick"]  # 12 µs, and the pick
    assert rows[0][4:6] == ["12.00", "µs"]
    assert rows[1][4:6] == ["20.00", "µs"] and rows[1][-1] == "0"


def test_every_config_says_how_many_of_its_repetitions_were_left_out():
    """--all-configs: a config 4 of whose 100 repetitions stalled (synthetic) is named with the
    count under the table, as each mode's are in the footer; its time the mean of the 96."""
    kf = read_kernel_file(RED)
    resp = canned_response(True, True)
    steady = [0.0120 + 0.0001 * (i % 3 - 1) for i in range(96)]
    resp["all_configs"][1]["samples_ms"] = steady[:40] + [0.05] * 4 + steady[40:]
    text = render_kernel(build_report(kf, resp, Peak(2000.0, None, "x"), max_autotune=True))
    assert ("repetitions left out as disturbed, far slower than the median (docs/statistics.md): "
            "4 of XBLOCK=8, R0_BLOCK=256, num_warps=8, num_stages=1's 100") in text.splitlines()
    row = next(ln.split() for ln in text.splitlines() if ln.startswith("XBLOCK=8"))
    assert row[4:6] == [fmt_time(sum(steady) / 96).split()[0], "µs"] == ["12.00", "µs"]
    assert "repetitions left out" not in render_kernel(
        build_report(kf, canned_response(True, True), Peak(2000.0, None, "x"), max_autotune=True))


def test_the_kernel_pages_tooltips_read_each_time_as_its_table_does():
    """The HTML page's charts are in µs where every time is under 1 ms: a bar's tooltip says
    ``12.00 µs`` as the config table does, not ``0.012 ms``."""
    import html
    import re

    kf = read_kernel_file(RED)
    r = build_report(kf, canned_response(True, True), Peak(2000.0, None, "x"), max_autotune=True)
    page = render_kernel(r, "html")
    tips = [html.unescape(t) for t in re.findall(r'<rect class="b [^>]*><title>(.*?)</title>', page, re.S)]
    configs = {t.splitlines()[0]: t.splitlines()[1] for t in tips if t.startswith("XBLOCK=")}
    rows = re.findall(r"<tr><td[^>]*>(.*?)</td><td[^>]*>(.*?)</td>", page.replace("<wbr>", ""))
    cells = {html.unescape(c): html.unescape(t) for c, t in rows if c.startswith("XBLOCK=")}
    assert len(configs) == 2 and cells.keys() == configs.keys()
    for config, line in configs.items():
        assert line.endswith(f": {cells[config]}"), (config, line, cells[config])
    assert sorted(cells.values()) == ["12.00 µs", "20.00 µs"]


def test_fmt_time():
    """4 significant digits in each row, trailing zeros kept: 20 µs above 10.03 µs reads 20.00."""
    assert [fmt_time(x) for x in (0.0012345, 0.02, 0.01003, 1.5, 123.456, 0.99996)] == [
        "1.234 µs", "20.00 µs", "10.03 µs", "1.500 ms", "123.5 ms", "1.000 ms"]


# --- breakdown --autotune-top on CUDA: selection and rendering --------------------------------


def test_top_triton_kernels_skip_templates_extern_and_fileless(run_dir):
    from inductor_bench.core.rundir import load_breakdown as load_result

    result = load_result(run_dir)
    result.graphs[0].kernels.append(KernelStat(name="triton_tem_fused_mm_0",
                                               category="triton_template", calls=1, ms=9.0,
                                               file="x.py"))
    picked = [(g, k.name) for g, k in kernelbench.top_triton_kernels(result, 5)]
    assert picked == [("0-forward", "triton_red_fused_sum_0"),
                      ("0-forward", "triton_poi_fused_add_sin_0"),
                      ("1-forward", "triton_poi_fused_add_sin_0")]


def _kept_the_baselines_config() -> dict:
    """Max-autotune ending on the baseline's own config (RED_CFG), its 100 repetitions 5% under
    the baseline's: synthetic, as a clock that rose between the two timings would make them."""
    resp = canned_response(True)
    resp["runs"][0]["samples_ms"] = [0.0200 + 0.0001 * (i % 3 - 1) for i in range(100)]
    resp["runs"][1].update(config=RED_CFG, samples_ms=[0.0190 + 0.0001 * (i % 3 - 1) for i in range(100)])
    return resp


def test_max_autotune_keeping_the_baselines_config_is_same_code():
    """One kernel, one config, timed twice: `same code`, never `faster` by the 1.05x of the two
    timings (whose intervals, each about +-0.000019 ms, are apart by 0.001 ms)."""
    r = build_report(read_kernel_file(RED), _kept_the_baselines_config(), Peak(2000.0, None, "x"),
                     max_autotune=True)
    assert r.comparison().faster  # what the times alone say
    assert r.to_dict()["comparison"]["verdict"] == "same code"
    assert ("same code: max-autotune chose the baseline's config, so one kernel was timed twice "
            "(1.05x [1.05x-1.05x] is the two timings', not max-autotune's)") in render_kernel(r)


def test_autotune_top_gains_nothing_from_the_baselines_config_timed_twice(run_dir, monkeypatch):
    from inductor_bench.core.rundir import load_breakdown as load_result

    monkeypatch.setattr(kernelbench, "run_kernel_bench", lambda kf, **kw: _kept_the_baselines_config())
    red = kernelbench.autotune_top_kernels(load_result(run_dir), run_dir, 1, timeout=5)[0]
    assert (red.kernel, red.verdict, red.bound) == ("triton_red_fused_sum_0", "same code", 0.0)


def test_autotune_top_kernels_rows(run_dir, monkeypatch):
    from inductor_bench.core.rundir import load_breakdown as load_result

    def fake(kf, **kw):
        if kf.name == "triton_poi_fused_add_sin_0":
            raise WorkerTimeout("kernelbench worker exceeded --timeout 5s and was killed")
        return canned_response(True)

    monkeypatch.setattr(kernelbench, "run_kernel_bench", fake)
    rows = kernelbench.autotune_top_kernels(load_result(run_dir), run_dir, 2, timeout=5)
    assert [(r.kernel, r.error) for r in rows] == [
        ("triton_red_fused_sum_0", None),
        ("triton_poi_fused_add_sin_0", "kernelbench worker exceeded --timeout 5s and was killed")]
    red = rows[0]
    assert red.share == pytest.approx(2.0 / 20.0)  # 2 ms of a 20 ms step (two graphs)
    assert (red.base_ms, red.tuned_ms) == (pytest.approx(0.02), pytest.approx(0.01))
    assert (red.configs_base, red.configs_tuned, red.verdict) == (1, 12, "faster")
    assert red.bound == pytest.approx(0.05)  # 10 % share x (1 - 1/2)
    assert rows[1].bound == 0.0 and rows[1].speedup is None
    doc = TextDoc()
    render_retuning(doc, rows, 0.05)
    text = doc.render()
    assert "Together at most 5.00% of model time" in text
    row = next(ln for ln in text.splitlines() if ln.startswith("0-forward") and "sum_0" in ln).split()
    assert row[3:6] == ["0.0200", "0.0100", "2.00x"]  # 0.02 ms -> 0.01 ms: ms, as every table of a breakdown
    assert "baseline ms" in text and "µs" not in text
    assert "failed: kernelbench worker exceeded --timeout 5s and was killed" in text


def _foreach_without_harness(path: Path) -> None:
    """The synthetic CUDA foreach file as torch 2.11 writes it under our capture: with
    benchmark_kernel on but benchmark_combo_kernel off, no get_args/call harness."""
    src = (KERNELS / "synthetic_cuda" / "triton_for_fused_0.py").read_text()
    path.write_text(src[: src.index("\ndef get_args():")] + "\n")


FOREACH_REASON = (
    "triton_for_fused_0 is a foreach/combo kernel without a benchmark harness (get_args, call "
    "missing): Inductor writes one only with torch._inductor.config.benchmark_combo_kernel = "
    "True, which no environment variable sets (breakdown's capture does not)")


def test_autotune_top_skips_foreach_kernels_it_cannot_launch(run_dir, monkeypatch):
    """The most expensive kernel is a foreach kernel without a harness: skipped with the
    reason, and the next two re-tunable kernels still make the requested two."""
    from inductor_bench.core.rundir import load_breakdown as load_result

    rel = "graphs/0-forward/kernels/triton_for_fused_0.py"
    _foreach_without_harness(run_dir / rel)
    record_digests(run_dir, [run_dir / rel])
    result = load_result(run_dir)
    result.graphs[0].kernels.append(KernelStat(name="triton_for_fused_0", calls=1, ms=3.0,
                                               category="triton_foreach", file=rel))
    timed = []

    def fake(kf, **kw):
        timed.append(kf.name)
        return canned_response(True)

    monkeypatch.setattr(kernelbench, "run_kernel_bench", fake)
    rows = kernelbench.autotune_top_kernels(result, run_dir, 2, timeout=5)
    assert [(r.graph, r.kernel, r.skipped) for r in rows] == [
        ("0-forward", "triton_for_fused_0", FOREACH_REASON),
        ("0-forward", "triton_red_fused_sum_0", None),
        ("0-forward", "triton_poi_fused_add_sin_0", None)]
    assert timed == ["triton_red_fused_sum_0", "triton_poi_fused_add_sin_0"]
    skipped = rows[0]
    assert (skipped.base_ms, skipped.speedup, skipped.bound) == (None, None, 0.0)
    assert skipped.to_dict()["skipped"] == FOREACH_REASON
    assert "skipped" not in rows[1].to_dict()
    doc = TextDoc()
    render_retuning(doc, rows, sum(r.bound for r in rows))
    text = doc.render()
    assert "Max-autotune re-benchmark of the 2 most expensive Triton kernels" in text
    assert f"skipped: {FOREACH_REASON}" in text


def test_kernel_on_a_foreach_file_without_harness_is_one_line(capsys, fake_worker, tmp_path):
    f = tmp_path / "triton_for_fused_0.py"
    _foreach_without_harness(f)
    code, out, err = run_cli(capsys, str(f))
    assert code == 2
    # the synthetic file's kernel_num_gb is 2.4e-05: 24,000 bytes
    assert error_line(err) == (f"{f}: {FOREACH_REASON}; the file says: Triton foreach / combo, 24 kB a "
                               "launch (Inductor's estimate), generated with no autotuning switch on")
    assert out == "" and fake_worker.calls == []


def test_autotune_top_stops_without_cuda(run_dir, monkeypatch):
    from inductor_bench.core.errors import DeviceError
    from inductor_bench.core.rundir import load_breakdown as load_result

    def no_gpu(kf, **kw):
        raise DeviceError("no CUDA device is available here")

    monkeypatch.setattr(kernelbench, "run_kernel_bench", no_gpu)
    with pytest.raises(DeviceError):
        kernelbench.autotune_top_kernels(load_result(run_dir), run_dir, 2)


def test_paths_in_messages_are_the_users(capsys, fake_worker):
    rel = Path("tests/fixtures/triton_kernels/cpu/triton_poi_fused_add_sin_0.py")
    code, _, err = run_cli(capsys, str(rel))
    assert code == 2
    assert error_line(err).startswith(f"{rel}: triton_poi_fused_add_sin_0 was generated for")


@pytest.mark.parametrize("name,said", [
    ("cpp_fused_gelu_1", "0-inference/cpp_fused_gelu_1 has no Triton kernel file (category C++ pointwise): "),
    ("triton_poi_fused_add_0", "no kernel triton_poi_fused_add_0 in {run}; it has no Triton kernel file to "
     "benchmark (a CPU run's ")])
def test_a_max_autotune_cpu_run_is_not_sent_to_recompile_in_max_autotune(capsys, fake_worker, tmp_path, name,
                                                                        said):
    """A C++ kernel of a run compiled in mode max-autotune (the run --autotune-top writes in
    RUN/max-autotune) was sent to `breakdown MODEL.py --autotune-top N`, which refuses such a
    run (`this run already uses it`): said that it is the re-tuned one, and where to set it beside
    the default's."""
    kernels = [KernelStat(name="cpp_fused_gelu_1", category="cpp_pointwise", calls=1, ms=0.007)]
    result = BreakdownResult(model="mlp", device="cpu", mode="max-autotune", graphs=[
        GraphResult(id="0-inference", role="inference", kernels=kernels, wall_ms=0.36, kernel_ms=0.007)])
    (tmp_path / "breakdown.json").write_text(result.to_json())
    code, _, err = run_cli(capsys, str(tmp_path), name)
    assert code == 2 and fake_worker.calls == []
    tail = ")" if name.startswith("triton") else ""
    assert error_line(err) == said.format(run=tmp_path) + (
        "C++ kernels are re-tuned by recompiling, and this run is compiled in mode max-autotune already: "
        f"inductor-bench breakdown MODEL.py --autotune-top N in mode default sets these beside the default's{tail}")
