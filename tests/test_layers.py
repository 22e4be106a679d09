"""The package's three layers, as the folders say: ``core/`` is pure Python and never imports
torch, ``render/`` formats results and imports ``core`` only, ``runner/`` is the torch side
and never renders, and only ``commands/`` (with ``cli.py``) print. No module imports another
in a cycle, the device table is the only place that names a device, no module is over 400
lines."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "inductor_bench"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def modules(folder: str | None = None) -> dict[str, Path]:
    """Dotted name -> file, for the package or one of its folders."""
    base = PKG / folder if folder else PKG
    out = {}
    for p in sorted(base.rglob("*.py")):
        parts = p.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = p
    return out


def imports_of(name: str, path: Path) -> set[str]:
    """Every inductor_bench module ``name`` imports, at any depth of its code."""
    pkg = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            found |= {base} | {f"{base}.{a.name}" for a in node.names}
    known = modules()
    return {m for m in found if m in known and m != name}


GRAPH = {name: imports_of(name, path) for name, path in modules().items()}


def layer(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ("core", "render", "runner", "commands") else "top"


# -- torch stays out of core and render --------------------------------------------------------

CHILD = r"""
import importlib, sys

class Blocker:
    # refuses torch and triton, whatever imports them
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("torch", "triton"):
            raise ImportError(f"{name} is blocked in this test")
        return None

sys.meta_path.insert(0, Blocker())
for name in sys.argv[2].split(","):
    importlib.import_module(name)

# and the analysis itself runs: a recorded CPU graph and the synthetic CUDA graph
from inductor_bench.core.breakdown import analyze_graph
from inductor_bench.core.modparse import read_module
from inductor_bench.core.results import GraphResult
from inductor_bench.core.trace import load_trace

fx = sys.argv[1]
for device, gdir, trace in (("cpu", "/cpu_mlp_train/0-forward", "trace.json.gz"),
                            ("cuda", "/synthetic_cuda_transformer", "trace.json")):
    g = analyze_graph(load_trace(fx + gdir + "/" + trace), read_module(fx + gdir + "/module.py"),
                      GraphResult(id="g", role="forward", device=device))
    print(device, g.iterations, len(g.kernels))
