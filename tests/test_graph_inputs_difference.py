"""How a graph's inputs differ between two runs (``core/graph_inputs.py``), worded from each
side's saved ``input_shapes``: inputs added or removed, named by their shapes, apart from the
same inputs at other shapes. Synthetic shape lists."""

from __future__ import annotations

from inductor_bench.core.graph_inputs import input_dtypes, inputs_difference

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


F32 = ["float32"] * len(MLP)


def test_inputs_of_another_dtype_alone_are_named_with_both_dtypes():
    cast = [*F32[:5], "bfloat16", "bfloat16", *F32[7:]]  # fc2's weight and bias made bfloat16
    assert inputs_difference(MLP, MLP, F32, cast) == ("inputs of other dtypes (512x512 float32 -> bfloat16, "
                                                      "512 float32 -> bfloat16)")
    assert inputs_difference(MLP, MLP, cast, F32) == ("inputs of other dtypes (512x512 bfloat16 -> float32, "
                                                      "512 bfloat16 -> float32)")
    assert inputs_difference(MLP, MLP, F32, F32) == ""


def test_other_shapes_and_dtypes_together_and_dtypes_in_added_inputs_only_where_they_differ():
    batch = [[128 if d == 64 else d for d in s] for s in MLP]
    half = ["bfloat16"] * len(MLP)
    assert inputs_difference(MLP, batch, F32, [*F32[:2], "bfloat16", *F32[3:]]) == (
        "inputs of other shapes and dtypes (64x256 float32 -> 128x256 bfloat16, 64x512 -> 128x512, 64 -> 128)")
    assert inputs_difference(MLP, MLP[:7], F32, half[:7]) == (
        "9 -> 7 inputs (head only: 512x256 bfloat16, 512 bfloat16, 64x256 bfloat16, 512 bfloat16 and 3 more; "
        "base only: 512x256 float32, 512 float32, 64x256 float32, 512 float32 and 5 more)")  # 4 named of 7, of 9
    assert inputs_difference(MLP, [*MLP, [8]], F32, [*F32, "int64"]) == "1 input more in head (8 int64)"
    assert inputs_difference(MLP, [*MLP, [8]], F32, [*F32, "float32"]) == "1 input more in head (8)"


def test_dtypes_are_left_out_where_either_side_did_not_record_every_one():
    half = ["bfloat16"] * len(MLP)
    assert inputs_difference(MLP, MLP, [], half) == ""  # a run saved before dtypes were
    assert inputs_difference(MLP, MLP, F32, [*half[:-1], ""]) == ""


def test_a_modules_input_dtypes_are_read_from_its_harness_in_order():
    text = ("def get_args():\n"
            "    from torch._dynamo.testing import rand_strided\n"
            "    primals_1 = rand_strided((512, 256), (256, 1), device='cpu', dtype=torch.bfloat16)\n"
            "    primals_2 = rand_strided((512, ), (1, ), device='cpu', dtype=torch.float32)\n"
            "    primals_3 = rand_strided((64, ), (1, ), device='cpu', dtype=torch.int64)\n"
            "    return [primals_1, primals_2, primals_3]\n")
    assert input_dtypes(text) == ["bfloat16", "float32", "int64"]
    assert input_dtypes(text.replace(", dtype=torch.float32", "")) == []  # one not said: none
