"""Where each nn.Module was built (runner/module_sites.py): the site noted at construction, the
module an ``nn_module_stack`` path names in the compiled frame, and both together while Dynamo
compiles (a backend of the test's, no Inductor: cheap, on every torch)."""

from __future__ import annotations

import inspect
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from inductor_bench.runner import module_sites  # noqa: E402
from inductor_bench.runner.dynamo_graphs import dynamo_nodes  # noqa: E402


@pytest.fixture
def noting(monkeypatch):
    """install() for one test: nn.Module.__init__ and the module's state are put back after it."""
    monkeypatch.setattr(nn.Module, "__init__", nn.Module.__init__)
    monkeypatch.setattr(module_sites, "_installed", False)
    monkeypatch.setattr(module_sites, "_SITES", {})
    module_sites.install()
    return module_sites


def _line() -> int:
    return inspect.currentframe().f_back.f_lineno


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)  # Block's own line: where its Linear was built
        self.fc_line = _line() - 1

    def forward(self, x):
        return torch.relu(self.fc(x))


class Terse(nn.Module):
    def __init__(s):  # noqa: N805
        super().__init__()


def test_each_module_is_noted_at_the_line_that_built_it(noting):
    here = __file__
    seq = nn.Sequential(nn.Linear(4, 8),
                        nn.GELU()); seq_line = _line() - 1  # noqa: E702  (the line above)
    name = "test_each_module_is_noted_at_the_line_that_built_it"
    assert noting.site_of(seq[0]) == [here, seq_line, name, "seq = nn.Sequential(nn.Linear(4, 8),"]
    assert noting.site_of(seq[1])[:2] == [here, seq_line + 1]
    # a model of its own: built where it is called, not at its super().__init__(); its layer at
    # its own line in __init__
    block = Block(); block_line = _line()  # noqa: E702
    assert noting.site_of(block)[:2] == [here, block_line]
    assert noting.site_of(block.fc)[:3] == [here, block.fc_line, "__init__"]
    terse = Terse(); terse_line = _line()  # noqa: E702  (its __init__ names its self "s")
    assert noting.site_of(terse)[:2] == [here, terse_line]
    # torch builds a TransformerEncoderLayer's layers: each is the model's line that built it
    layer = nn.TransformerEncoderLayer(8, 2, 16); layer_line = _line()  # noqa: E702
    assert noting.site_of(layer.linear1)[:2] == noting.site_of(layer.self_attn)[:2] == [here, layer_line]
    # a module not built under the wrapper (a deepcopy's) has no site
    import copy

    assert noting.site_of(copy.deepcopy(seq[0])) is None


def test_a_module_path_names_its_module_in_the_compiled_frame():
    seq = nn.Sequential(nn.Linear(4, 4), nn.Sequential(nn.ReLU()))
    holder = SimpleNamespace(seq=seq)
    f_locals, f_globals = {"fn": seq, "self": holder, "args": (holder,)}, {"model": seq}
    cases = {
        "L['fn'].0": seq[0],  # torch 2.13's Sequential compiled whole
        "L['fn']": seq,
        "L['self'].seq.1.0": seq[1][0],
        "L['self']._modules['seq']._modules['1']": seq[1],  # torch 2.5's spelling
        "getattr(L['self'].seq, '0')": seq[0],
        "L['args'][0].seq.0": seq[0],
        "G['model'].1": seq[1],  # a script's global
        "G['model']._modules['0']": seq[0],
        "self.seq.0": seq[0],
    }
    for raw, module in cases.items():
        assert module_sites.resolve(raw, f_locals, f_globals) is module, raw
    for raw in ("L['self'].seq.7", "L['gone'].x", "G['nothing']", "X['y']"):
        assert module_sites.resolve(raw, f_locals, f_globals) is None, raw


def test_sites_are_found_while_dynamo_compiles(noting):
    """A backend of the test's reads the sites as DynamoGraphs does, in the compile: a
    Sequential compiled whole, and none for a global Sequential a compiled function of the
    model's calls (the function's line is the nodes' line)."""
    found = []

    def backend(gm, example_inputs):
        found.append(noting.built_sites(dynamo_nodes(gm)))
        return gm

    global SCRIPT_MODEL
    SCRIPT_MODEL = nn.Sequential(nn.Linear(4, 4), nn.ReLU()); built = _line()  # noqa: E702

    def f(x):
        return SCRIPT_MODEL(x) * 2

    torch._dynamo.reset()
    torch.compile(f, backend=backend)(torch.randn(2, 4))
    whole = nn.Sequential(nn.Linear(4, 2)); whole_line = _line()  # noqa: E702
    torch.compile(whole, backend=backend)(torch.randn(2, 4))
    torch._dynamo.reset()
    assert found[0] == {}  # f's line, `return SCRIPT_MODEL(x) * 2`, is every node's
    assert noting.site_of(SCRIPT_MODEL[1])[1] == built
    assert {path: site[1] for path, site in found[1].items()} == {"0": whole_line}
    # outside a compile there is no frame to resolve against
    nodes = {"n": {"op": "call_module:0", "module": ["L['fn'].0", "Linear"]}}
    assert noting.built_sites(nodes) == {}


def test_the_wrapper_is_never_compiled_under_compiled_autograd(noting):
    """Compiled autograd builds its graph's module in the compiled function's eager part, where
    Dynamo compiles every frame outside torch: the wrapper must not be one (it was, and broke
    the graph 10 times more, at its own lines). The one break is the model's backward()."""
    from torch._dynamo.utils import counters

    model = nn.Sequential(nn.Linear(8, 8))

    def step(x):
        loss = model(x).sum()
        loss.backward()
        return loss

    torch._dynamo.reset()
    counters.clear()
    with torch._dynamo.config.patch(compiled_autograd=True):
        compiled = torch.compile(step, backend="eager")
        for _ in range(2):
            compiled(torch.randn(2, 8))
    breaks = dict(counters["graph_break"])
    torch._dynamo.reset()
    assert sum(breaks.values()) == 1 and "backward" in next(iter(breaks)), breaks
