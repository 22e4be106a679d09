"""``scripts/bench_vs_recipe.py``'s plan, with the two sides stubbed (the real run takes minutes
per round and is in ``docs/breakdown.md``): the machine's first run starts from an empty cache
and is timed apart; every round's cold run starts from a private cache that holds the machine's
ceilings alone, its warm run from the same cache; the table's ratios are the medians computed
here. Synthetic timings."""

from __future__ import annotations

import importlib.util
import stat
import sys
from pathlib import Path

from .conftest import ROOT

SCRIPT = ROOT / "scripts" / "bench_vs_recipe.py"


def _script():
    spec = importlib.util.spec_from_file_location("bench_vs_recipe", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_first_run_is_timed_apart_and_each_cold_run_holds_only_the_machines_ceilings(monkeypatch, capsys):
    mod = _script()
    seen: list[tuple[list[str], int | None]] = []  # each tool run: what its cache held, its root's mode
    tool_s = iter([30.0, 20.0, 10.0, 22.0, 12.0])  # first run; then cold, warm per round
    recipe_s = iter([40.0, 50.0])

    def tool(model, train, xdg):
        root = Path(xdg) / "inductor-bench"
        held = sorted(str(p.relative_to(xdg)) for p in Path(xdg).rglob("*") if p.is_file())
        seen.append((held, stat.S_IMODE(root.stat().st_mode) if root.exists() else None))
        (root / "peaks").mkdir(parents=True, mode=0o700, exist_ok=True)
        (root / "peaks" / "machine.json").write_text("{}")  # what a run caches: its ceilings
        (root / "compile").mkdir(exist_ok=True)
        (root / "compile" / f"graph{len(seen)}").write_text("")  # and its compiled graphs
        return next(tool_s), 2

    monkeypatch.setattr(mod, "run_tool", tool)
    monkeypatch.setattr(mod, "run_recipe", lambda model, train: (next(recipe_s), 2, 2))
    monkeypatch.setattr(sys, "argv", ["bench_vs_recipe.py", "models/mlp.py", "--train", "--repeat", "2", "--markdown"])
    mod.main()
    first, *rounds = seen
    assert first == ([], None)  # the machine's first run: nothing cached
    peaks_only = (["inductor-bench/peaks/machine.json"], 0o700)
    assert rounds[0] == peaks_only and rounds[2] == peaks_only  # each round's cold run
    assert rounds[1][0] == ["inductor-bench/compile/graph2", "inductor-bench/peaks/machine.json"]  # warm
    out = capsys.readouterr()
    # recipe 40 and 50 s (median 45); cold 20/40 and 22/50; warm 10/40 and 12/50
    assert "median of the per-round ratios: cold 0.47x, warm 0.24x" in out.err
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:4]]
            for line in out.out.splitlines() if line.startswith("| ")}
    assert rows["inductor-bench breakdown, the machine's first run (ceilings measured)"] == ["30.0", f"{30 / 45:.2f}"]
    assert rows["inductor-bench breakdown, cold (the machine's ceilings cached)"] == ["21.0", f"{21 / 45:.2f}"]
    assert rows["inductor-bench breakdown, warm (second run)"] == ["11.0", f"{11 / 45:.2f}"]
