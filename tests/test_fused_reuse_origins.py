"""A kernel that writes the buffer of an operation fused into it under another name (``buf4 =
buf0; del buf0  # reuse``, buf0 given to no call before) takes that operation's lines: BERT's
embeddings (gather, the three lookups and their sum into ``buf0``) fused into the kernel of the
LayerNorm that writes ``buf4`` named line 107 (the LayerNorm) alone; the kernel's own name,
``..._add_embedding_expand_gather_native_layer_norm_slice_0``, says it does all of it. Synthetic
module in the form torch 2.13 writes on CPU (seen on a two-layer BertModel, 2026-12-07)."""

from __future__ import annotations

from inductor_bench.core.attribution import call_origins
from inductor_bench.core.callsites import parse_calls
from inductor_bench.core.modparse import parse_module

KERNELS = """
from torch._inductor.codecache import AsyncCompile
async_compile = AsyncCompile()

cpp_fused_add_embedding_native_layer_norm_0 = async_compile.cpp_pybinding(['float*', 'float*', 'const int64_t*', 'const float*', 'float*'], r'''
extern "C"  void  kernel(float* in_out_ptr0, float* in_out_ptr1, const int64_t* in_ptr0, const float* in_ptr1, float* out_ptr0)
{
}
''')

cpp_fused_relu_1 = async_compile.cpp_pybinding(['const float*', 'float*'], r'''
extern "C"  void  kernel(const float* in_ptr0, float* out_ptr0)
{
}
''')
"""

CALL = """

class Runner:
    def call(self, args):
        arg0_1, arg1_1 = args
        args.clear()
        buf0 = empty_strided_cpu((4, 64, 128), (8192, 128, 1), torch.float32)
        buf1 = empty_strided_cpu((4, 64, 1), (64, 1, 256), torch.float32)
        buf2 = buf1; del buf1  # reuse
        buf3 = empty_strided_cpu((4, 64, 1), (64, 1, 256), torch.float32)
        buf4 = buf0; del buf0  # reuse
        cpp_fused_add_embedding_native_layer_norm_0(buf2, buf4, arg0_1, arg1_1, buf3)
        buf5 = buf4; del buf4  # reuse
        cpp_fused_relu_1(buf3, buf5)
        return (buf5, )
"""

HERE = "modeling_bert.py"
RECORD = {
    "nodes": {
        "embedding": {"op": "aten.embedding.default", "frame": [HERE, 100, "forward", "inputs_embeds = ..."]},
        "add": {"op": "aten.add.Tensor", "frame": [HERE, 105, "forward", "embeddings = embeddings + pos"]},
        "var_mean": {"op": "aten.var_mean.correction", "frame": [HERE, 107, "forward", "self.LayerNorm(e)"]},
        "relu": {"op": "aten.relu.default", "frame": [HERE, 120, "forward", "x = self.act(x)"]},
    },
    "ops": [
        {"written": ["buf0", "op0"], "origins": ["embedding", "add"]},
        {"written": ["buf1", "buf2", "buf3", "buf4", "op1", "op2", "op3", "op4"], "origins": ["var_mean"]},
        {"written": ["buf5", "op5"], "origins": ["relu"]},
    ],
}


def _origins():
    text = KERNELS + CALL
    calls = parse_calls(text, parse_module(text))
    origins, _ = call_origins(calls, RECORD)
    return calls, origins


def test_the_lines_of_an_operation_fused_in_under_another_buffer_name_are_the_kernels():
    calls, origins = _origins()
    assert [c.name for c in calls] == ["cpp_fused_add_embedding_native_layer_norm_0", "cpp_fused_relu_1"]
    assert calls[0].written == ["buf2", "buf4", "buf3"] and calls[0].fused == ["buf1", "buf0"]
    assert [ln.line for ln in origins[0].lines] == [100, 105, 107]


def test_a_buffer_another_call_wrote_stays_that_calls():
    """``buf5 = buf4`` after the LayerNorm's kernel wrote ``buf4``: the relu's kernel writes into
    storage an earlier call filled, and takes none of its lines."""
    calls, origins = _origins()
    assert calls[1].fused == []
    assert [ln.line for ln in origins[1].lines] == [120]
