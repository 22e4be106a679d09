"""Strides of dynamic shapes that are sums and floor divisions of the size symbols
(``2 + 2*s27``, ``(1 + s27) // 2``, ``s59*((1 + s94) // 2)``), read back from a module compiled
with them (``tests/fixtures/stride_rebuild/record_sums.py``) for a record kept without strides,
and compared as sizes, not as text, with the lowering's own record of them."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from inductor_bench.core.sizepoly import poly, same_shape
from inductor_bench.core.symbols import shapes_at, sizes

from .test_call_strides import changed, saved_before_strides
from .test_call_strides import with_strides as given_strides
from .test_stride_rebuild import FRESH, fresh_rebuilt


def eager_inputs(n: int, m: int, k: int, w: int) -> list[list[str]]:
    """The extern calls' inputs of ``record_sums.py``'s step at x: (n, m), y: (n, k), z: (n, k,
    w), as eager torch lays them out: shape, and the strides where not contiguous."""
    x, z = torch.randn(n, m), torch.randn(n, k, w)
    h = z[:, ::2].relu()
    args = [[x[:, ::2].relu().t(), torch.randn(n, k)],
            [torch.cat([x, F.pad(x, (1, 1))], 1).relu().t(), torch.randn(n, k)],
            [h.transpose(1, 2), h]]

    def text(t: torch.Tensor) -> str:
        shape = "x".join(map(str, t.shape))
        return shape if t.is_contiguous() else f"{shape} (strides {'x'.join(map(str, t.stride()))})"

    return [[text(t) for t in call] for call in args]


@pytest.mark.parametrize("graph", ["sums-inference"])
def test_strides_of_sums_and_floor_divisions_are_read_back(graph):
    recorded, got, notes, text = fresh_rebuilt(graph)
    env = sizes(text)
    assert notes == []
    assert not any("(strides ?)" in s for call in got.values() for s in call)
    # the harness's sizes: x 8x12, y 8x6, z 8x6x4 (record_sums.py's first call)
    assert {s: env[s] for s in ("s77", "s27", "s94", "s59")} == {"s77": 8, "s27": 12, "s94": 6, "s59": 4}
    want = eager_inputs(8, 12, 6, 4)
    assert [shapes_at(got[i], env) for i in sorted(got)] == want
    assert [shapes_at(recorded[i], env) for i in sorted(recorded)] == want
    # as the module writes them: reinterpret_tensor(buf4, (2 + 2*s27, s77), (1, 2 + 2*s27), 0)
    assert got[sorted(got)[1]][0] == "2*s27 + 2xs77 (strides 1x2 + 2*s27)"
    # the same sizes as the record's 1x2*s27 + 2, 1x((s27 + 1)//2), s59*(((s94 + 1)//2))x1xs59
    assert all(same_shape(a, b) for i in got for a, b in zip(got[i], recorded[i], strict=True))


@pytest.mark.parametrize(("a", "b", "same"), [
    ("s0 + 1", "1 + s0", True),
    ("2*s27 + 2", "2 + 2*s27", True),
    ("((s27 + 1)//2)", "(1 + s27) // 2", True),
    ("s59*(((s94 + 1)//2))", "s59*((1 + s94) // 2)", True),
    ("(s0//2)*s1", "s1*(s0 // 2)", True),
    ("(2*s0 + 3) // 2", "s0 + 1", True),  # floor((2*s0 + 3)/2) = s0 + 1 for every s0
    ("(2*s0 + 2) // 4", "(s0 + 1) // 2", True),
    ("floordiv(1 + s27, 2)", "(s27 + 1) // 2", True),
    ("(s0 + 1) // 2", "s0 // 2", False),
    ("s0 + 1", "s0", False),
    ("(s0 // s1)", "(s0 // s1)", True),
    ("s27 + (((-1)*s27) % 8)", "s27 + (PythonMod(-s27, 8))", True),  # the module's and the record's
    ("(-s0) % 8", "(7*s0) % 8", True),
    ("(2*s0) % 8", "2*Mod(s0, 4)", True),
    ("(8*s0 + 3) % 8", "3", True),
    ("s0 % 8", "s0 % 4", False),
    ("max(3, (-2) + s27)", "Max(3, s27 - 2)", True),
    ("Max(s0 - 2, 3)", "max(3, s0 - 2)", True),
    ("min(s0, s1)", "Min(s1, s0)", True),
    ("max(s0, s1)", "min(s0, s1)", False),
    ("max(s0, 3)", "max(s0, 4)", False),
])
def test_sizes_are_compared_for_every_value_of_the_symbols(a, b, same):
    assert poly(a) is not None and poly(b) is not None
    assert (poly(a) == poly(b)) is same
    for s0 in range(1, 9):  # and agree with their values wherever they are called the same
        for s1 in range(1, 4):
            env = {"s0": s0, "s1": s1, "s27": s0, "s59": s1, "s94": s0 + 2, "floordiv": int.__floordiv__,
                   "Mod": int.__mod__, "PythonMod": int.__mod__, "Max": max, "Min": min}
            if same:
                assert eval(a, {}, env) == eval(b, {}, env)


def test_diff_sees_no_change_in_a_stride_written_otherwise(tmp_path, capsys):
    """A record's ``2*s27 + 2`` beside a stride read back from the module, ``2 + 2*s27``: the
    same inputs; a stride of another size still changed."""
    data = saved_before_strides()
    for s in data["graphs"][0]["sites"][1:2]:
        s["shapes"][-1] = "2*s27 + 2x512"
    base = given_strides(data, 0, 1, "1x2*s27 + 2")
    assert changed(tmp_path, capsys, base, given_strides(data, 0, 1, "1x2 + 2*s27")) == {}
    assert changed(tmp_path, capsys, base, given_strides(data, 0, 1, "1x2 + s27")) == {
        ("0-forward", "aten::addmm"): ["aten::addmm #1"]}


def test_a_cpp_wrappers_floor_divisions_are_read_as_its_python_twins():
    """The C++ wrapper's ``c10::div_floor_integer(static_cast<int64_t>(1L + s27),
    static_cast<int64_t>(2L))`` in its ``int_array_N``: the strides read back are those of eager
    torch at the harness's sizes, the same sizes as its compile recorded."""
    recorded, got, notes, text = fresh_rebuilt("cppsums-inference")
    env = sizes(text)
    assert notes == []
    assert [shapes_at(got[i], env) for i in sorted(got)] == eager_inputs(8, 12, 6, 4)
    assert got[sorted(got)[0]][0] == "((s27 + 1)//2)xs77 (strides 1x(1 + s27) // 2)"
    assert all(same_shape(a, b) for i in got for a, b in zip(got[i], recorded[i], strict=True))


