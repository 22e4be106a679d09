"""Reports are byte-identical to the golden files recorded before the package was rearranged
(``tests/fixtures/golden/``, from the saved results in ``tests/fixtures/results/``; see the
README there). A change that alters any report on purpose re-records the goldens in the same
commit, with ``scripts/record_golden.py``, so the diff shows exactly what changed."""

from __future__ import annotations

import json

import pytest

from inductor_bench.cli import main
from inductor_bench.commands import kernel as kernel_cmd

from .conftest import FIXTURES, ROOT

GOLDEN = FIXTURES / "golden"
RESULTS = FIXTURES / "results"
KERNELS = "tests/fixtures/triton_kernels/synthetic_cuda/"
FORMATS = {"txt": [], "md": ["--format", "markdown"], "json": ["--format", "json"]}


def rel(name: str) -> str:
    return str((RESULTS / name).relative_to(ROOT))


BREAKDOWNS = ["cpu_mlp_train_autotune", "cpu_mlp_slow_train", "synthetic_cuda_breakdown"]
# a whole run directory (tests/fixtures/runs/): its report is also checked through a re-analysis
STALLED = "tests/fixtures/runs/cpu_mlp_train_stalled"
BASE, HEAD, CMP = rel("cpu_mlp_train_autotune"), rel("cpu_mlp_slow_train"), rel("cpu_mlp_compare")
ATTR = rel("attr_net_train")

CASES: list[tuple[str, list[str], int]] = [
    *[
        (f"report-{n}.{ext}", ["report", rel(n), *args], 0)
        for n in BREAKDOWNS
        for ext, args in FORMATS.items()
    ],
    *[(f"report-{n}-summary-top3.txt", ["report", rel(n), "--summary", "--top", "3"], 0) for n in BREAKDOWNS],
    ("diff-mlp-slow.txt", ["diff", BASE, HEAD], 0),
    ("diff-mlp-slow.md", ["diff", BASE, HEAD, "--format", "markdown", "--top", "3"], 0),
    ("diff-mlp-slow.json", ["diff", BASE, HEAD, "--format", "json"], 0),
    ("diff-mlp-slow-gate.txt", ["diff", BASE, HEAD, "--fail-on-regression", "10"], 1),
    ("diff-slow-mlp-min1.txt", ["diff", HEAD, BASE, "--min-change", "1"], 0),
    *[(f"diff-compare-self.{ext}", ["diff", CMP, CMP, *args], 0) for ext, args in FORMATS.items()],
    ("compare-cpu_mlp.txt", ["report", CMP], 0),
    # source attribution (schema 2): extern calls one by one, and the views by line and module
    *[(f"report-attr_net_train.{ext}", ["report", ATTR, *args], 0) for ext, args in FORMATS.items()],
    ("report-attr_net_train-by-op-summary.txt", ["report", ATTR, "--by", "op", "--summary"], 0),
    ("report-attr_net_train-by-line.txt", ["report", ATTR, "--by", "line"], 0),
    ("report-attr_net_train-by-line.md", ["report", ATTR, "--by", "line", "--format", "markdown"], 0),
    ("report-attr_net_train-by-module-depth1.txt", ["report", ATTR, "--by", "module", "--module-depth", "1"], 0),
    ("compare-cpu_mlp.md", ["report", CMP, "--format", "markdown"], 0),
    *[(f"report-cpu_mlp_train_stalled.{ext}", ["report", STALLED, *args], 0) for ext, args in FORMATS.items()],
]

KERNEL_CASES = {
    "kernel-red-max-autotune": (
        "max_autotune",
        [KERNELS + "triton_red_fused_sum_0.py", "--max-autotune", "--all-configs"],
    ),
    "kernel-red-baseline": ("baseline", [KERNELS + "triton_red_fused_sum_0.py"]),
    "kernel-tem-max-autotune": ("baseline", [KERNELS + "triton_tem_fused_mm_0.py", "--max-autotune"]),
    "kernel-red-unknown-gpu": ("unknown_gpu", [KERNELS + "triton_red_fused_sum_0.py", "--max-autotune"]),
}
CASES += [
    (f"{name}.{ext}", ["kernel", *args, *fargs], 0)
    for name, (_, args) in KERNEL_CASES.items()
    for ext, fargs in FORMATS.items()
]


@pytest.fixture
def canned_kernel_worker(monkeypatch):
    """The kernel worker answers with the saved (synthetic) responses; no GPU is needed."""
    responses = json.loads((RESULTS / "synthetic_kernel_responses.json").read_text())
    by_file = {}

    def fake(kf, **kw):
        return responses[by_file[kf.path]]

    monkeypatch.setattr(kernel_cmd, "run_kernel_bench", fake)
    return by_file


def run(capsys, argv: list[str]) -> tuple[int, str]:
    code = 0
    try:
        main(argv)
    except SystemExit as e:
        code = e.code or 0
    return code, capsys.readouterr().out


def in_checkout(out: str) -> str:
    """A report as the goldens hold it: the recorded runs' absolute directories (as a run read
    where it now lies names itself) written relative to the checkout, wherever it lies."""
    return out.replace(f"{ROOT / STALLED}", STALLED)


@pytest.mark.parametrize("golden,argv,code", CASES, ids=[c[0] for c in CASES])
def test_output_matches_golden(capsys, monkeypatch, canned_kernel_worker, golden, argv, code):
    monkeypatch.chdir(ROOT)  # the goldens name the results by paths relative to the checkout
    if argv[0] == "kernel":
        canned_kernel_worker[argv[1]] = KERNEL_CASES[golden.rsplit(".", 1)[0]][0]
    got_code, out = run(capsys, argv)
    assert got_code == code
    assert in_checkout(out) == (GOLDEN / golden).read_text()


def test_every_golden_file_is_checked():
    assert sorted(p.name for p in GOLDEN.iterdir()) == sorted(c[0] for c in CASES)


@pytest.mark.parametrize("ext", sorted(FORMATS))
def test_a_reanalysed_run_renders_its_golden(capsys, tmp_path, ext):
    """The recorded run analysed again from its traces and profiles (a copy: re-analysis rebuilds
    the run's breakdown.json) reports byte for byte what its saved result does."""
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(ROOT / STALLED, copy)
    code, out = run(capsys, ["report", str(copy), "--reanalyze", *FORMATS[ext]])
    assert code == 0
    assert str(copy) in out  # the copy reports where it lies, which is all that differs
    assert out.replace(str(copy), STALLED) == (GOLDEN / f"report-cpu_mlp_train_stalled.{ext}").read_text()
