"""Whether a column's code changed is judged per model file: in a compare of several model files
(the merge gate's base and head), one file's new kernels say nothing of the other file's
columns, so a slower step of an unchanged file measured beside busy cores is not comparable;
in a compare of one model file, its compiled columns still speak for its eager column.
Synthetic sections and compares (no compile)."""

from __future__ import annotations

from inductor_bench.core.compare import CompareResult, ModeResult
from inductor_bench.core.diff_records import KernelDiff, SectionDiff
from inductor_bench.core.disturbed_side import code_changed_by_model, slower_where_disturbed
from inductor_bench.core.stats import compare_samples
from inductor_bench.core.vocab import Outcome


def section(label: str, *statuses: str) -> SectionDiff:
    """A synthetic section whose step reads 50% slower in head (10 samples of 2.0 -> 3.0 ms)."""
    kernels = [KernelDiff(status=s, graph="0-forward", name=f"k{i}", category="cpp_pointwise", aten_ops=[])
               for i, s in enumerate(statuses)]
    return SectionDiff(mode=label, step=compare_samples([2.0] * 10, [3.0] * 10), step_source="model",
                       kernels=kernels)


def compare(columns: list[tuple[str, str]], load: float) -> CompareResult:
    """A synthetic compare of (model, mode) columns timed interleaved, ``load`` cores busy."""
    return CompareResult(
        model="mlp", device="cpu", device_name="Test CPU",
        interleaved={"rounds": 12, "block_steps": [10] * len(columns),
                     "load": {"others_cores": load, "steal_pct": 0.0, "cores": 2}},
        modes=[ModeResult(mode=mode, model=model, compile_s=1.0, paired_ms=[[2.0, 2.02] * 5] * 12)
               for model, mode in columns],
    )


def test_an_unchanged_model_files_slower_column_beside_busy_cores_is_not_comparable():
    columns = [("base", "default"), ("head", "default")]
    base, head = compare(columns, 0.0), compare(columns, 1.8)
    sections = [section("base:default", "same code", "same code"), section("head:default", "same code", "added")]
    changed = code_changed_by_model(sections, head)
    assert changed == [False, True]
    judged = [slower_where_disturbed(s, base, head, c) for s, c in zip(sections, changed, strict=True)]
    assert [s.step.verdict for s in judged] == [Outcome.NOT_COMPARABLE, "significant"]
    assert [(u.section, u.side, u.disturbed) for u in judged[0].unmeasured] == [("base:default", "head", True)]
    assert judged[1].unmeasured == []


def test_one_model_files_compiled_columns_speak_for_its_eager_column():
    columns = [("", "eager"), ("", "default")]
    head = compare(columns, 1.8)
    assert code_changed_by_model([section("eager"), section("default", "added")], head) == [True, True]
    assert code_changed_by_model([section("eager"), section("default", "same code")], head) == [False, False]