@pytest.mark.parametrize("graph", ["sums-inference", "cppsums-inference"])
def test_bytes_and_flops_of_sizes_by_floor_division(graph):
    """Each kernel's and extern call's bytes (float32: elements read and written x 4) and FLOPs
    at x 8x12, y 8x6, z 8x6x4, counted by hand; the C++ wrapper's as its Python twin's."""
    from inductor_bench.core.graph_work import call_work
    from inductor_bench.core.modparse import parse_module

    text = (FRESH / graph / "module.py").read_text()
    work = [(w.bytes, w.flops) for _, w in call_work(parse_module(text), text)]
    half, wide = (12 + 1) // 2, 12 + 12 + 2  # x[:, ::2]'s 6 columns; cat([x, pad(x)])'s 26
    assert work == [
        ((8 * half) * 2 * 4, None),  # relu of x[:, ::2]: read, written
        ((half * 8 + 8 * 6 + half * 6) * 4, 2 * half * 8 * 6),  # mm: (6x8) @ (8x6)
        ((8 * 12 + 8 * 12 + 8 * 14) * 4, None),  # x read once; relu(x) and relu(pad(x)) written
        ((wide * 8 + 8 * 6 + wide * 6) * 4, 2 * wide * 8 * 6),  # mm: (26x8) @ (8x6)
        ((8 * 3 * 4) * 2 * 4, None),  # relu of z[:, ::2]
        ((8 * 4 * 3 + 8 * 3 * 4 + 8 * 4 * 4) * 4, 2 * 8 * 4 * 3 * 4),  # bmm: (8x4x3) @ (8x3x4)
    ]


def test_a_cpp_size_assigned_by_floor_division_has_its_value():
    """``int64_t ps0 = c10::div_floor_integer(...);`` (the fixture's own expression, put in an
    assignment by hand) is evaluated at the harness's sizes: s27 = 12, (12 + 1) // 2."""
    text = (FRESH / "cppsums-inference" / "module.py").read_text()
    line = "    int64_t s59 = arg5_1;\n"
    assert line in text
    ps0 = ("    int64_t ps0 = c10::div_floor_integer(static_cast<int64_t>(1L + s27), "
           "static_cast<int64_t>(2L));\n    int64_t ps1 = std::max(static_cast<int64_t>(ps0), 3L*s59);\n")
    env = sizes(text.replace(line, line + ps0))
    assert (env["ps0"], env["ps1"]) == (6, 12)


@pytest.mark.parametrize("graph", ["maxmod-inference", "cppmaxmod-inference"])
def test_strides_of_a_remainder_and_a_maximum_are_read_back(graph):
    """``record_maxmod.py``'s module (a real compile): ``x`` padded to a multiple of 8 columns,
    ``reinterpret_tensor(buf0, (s27 + (((-1)*s27) % 8), s77), (1, s27 + (((-1)*s27) % 8)), 0)``,
    and its first ``max(n - 2, 3)`` columns, ``max(3, (-2) + s27)``: the strides read back are
    eager torch's at the harness's sizes (x 8x12, y 8x6), the same sizes as its compile
    recorded (``s27 + (PythonMod(-s27, 8))``, ``Max(3, s27 - 2)``); the C++ wrapper's
    ``c10::div_mod((-1L)*s27, 8L)`` and ``std::max(...)`` as their Python twins."""
    recorded, got, notes, text = fresh_rebuilt(graph)
    env = sizes(text)
    assert notes == []
    assert {s: env[s] for s in ("s77", "s27", "s94")} == {"s77": 8, "s27": 12, "s94": 6}
    x, y = torch.randn(8, 12), torch.randn(8, 6)
    eager = [F.pad(x, (0, (-12) % 8)).relu().t(), x[:, :max(12 - 2, 3)].relu().t()]

    def text_of(t: torch.Tensor) -> str:
        shape = "x".join(map(str, t.shape))
        return shape if t.is_contiguous() else f"{shape} (strides {'x'.join(map(str, t.stride()))})"

    want = [[text_of(a), text_of(y)] for a in eager]
    assert want == [["16x8 (strides 1x16)", "8x6"], ["10x8 (strides 1x10)", "8x6"]]
    assert [shapes_at(got[i], env) for i in sorted(got)] == want
    assert [shapes_at(recorded[i], env) for i in sorted(recorded)] == want
    assert [got[i][0] for i in sorted(got)] == [
        "s27 + (PythonMod(-s27, 8))xs77 (strides 1xs27 + -1*s27 % 8)",
        "Max(3, s27 - 2)xs77 (strides 1xmax(3, -2 + s27))"]
    assert all(same_shape(a, b) for i in got for a, b in zip(got[i], recorded[i], strict=True))
