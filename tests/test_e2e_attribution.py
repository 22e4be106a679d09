"""Source attribution end to end on the installed torch (CPU, training): the compile worker
records what each module was made from, and every extern call of densenet and the transformer
block names its module path and source line; the views add up to the kernel time. A second run
of attr_net hits Inductor's cache and keeps its lines and modules; a copy of it with its lines
moved, hitting the cache attr_net filled, names its own file and lines."""

from __future__ import annotations

import json
import re

import pytest

from inductor_bench.core.rundir import SOURCES_FILE, SOURCES_LOG, load_any
from inductor_bench.core.views import by_line, by_module, step_units, units
from inductor_bench.render.breakdown import render_breakdown

from .conftest import FIXTURES, run_breakdown_cached, torch_minor

pytestmark = pytest.mark.e2e


def _line(text: str) -> int:
    lines = (FIXTURES / "models" / "attr_net.py").read_text().splitlines()
    return next(i for i, ln in enumerate(lines, 1) if text in ln)


def test_a_known_line_maps_to_its_kernels_forward_and_backward(attr_train):
    result, run_dir, err = attr_train
    assert err is None
    conv2 = _line("y = self.conv2(y)")
    fwd = next(g for g in result.graphs if g.role == "forward")
    bwd = next(g for g in result.graphs if g.role == "backward")
    for g, op in ((fwd, "aten::convolution"), (bwd, "aten::convolution_backward")):
        at = [s for s in g.sites if [ln.line for ln in s.origin.lines] == [conv2]]
        assert [s.kernel for s in at] == [op, op]
        assert sorted(m for s in at for m in s.origin.modules) == ["blocks.0.conv2", "blocks.1.conv2"]
    assert (run_dir / SOURCES_LOG).exists()
    assert all((run_dir / "graphs" / g.id / SOURCES_FILE).exists() for g in result.graphs)
    # saved and re-read: the report's view by line comes from breakdown.json alone
    out = render_breakdown(load_any(run_dir), by="line")
    assert f"attr_net.py:{conv2}" in out and "y = self.conv2(y)" in out


@pytest.mark.slow
@pytest.mark.parametrize("fixture", ["densenet_train", "transformer_train"])
def test_every_extern_call_names_module_and_line(request, fixture):
    result, run_dir, err = request.getfixturevalue(fixture)
    assert err is None
    for g in result.measured():
        split = {s.kernel for s in g.sites}
        externs = [k for k in g.kernels if k.origin is not None and k.name not in split and "cpp_" not in k.name]
        assert not [k.name for k in externs if k.name.startswith(("aten::", "mkldnn::"))], g.attribution
        for s in g.sites:
            # a module path each ("" is the model itself: its own forward calls the op, as
            # the transformer block's attention)
            assert s.origin and s.origin.lines and s.origin.modules, (g.id, s)
        for k in g.kernels:
            assert k.origin is not None, k.name
    us = units(result.measured())
    total = result.totals().kernel_ms
    assert sum(u.ms for u in us) == pytest.approx(total, rel=1e-9)
    for groups in (by_line(us), by_module(us), by_module(us, 2)):
        assert sum(grp.ms for grp in groups) == pytest.approx(total, rel=1e-9)


# -- runs that hit Inductor's cache ------------------------------------------------------------

MODEL = FIXTURES / "models" / "attr_net.py"
SHIFT = 6  # lines added at the top of the copy


@pytest.fixture(scope="session")
def attr_train_again(tmp_path_factory, attr_train):
    """attr_net again, after ``attr_train`` filled the session's cache: a cache hit."""
    return run_breakdown_cached(tmp_path_factory, str(MODEL), train=True)


@pytest.fixture(scope="session")
def attr_moved_train(tmp_path_factory, attr_train):
    """A copy of attr_net in another directory with ``SHIFT`` lines added at the top: the same
    graph, so it hits the cache ``attr_train`` filled, whose lines are attr_net's."""
    copy = tmp_path_factory.mktemp("moved") / "attr_net_moved.py"
    head = "# a copy of attr_net.py, every line moved down\n" + "\n" * (SHIFT - 2) + "# (so)\n"
    copy.write_text(head + MODEL.read_text())
    return (*run_breakdown_cached(tmp_path_factory, str(copy), train=True), copy)