leaked = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "triton"))
print("leaked", leaked)
"""


def test_core_and_render_import_and_run_without_torch():
    pure = [m for m in GRAPH if layer(m) in ("core", "render")]
    assert len(pure) >= 25, pure  # every module of both folders, not a hand-picked few
    r = subprocess.run(
        [sys.executable, "-c", CHILD, str(FIXTURES), ",".join(pure)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split("\n") == ["cpu 5 2", "cuda 3 9", "leaked []", ""]


def test_the_blocker_really_blocks():
    """The child above would be meaningless if importing torch still worked in it."""
    code = CHILD.split("for name in")[0] + "import torch\n"
    r = subprocess.run(
        [sys.executable, "-c", code, "", ""],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
        timeout=60,
    )
    assert r.returncode != 0
    assert "torch is blocked in this test" in r.stderr


def test_report_runs_without_torch(tmp_path):
    """`inductor-bench report` re-renders a saved run where torch cannot be imported."""
    code = CHILD.split("for name in")[0] + "from inductor_bench.cli import main; main(sys.argv[3:])\n"
    run = FIXTURES / "results" / "cpu_mlp_slow_train"
    r = subprocess.run(
        [sys.executable, "-c", code, "", "", "report", str(run)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.startswith("inductor-bench breakdown: mlp_slow")


@pytest.mark.parametrize("argv, first_line", [
    (["diff", "results/cpu_mlp_slow_train", "results/cpu_mlp_slow_train"], "NO SIGNIFICANT CHANGE: default:"),
    (["analyze", "cpu_mlp_train/0-forward/trace.json.gz"], "inductor-bench analyze: trace.json.gz"),
])
def test_diff_and_analyze_run_without_torch(argv, first_line):
    """`diff` and `analyze` read saved results and traces where torch cannot be imported
    (importing it would cost a second or more of a command that should feel instant)."""
    code = CHILD.split("for name in")[0] + "from inductor_bench.cli import main; main(sys.argv[3:])\n"
    args = [argv[0], *(str(FIXTURES / a) for a in argv[1:])]
    r = subprocess.run([sys.executable, "-c", code, "", "", *args],
                       capture_output=True, text=True, cwd=ROOT, check=False, timeout=60)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.startswith(first_line)


# -- who may import whom ---------------------------------------------------------------------

ALLOWED = {
    "core": {"core", "top"},
    "render": {"render", "core", "top"},
    "runner": {"runner", "core", "top"},
    "commands": {"commands", "render", "runner", "core", "top"},
}


@pytest.mark.parametrize("name", sorted(m for m in GRAPH if layer(m) in ALLOWED))
def test_layer_imports(name):
    wrong = sorted(
        m for m in GRAPH[name] if layer(m) not in ALLOWED[layer(name)] or m == "inductor_bench.cli"
    )
    assert not wrong, f"{name} ({layer(name)}) imports {wrong}"


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of the import graph, as the list of modules on it; None if there is none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(n: str, path: list[str]) -> list[str] | None:
        state[n] = 1
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return path[path.index(m) :] + [m]
            if m not in state and (c := visit(m, path + [m])):
                return c
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state and (c := visit(n, [n])):
            return c
    return None


def test_no_import_cycle():
    assert find_cycle(GRAPH) is None, " -> ".join(find_cycle(GRAPH))


def test_the_cycle_finder_finds_cycles():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


# -- printing, device names, size --------------------------------------------------------------


def calls_to(path: Path, names: set[str]) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            f = node.func
            called = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if called in names:
                lines.append(node.lineno)
    return lines


# Code that runs inside a worker process, whose output goes to the worker's log file.
# Worker modules whose prints go to the worker's log (its stdout), never to the user.
IN_WORKER = {"inductor_bench.runner.profile", "inductor_bench.runner.capture"}


def test_only_commands_print():
    """Reports are returned as strings; the torch side reports through a Progress it is given."""
    for name, path in modules().items():
        if layer(name) in ("core", "render", "runner") and name not in IN_WORKER:
            assert not calls_to(path, {"print", "echo"}), f"{name} prints"


DEVICE_TABLE = {"inductor_bench.core.devices", "inductor_bench.core.classify"}
# a string that is a device's name but names something else there: the cgroup controller "cpu"
NOT_A_DEVICE = {"inductor_bench.core.cgroup": [(25, "cpu")]}


def device_literals(path: Path) -> list[tuple[int, str]]:
    """String constants that name a device (a docstring may mention one in prose)."""
    from inductor_bench.core.devices import BACKENDS

    names = {b.name for b in BACKENDS}
    tree = ast.parse(path.read_text())
    docstrings = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef))
        and n.body
        and isinstance(n.body[0], ast.Expr)
    }
    return [
        (n.lineno, n.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant)
        and isinstance(n.value, str)
        and id(n) not in docstrings
        and (n.value in names or any(f"'{d}'" in n.value or f"_{d}(" in n.value for d in names))
    ]


@pytest.mark.parametrize("name", sorted(set(GRAPH) - DEVICE_TABLE))
def test_no_device_named_outside_the_device_table(name):
    assert device_literals(modules()[name]) == NOT_A_DEVICE.get(name, [])


def test_the_device_literal_check_finds_them(tmp_path):
    f = tmp_path / "m.py"
    f.write_text('"""On cuda and cpu."""\nif device == "cuda":\n    x = "empty_strided_cpu(" in t\n')
    assert device_literals(f) == [(2, "cuda"), (3, "empty_strided_cpu(")]


@pytest.mark.parametrize("name", sorted(GRAPH))
def test_no_module_over_400_lines(name):
    assert len(modules()[name].read_text().splitlines()) <= 400
