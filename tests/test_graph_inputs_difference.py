"""How a graph's inputs differ between two runs (``core/graph_inputs.py``), worded from each
side's saved ``input_shapes``: inputs added or removed, named by their shapes, apart from the
same inputs at other shapes. Synthetic shape lists."""

from __future__ import annotations

from inductor_bench.core.graph_inputs import inputs_difference

MLP = [[512, 256], [512], [64, 256], [512], [512], [512, 512], [512], [64, 512], [64]]


def test_inputs_added_or_removed_are_named_by_their_shapes():
    extra = [*MLP[:7], [512, 512], [512], *MLP[7:]]  # a Linear's weight and bias
    assert inputs_difference(MLP, extra) == "2 inputs more in head (512x512, 512)"
    assert inputs_difference(extra, MLP) == "2 inputs fewer in head (512x512, 512)"
    assert inputs_difference(MLP, [*MLP, []]) == "1 input more in head (scalar)"


def test_as_many_inputs_at_other_shapes_read_as_such():
    batch = [[128 if d == 64 else d for d in s] for s in MLP]
    assert inputs_difference(MLP, batch) == "inputs of other shapes (64x256 -> 128x256, 64x512 -> 128x512, 64 -> 128)"
    assert inputs_difference(MLP, MLP) == ""


def test_inputs_added_and_removed_both_and_a_long_list_is_counted():
    assert inputs_difference([[4], [8, 8]], [[4], [16], [2, 2]]) == "2 -> 3 inputs (head only: 16, 2x2; base only: 8x8)"
    assert inputs_difference([], [[n] for n in range(1, 7)]) == "6 inputs more in head (1, 2, 3, 4 and 2 more)"