def _fx(run_dir) -> dict:
    return json.loads((run_dir / "breakdown.json").read_text())["extras"]["compile_cache"]


def _rows(result, view) -> list[tuple]:
    """A view's groups as (key, missing, the kernels and call sites in it): no times."""
    return sorted(
        (g.key, g.missing, sorted((u.graph.id, u.kernel.name, u.site.index if u.site else -1) for u in g.units))
        for g in view(units(result.measured()))
    )


def _lines(result) -> set[tuple]:
    return {(ln.file, ln.line, ln.code) for g in by_line(units(result.measured())) for ln in g.lines}


def test_a_second_run_hits_the_cache_and_keeps_lines_and_modules(attr_train, attr_train_again):
    (first, dir1, err1), (second, dir2, err2) = attr_train, attr_train_again
    assert err1 is None and err2 is None
    assert _fx(dir1)["fx_misses"] > 0
    assert _fx(dir2)["fx_hits"] > 0 and _fx(dir2)["fx_misses"] == 0
    for view in (by_line, by_module, lambda us: by_module(us, 1)):
        assert _rows(second, view) == _rows(first, view)
    assert len(by_line(units(second.measured()))) > 5
    assert all(g.attribution is None for g in second.measured())
    conv2 = _line("y = self.conv2(y)")
    assert (str(MODEL), conv2, "y = self.conv2(y)") in _lines(second)
    # the graphs' records: the lowering's nodes and operations, as the first run recorded them
    for g in second.graphs:
        rec1 = json.loads((dir1 / "graphs" / g.id / SOURCES_FILE).read_text())
        rec2 = json.loads((dir2 / "graphs" / g.id / SOURCES_FILE).read_text())
        assert rec2["nodes"] == rec1["nodes"] and rec2["ops"] == rec1["ops"]
        assert rec2["carried"] == {"nodes": len(rec1["nodes"]), "lost": 0}
    out = render_breakdown(load_any(dir2), by="line")
    assert f"attr_net.py:{conv2}" in out and "Inductor's cache" not in out


def _one_kernels(result, view) -> dict[tuple, str]:
    """Each group of one kernel in ``view`` -> that kernel's name, on the step's units as the
    report groups them (a kernel called at several places, by place)."""
    us = step_units(result, kernel_calls=True)
    return {g.key: g.one_kernel.kernel.name for g in view(us) if g.one_kernel is not None}


@pytest.mark.slow
def test_a_group_of_one_kernel_names_it_in_both_runs(attr_train, attr_train_again):
    """The views name each group's one kernel, the same kernel for the same group in the run
    that compiled and in the one that hit the cache, on the group's own row."""
    (first, _, _), (second, dir2, _) = attr_train, attr_train_again
    for by, view, heading in (("line", by_line, "\nTime by source line"), ("module", by_module, "\nTime by module")):
        named = _one_kernels(second, view)
        assert named and named == _one_kernels(first, view)
        view_text = render_breakdown(load_any(dir2), by=by, top=100).split(heading, 1)[1]
        table, note = view_text.split("\n\n")[1:3]
        assert all(f"  {name}  " in table for name in named.values())
        assert "kernel = the group's kernel or extern op, where it holds one" in note


@pytest.mark.slow
def test_a_cache_filled_by_another_file_gives_this_files_lines(attr_train, attr_moved_train):
    first = attr_train[0]
    moved, run_dir, err, copy = attr_moved_train
    assert err is None
    assert _fx(run_dir)["fx_hits"] > 0 and _fx(run_dir)["fx_misses"] == 0
    want = {(str(copy), line + SHIFT, code) for _, line, code in _lines(first)}
    assert _lines(moved) == want
    assert copy.read_text().splitlines()[_line("y = self.conv2(y)") + SHIFT - 1].strip() == "y = self.conv2(y)"
    assert _rows(moved, by_module) == _rows(first, by_module)
    out = render_breakdown(load_any(run_dir), by="line")
    assert f"attr_net_moved.py:{_line('y = self.conv2(y)') + SHIFT}" in out
    assert "attr_net.py:" not in out


def _renamed(text: str) -> str:
    """attr_net's variables ``x``, ``y`` named ``inp``, ``feat``: Dynamo names its nodes after
    them, so none of the cached graph's names is in this one."""
    return re.sub(r"\by\b", "feat", re.sub(r"\bx\b", "inp", text))


