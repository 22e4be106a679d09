"""The replay planner (``core/replay_plan.py``) on modules Inductor wrote on real GPUs
(``tests/fixtures/gpu_modules/``: A100 and H100, torch 2.6 to 2.9, from tlparse's test data) and on
each condition under which torch's CUDA-graph modes run a graph eagerly, logged or not.

Module facts (inputs, partitions) are read here with ``ast`` and regexes of the test's own.
"""

from __future__ import annotations

import ast
import json
import re

import pytest

from inductor_bench.core.replay_plan import FROM_LOG, FROM_MODULE, FROM_TORCH, overlapping_inputs, plan

from .conftest import FIXTURES

GPU = FIXTURES / "gpu_modules"
PRE_PARTITION = [  # modules written before graph partitions: no Runner, a module-level call()
    "h100_torch2.6_flex_attention_template__cache_hit_miss.log.1.py",
    "h100_torch2.6_dropout_customop__simple.log.1.py",
    "a100_torch2.8_maxautotune_coordesc__autotune_with_compile_id.log.1.py",
    "a100_torch2.9_per_poi_mm_c10d__collectives_parity_rank_0.log.2.py",
    "a100_forward_provenance__inductor_provenance_jit_debug_handle_log.txt.1.py",
]
RUNNER_NO_PARTITIONS = "a100_torch2.9_Runner_partitions__multi_rank_runtime_rank_5.log.2.py"


def call_inputs(text: str) -> list[str]:
    """The names ``call`` unpacks ``args`` into (module-level ``call`` or ``Runner.call``)."""
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef) and node.name == "call":
            first = node.body[0]
            if isinstance(first, ast.Assign) and ast.unparse(first.value) == "args":
                return [t.id for t in first.targets[0].elts]
    return []


@pytest.mark.parametrize("name", PRE_PARTITION)
def test_a_module_without_partitions_is_one_cuda_graph_of_the_whole_call(name):
    text = (GPU / name).read_text()
    assert "class Runner" not in text and re.search(r"^def call\(args\):", text, re.M)
    inputs = call_inputs(text)
    assert inputs
    p = plan(text, True)  # no state recorded: which inputs are static is unknown, all are copied
    assert p.graphed and not p.partitioned and p.partitions == 1
    assert p.copied_inputs == list(range(len(inputs)))
    assert p.steps[0].copied == inputs
    assert p.how_it_ran() == (f"replayed: one CUDA graph of the whole call; {len(inputs)} input(s) "
                              "copied per replay (static inputs unknown: all copied)")
    static = {"static_input_idxs": list(range(1, len(inputs))), "cudagraph_fail_reasons": [],
              "disabled_cudagraphs_reason": None, "device_types": ["cuda"], "partition_maps": None}
    assert plan(text, True, static).copied_inputs == [0]


def test_a_runner_with_no_partition_runs_eagerly_and_torch_logs_nothing():
    """Real A100 module (torch 2.9): ``Runner(partitions=[])``. Under CUDA graphs the mode would
    find no partition to record (``cudagraph_partition_post_compile``) and says nothing."""
    text = (GPU / RUNNER_NO_PARTITIONS).read_text()
    assert len(re.findall(r"^def partition_\d+\(", text, re.M)) == 0 and "Runner(partitions=[])" in text
    p = plan(text, True)
    assert (p.graphed, p.reason, p.reason_from, p.logged) == (False, "no graph partitions", FROM_MODULE, False)
    assert p.how_it_ran() == "eager, kernel by kernel: no graph partitions (not logged by torch; from module)"
    assert plan(text, False).reason == "the mode uses no CUDA graphs"


def fixture_211(name: str) -> tuple[str, dict]:
    folder = FIXTURES / "codegen_2.11.0"
    row = next(r for r in json.loads((folder / "manifest.json").read_text())["modules"] if r["file"] == name)
    return (folder / name).read_text(), row["cudagraph_state"]


def test_torchs_fail_reasons_are_not_logged_with_partitions():
    text, state = fixture_211("mlp_train_cg_0_forward.py")
    assert plan(text, True, state).graphed
    for reason in ("mutated inputs", "complex memory overlap", "non-Tensor inputs"):
        p = plan(text, True, {**state, "cudagraph_fail_reasons": [reason]})
        assert (p.graphed, p.reason, p.reason_from, p.logged) == (False, reason, FROM_TORCH, False)
    p = plan(text, True, {**state, "partition_maps": []})
    assert (p.graphed, p.reason, p.logged) == (False, "no graph partitions", False)
    p = plan(text, True, {**state, "device_types": ["cpu"]})
    assert (p.graphed, p.reason, p.logged) == (False, "no CUDA device in the graph", False)
    p = plan(text, True, {**state, "disabled_cudagraphs_reason": "mutated inputs (1 instances)"})
    assert (p.graphed, p.reason_from, p.logged) == (False, FROM_TORCH, True)


def test_a_logged_skip_wins_and_says_it_was_logged():
    text, state = fixture_211("mlp_train_cg_0_forward.py")
    p = plan(text, True, state, logged_skip="bisector")
    assert (p.graphed, p.reason, p.reason_from, p.logged) == (False, "bisector", FROM_LOG, True)


def test_static_inputs_are_not_copied():
    text, state = fixture_211("mlp_train_cg_0_forward.py")
    inputs = call_inputs(text)
    static = set(state["static_input_idxs"])
    assert len(inputs) == 9 and static == {0, 1, 3, 4, 5, 6, 7, 8}  # index 2 is the batch x
    p = plan(text, True, state)
    assert p.copied_inputs == [2]
    (step,) = p.steps
    assert step.copied == [inputs[2]]
    assert p.how_it_ran() == "replayed: 1 CUDA-graph partition(s), 0 eager step(s); 1 input(s) copied per replay"


# Synthetic edit of a generated module's harness: one input made an overlapping view (sizes
# (4, 8), strides (4, 1): row i starts 4 elements after row i-1, rows 8 long, so rows overlap)
# and one an expanded view (stride 0: torch drops expanded dimensions before its check).
def test_complex_memory_overlap_from_the_harness_strides():
    text, _ = fixture_211("mlp_train_cg_0_forward.py")
    at = text.rindex("\ndef get_args():")  # the module's harness, after the kernels' own ones
    first = re.search(r"^    (\w+) = rand_strided\(\([^)]*\), \([^)]*\)", text[at:], re.M)
    text = text[at:]  # only the harness matters to the rule; the head is put back below
    head = fixture_211("mlp_train_cg_0_forward.py")[0][:at]
    second = re.search(r"^    (\w+) = rand_strided\(\([^)]*\), \([^)]*\)", text[first.end():], re.M)
    edited = (text[: first.start()] + f"    {first.group(1)} = rand_strided((4, 8), (4, 1)"
              + text[first.end(): first.end() + second.start()]
              + f"    {second.group(1)} = rand_strided((4, 8), (0, 1)" + text[first.end() + second.end():])
    edited = head + edited
    assert overlapping_inputs(edited) == [first.group(1)]
    p = plan(edited, True)
    assert (p.graphed, p.reason, p.reason_from, p.logged) == (
        False, f"complex memory overlap ({first.group(1)})", FROM_MODULE, False)
    assert not plan(edited, True, torch_version="2.11.0+cu130").graphed
    # torch 2.13 dropped the test; with torch's state recorded, the state decides
    assert plan(edited, True, torch_version="2.15.0+cu132").graphed
    assert plan(edited, True, fixture_211("mlp_train_cg_0_forward.py")[1]).graphed