@pytest.fixture(scope="session")
def attr_renamed_train(tmp_path_factory, attr_train):
    """A copy of attr_net with its variables renamed and ``SHIFT`` lines added at the top: the
    same graph, so it hits the cache ``attr_train`` filled."""
    copy = tmp_path_factory.mktemp("renamed") / "attr_net_renamed.py"
    head = "# attr_net.py, its variables renamed\n" + "\n" * (SHIFT - 2) + "# (so)\n"
    copy.write_text(head + _renamed(MODEL.read_text()))
    return (*run_breakdown_cached(tmp_path_factory, str(copy), train=True), copy)


@pytest.mark.slow
def test_a_copy_with_its_variables_renamed_pairs_the_cached_nodes_by_position(attr_train, attr_renamed_train):
    first = attr_train[0]
    renamed, run_dir, err, copy = attr_renamed_train
    assert err is None
    assert _fx(run_dir)["fx_hits"] > 0 and _fx(run_dir)["fx_misses"] == 0
    want = {(str(copy), line + SHIFT, _renamed(code)) for _, line, code in _lines(first)}
    assert _lines(renamed) == want
    assert _rows(renamed, by_module) == _rows(first, by_module)
    for g in renamed.graphs:
        rec = json.loads((run_dir / "graphs" / g.id / SOURCES_FILE).read_text())
        assert rec["carried"]["lost"] == 0 and rec["carried"]["by"] == "position"


@pytest.fixture(scope="session")
def densenet_train_again(tmp_path_factory, densenet_train):
    """densenet again, after ``densenet_train`` filled the session's cache: a cache hit."""
    return run_breakdown_cached(tmp_path_factory, "densenet.py", train=True)


@pytest.mark.slow
def test_a_second_densenet_run_has_the_first_runs_lines(densenet_train, densenet_train_again):
    (first, _, err1), (second, dir2, err2) = densenet_train, densenet_train_again
    assert err1 is None and err2 is None
    assert _fx(dir2)["fx_hits"] > 0 and _fx(dir2)["fx_misses"] == 0
    for view in (by_line, by_module):
        assert _rows(second, view) == _rows(first, view)
    assert len(by_line(units(second.measured()))) >= 3  # densenet.py: four lines


@pytest.mark.slow
def test_a_nested_compile_regions_kernels_have_lines_and_modules(tmp_path_factory):
    """``torch.compiler.nested_compile_region`` on each of three layers: Inductor compiles the
    first inline and writes the other two as one subgraph function called twice. Every kernel
    and extern call of both graphs, inside the region too, names its line, and those of the
    forward its layer's module; the region's addmm is a call site per call."""
    torch = pytest.importorskip("torch")
    if not hasattr(torch.compiler, "nested_compile_region"):
        pytest.skip(f"torch {torch.__version__} has no torch.compiler.nested_compile_region")
    model = FIXTURES / "subgraphs" / "nested_region.py"
    result, _, err = run_breakdown_cached(tmp_path_factory, str(model), train=True)
    assert err is None, err
    line = next(i for i, ln in enumerate(model.read_text().splitlines(), 1) if "gelu(self.fc(x))" in ln)
    fwd = next(g for g in result.graphs if g.id == "0-forward")
    addmm = [s for s in fwd.sites if s.kernel == "aten::addmm"]
    assert [s.index for s in addmm] == [0, 1, 2]
    assert [s.origin.modules for s in addmm] == [["layers.0.fc"], ["layers.1.fc"], ["layers.2.fc"]]
    assert all(k.origin is not None and k.origin.modules for k in fwd.kernels)
    # the forward does nothing again (its region subgraph holds a node tagged backward)
    assert not [k.name for k in fwd.kernels if k.origin.recomputed]
    assert not [s.index for s in fwd.sites if s.origin is not None and s.origin.recomputed]
    traced = torch_minor() >= (2, 12)
    for g in result.measured():
        for k in g.kernels:
            lines = [(ln.file, ln.line) for ln in k.origin.lines]
            if not lines and not traced:
                # before torch 2.12 the node a pattern replacement puts in a region's backward
                # (``addmm_default``) takes no stack trace (``pattern_matcher.py`` transfers no
                # meta to it): the report says so rather than guessing a line
                assert (g.id, k.name) == ("0-backward", "aten::addmm"), (g.id, k.name)
                assert all(n.split("/")[-1] == "addmm_default" for n in k.origin.nodes), k.origin.nodes
                assert k.origin.missing.startswith("its FX nodes carry no stack trace"), k.origin.missing
                continue
            assert lines == [(str(model), line)], (g.id, k.name)


# -- a layer class of another file: its one line told apart by the model's calling lines -----

PROJ_NET = FIXTURES / "models" / "proj_net.py"
PROJ_LAYERS = FIXTURES / "models" / "proj_layers.py"


@pytest.fixture(scope="session")
def proj_train(tmp_path_factory):
    """proj_net.py, training: every projection of its two layers runs proj_layers.py's one
    ``torch.addmm`` line, forward and backward."""
    return run_breakdown_cached(tmp_path_factory, str(PROJ_NET), train=True)


@pytest.fixture(scope="session")
def proj_train_again(tmp_path_factory, proj_train):
    """proj_net.py again, after ``proj_train`` filled the session's cache: a cache hit."""
    return run_breakdown_cached(tmp_path_factory, str(PROJ_NET), train=True)


def _at(path, text: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if text in ln)


def test_a_layer_classs_line_is_one_row_per_calling_line(proj_train):
    """The addmm line of ``Proj.forward`` is three rows, ``proj_layers.py:N via proj_net.py:M``
    for the up, down and gate lines; each row holds the kernels and calls all of whose FX nodes
    the graphs' own records (sources.json) put on that line called from that line."""
    result, run_dir, err = proj_train
    assert err is None
    addmm = (str(PROJ_LAYERS), _at(PROJ_LAYERS, "torch.addmm("))
    callers = [_at(PROJ_NET, code) for code in ("self.up(x)", "h = self.down(h)", "self.gate(x)")]
    us = units(result.measured(), kernel_calls=True)
    groups = {g.key: g for g in by_line(us)}
    assert not [k for k in groups if f"{addmm[0]}:{addmm[1]}" in k]  # never one row for all three
    raw = {g.id: json.loads((run_dir / "graphs" / g.id / SOURCES_FILE).read_text())["nodes"] for g in result.graphs}

    def called_from(u) -> set:
        recs = [raw[u.graph.id][n] for n in (u.origin.nodes if u.origin else [])]
        return {(*r["frame"][:2], r["callers"][0][1]) if r.get("callers") else None for r in recs}

    for line in callers:
        grp = groups[(f"{addmm[0]}:{addmm[1]} via {PROJ_NET}:{line}",)]
        mine = [u for u in us if called_from(u) == {(*addmm, line)}]
        assert sorted(map(_unit_id, grp.units)) == sorted(map(_unit_id, mine))
        assert grp.ms == pytest.approx(sum(u.ms for u in mine), rel=1e-12)
        forward = [u for u in mine if u.graph.role == "forward" and u.kernel.name == "aten::addmm"]
        assert len(forward) == 2  # one call per layer
        assert grp.lines[0].via[0].code == next(ln.strip() for ln in PROJ_NET.read_text().splitlines()[line - 1:line])
    out = render_breakdown(load_any(run_dir), by="line")
    assert f"proj_layers.py:{addmm[1]} via proj_net.py:{callers[1]}" in out and "h = self.down(h)" in out


def _unit_id(u) -> tuple:
    return (u.graph.id, u.kernel.name, u.site.index if u.site else None, u.site.occurrence if u.site else None)


def test_a_cache_hit_keeps_each_calling_line(proj_train, proj_train_again):
    (first, _, err1), (second, dir2, err2) = proj_train, proj_train_again
    assert err1 is None and err2 is None
    assert _fx(dir2)["fx_hits"] > 0 and _fx(dir2)["fx_misses"] == 0
    def rows(result) -> list[tuple]:  # without times, which differ from run to run
        return sorted((g.key, sorted(map(_unit_id, g.units))) for g in by_line(units(result.measured(), kernel_calls=True)))

    assert rows(second) == rows(first)
    assert sum(1 for k, _ in rows(second) if len(k) == 1 and " via " in k[0]) == 3
    assert all(json.loads((dir2 / "graphs" / g.id / SOURCES_FILE).read_text())["carried"]["lost"] == 0
               for g in second.graphs)
