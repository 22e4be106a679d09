"""What convolutions and scaled-dot-product attention compute, and what they return, from the
shapes of their arguments (pure; no torch): ``core/extern_work.py`` counts their extern calls with it.
A convolution does 2 × output elements × weight elements per output channel (transposed: per
input element and input channel), as torch's ``flop_counter`` counts; its backward that much per
gradient asked for. Attention does 4·B·H·L·S·E forward, and the five products of its backward
(under the causal mask, of the scores it keeps);
Inductor's C++ flex attention template as much where one block covers every query and key."""

from __future__ import annotations

import math
import re

from .buffers import CallArgs, Tensor
from .dtypes import dtype_bytes


def dims(t: Tensor | None) -> tuple[int, ...] | None:
    return t.shape if t is not None else None


def conv_output_shape(x: tuple[int, ...], w: tuple[int, ...], stride: list[int],
                      padding: list[int], dilation: list[int]) -> tuple[int, ...]:
    """A convolution's output shape (not transposed): N, C_out, then each spatial size."""
    spatial = []
    for i, size in enumerate(x[2:]):
        s, p, d = (_at(v, i, 1 if v is not padding else 0) for v in (stride, padding, dilation))
        spatial.append((size + 2 * p - d * (w[2 + i] - 1) - 1) // s + 1)
    return (x[0], w[0], *spatial)


def transposed_output_shape(x: tuple[int, ...], w: tuple[int, ...], stride: list[int],
                            padding: list[int], dilation: list[int], output_padding: list[int],
                            groups: int) -> tuple[int, ...]:
    """A transposed convolution's output shape: its weight is (C_in, C_out / groups, *kernel)."""
    spatial = []
    for i, size in enumerate(x[2:]):
        s, p, d = (_at(v, i, 1 if v is not padding else 0) for v in (stride, padding, dilation))
        spatial.append((size - 1) * s - 2 * p + d * (w[2 + i] - 1) + _at(output_padding, i, 0) + 1)
    return (x[0], w[1] * groups, *spatial)


def _at(v: list[int], i: int, default: int) -> int:
    return v[i] if i < len(v) else (v[0] if v else default)


def ints(text: str | None) -> list[int]:
    return [int(x) for x in re.findall(r"-?\d+", text or "")]


# aten.convolution's parameters in order (extern_kernels.convolution takes the same).
_CONV_PARAMS = ("input", "weight", "bias", "stride", "padding", "dilation", "transposed",
                "output_padding", "groups")


def _conv_arg(call: CallArgs, name: str) -> str | None:
    """A convolution's argument by keyword, or by its place where written positionally."""
    if name in call.kwargs:
        return call.kwargs[name]
    i = _CONV_PARAMS.index(name)
    return call.args[i] if i < len(call.args) else None


def _is_true(text: str | None) -> bool:
    return (text or "").strip() in ("True", "1")


def conv_output(call: CallArgs) -> tuple[int, ...] | None:
    x, w = (dims(t) for t in (call.tensors + [None, None])[:2])
    if x is None or w is None or len(x) != len(w):
        return None
    geometry = [ints(_conv_arg(call, n)) for n in ("stride", "padding", "dilation")]
    if not _is_true(_conv_arg(call, "transposed")):
        return conv_output_shape(x, w, *geometry)
    groups = (ints(_conv_arg(call, "groups")) or [1])[0]
    return transposed_output_shape(x, w, *geometry, ints(_conv_arg(call, "output_padding")), groups)


def conv_work(call: CallArgs) -> tuple[float | None, float]:
    """(FLOPs, bytes of the result it returns) of a forward convolution: each output element
    (each input element, transposed) times the weight's elements per output (input) channel,
    twice, as torch's own ``flop_counter`` counts."""
    out, w = conv_output(call), dims(call.tensors[1]) if len(call.tensors) > 1 else None
    if out is None or w is None:
        return None, 0.0
    x = dims(call.tensors[0])
    per = x if _is_true(_conv_arg(call, "transposed")) and x is not None else out
    return 2.0 * math.prod(per) * math.prod(w[1:]), float(math.prod(out) * elem_bytes(call.tensors[0]))


def conv_backward_work(call: CallArgs) -> tuple[float | None, float]:
    """(FLOPs, bytes of the gradients it returns): per gradient asked for (grad_input,
    grad_weight), as much as the forward convolution (its arguments: grad_output, input, weight,
    bias sizes, stride, padding, dilation, transposed, output_padding, groups, output_mask); the
    bias's gradient, where asked for, is written too."""
    ts = call.tensors
    grad, x, w = (dims(t) for t in (ts + [None, None, None])[:3])
    if grad is None or x is None or w is None or len(call.args) < 11:
        return None, 0.0
    mask = _output_mask(call)
    per = x if _is_true(call.args[7]) else grad  # a transposed forward's input is its "output"
    flops = 2.0 * math.prod(per) * math.prod(w[1:]) * (int(mask[0]) + int(mask[1]))
    bias = re.fullmatch(r"\[\s*(\d+)\s*,?\s*\]", str(call.args[3]).strip()) if mask[2] else None
    returned = ((math.prod(x) if mask[0] else 0) + (math.prod(w) if mask[1] else 0)
                + (int(bias.group(1)) if bias else 0))
    return flops, float(returned * elem_bytes(ts[0]))


def conv_backward_unread(call: CallArgs) -> float:
    """The bytes of a ``convolution_backward``'s arguments it does not read: the weight, where
    no grad_input is asked for (the first convolution of a network, whose input needs no
    gradient: the weight's gradient is made from grad_output and the input alone)."""
    ts = call.tensors
    if len(ts) < 3 or ts[2] is None or len(call.args) < 11 or _output_mask(call)[0]:
        return 0.0
    w = dims(ts[2])
    return float(math.prod(w) * elem_bytes(ts[2])) if w is not None else 0.0


def _output_mask(call: CallArgs) -> list[bool]:
    """``convolution_backward``'s output_mask (grad_input, grad_weight, grad_bias)."""
    return [v == "True" for v in re.findall(r"True|False", call.args[10])] + [False, False, False]


def elem_bytes(t: Tensor | None) -> int:
    return (dtype_bytes(t.dtype) or 0) if t is not None else 0


# Where each attention op takes ``is_causal`` (its schema, the same in torch 2.5 to 2.15)
CAUSAL_AT = {
    "_scaled_dot_product_flash_attention_for_cpu": 4,
    "_scaled_dot_product_flash_attention_for_cpu_backward": 7,
    "_scaled_dot_product_flash_attention": 4, "_scaled_dot_product_flash_attention_backward": 11,
    "_scaled_dot_product_efficient_attention": 6, "_scaled_dot_product_efficient_attention_backward": 11,
    "_scaled_dot_product_cudnn_attention": 6, "_scaled_dot_product_cudnn_attention_backward": 14,
    "_scaled_dot_product_fused_attention_overrideable": 5,
    "_scaled_dot_product_fused_attention_overrideable_backward": 13,
    "_flash_attention_forward": 8, "_flash_attention_backward": 11,
}
# The ops whose Q, K and V are (B, L, H, E), not (B, H, L, E)
TOKENS_FIRST = ("_flash_attention_forward", "_flash_attention_backward", "_efficient_attention_forward",
                "_efficient_attention_backward")


def is_causal(op: str, call: CallArgs) -> bool:
    """Whether the call asks for the causal mask (positionally or by name)."""
    at = CAUSAL_AT.get(op)
    if at is None:
        return False
    return _is_true(call.kwargs.get("is_causal") or (call.args[at] if at < len(call.args) else None))


def attention_work(op: str, ts: list[Tensor | None], causal: bool = False) -> tuple[float | None, float]:
    """(FLOPs, bytes of what it returns) of scaled-dot-product attention: forward, the output
    (B, H, L, Ev) at the query's type and the logsumexp (B, H, L) in float32; backward, the
    gradients of Q, K and V. Under the causal mask with as many queries as keys, the L(L+1)/2
    scores of the L² it keeps (the fused kernels skip the blocks above the diagonal)."""
    backward = "backward" in op
    q_at = 1 if backward else 0  # the backward's first argument is the output's gradient
    q, k, v = (dims(t) for t in (ts[q_at:q_at + 3] + [None, None, None])[:3])
    if q is None or k is None or v is None or len(q) != 4 or len(k) != 4 or len(v) != 4:
        return None, 0.0
    if op in TOKENS_FIRST:
        q, k, v = ((t[0], t[2], t[1], t[3]) for t in (q, k, v))
    b, h, lq, e = q
    s, ev = k[2], v[3]
    kept = (lq + 1) / (2 * lq) if causal and lq == s else 1.0
    elem = elem_bytes(ts[q_at])
    if not backward:  # Q·Kᵀ and P·V
        return 2.0 * b * h * lq * s * (e + ev) * kept, float(b * h * lq * (ev * elem + 4))
    returned = (math.prod(q) + math.prod(k) + math.prod(v)) * elem
    return 2.0 * b * h * lq * s * (3 * e + 2 * ev) * kept, float(returned)  # scores again, dP, dV, dQ, dK


# The sizes Inductor's C++ flex attention template writes into its source as literals:
# ``int64_t qSize = static_cast<int64_t>(128L);``, ``int64_t qBlockSize = 1073741824;``
_FLEX_SIZE = re.compile(r"int64_t (\w+) = (?:static_cast<int64_t>\()?(\d+)L?\)?;")
_FLEX_NEEDS = ("batchSize", "num_head", "qSize", "kvSize", "headSize", "headSize_v",
               "qBlockSize", "kvBlockSize")


def flex_template_flops(source: str) -> float | None:
    """Q·Kᵀ and P·V of the C++ flex attention template, 2·B·H·L·S·(E + Ev), where its block
    mask is one block over all queries and keys (flex attention's default mask, or blocks as
    large as the sequences): it computes every score of that block. Where the mask has several
    blocks, the ones it skips are known only at run time: None, as where a size is symbolic."""
    sizes = {name: int(v) for name, v in _FLEX_SIZE.findall(source)}
    if any(name not in sizes for name in _FLEX_NEEDS):
        return None
    if sizes["qBlockSize"] < sizes["qSize"] or sizes["kvBlockSize"] < sizes["kvSize"]:
        return None
    return (2.0 * sizes["batchSize"] * sizes["num_head"] * sizes["qSize"] * sizes["kvSize"]
            * (sizes["headSize"] + sizes["headSize_v"]))


# The block mask's parameters of the C++ flex attention template whose values say how many
# key/value blocks each query block computes: its partial blocks and its full ones
FLEX_BLOCK_COUNTS = ("kv_num_blocks", "full_kv_num_blocks")
_FLEX_MASK_NEEDS = (*_FLEX_NEEDS, "batchSize_kvi", "num_head_kvi")


def flex_masked_flops(source: str, blocks: int) -> float | None:
    """Q·Kᵀ and P·V of the C++ flex attention template under a block mask of several blocks,
    given ``blocks``, the sum of the mask's ``kv_num_blocks`` and ``full_kv_num_blocks`` in
    the call (``runner/flex_blocks.py``): each of those blocks is a tile of qBlockSize queries
    by kvBlockSize keys that the template computes, for every batch and head the mask
    broadcasts over (its batch and head sizes, ``batchSize_kvi`` and ``num_head_kvi``), and
    the blocks the mask skips it does not. None where a size is symbolic, or the sequences are
    not whole blocks (a last, shorter block the sum cannot place)."""
    sizes = {name: int(v) for name, v in _FLEX_SIZE.findall(source)}
    if any(name not in sizes for name in _FLEX_MASK_NEEDS):
        return None
    q_block, kv_block = min(sizes["qBlockSize"], sizes["qSize"]), min(sizes["kvBlockSize"], sizes["kvSize"])
    if sizes["qSize"] % q_block or sizes["kvSize"] % kv_block:
        return None
    spread = (sizes["batchSize"] // sizes["batchSize_kvi"]) * (sizes["num_head"] // sizes["num_head_kvi"])
    return 2.0 * blocks * spread * q_block * kv_block * (sizes["headSize"] + sizes["headSize_v"])


def flex_block_args(params: list[str], args: list[str]) -> list[str] | None:
    """The arguments, as written, that a call of the C++ flex attention template (``params``:
    its parameters' names) passes as its block mask's counts (``FLEX_BLOCK_COUNTS``); None
    where its signature does not name them."""
    if any(p not in params for p in FLEX_BLOCK_COUNTS):
        return None
    at = [params.index(p) for p in FLEX_BLOCK_COUNTS]
    return [args[i] for i in at] if max(at) < len(args) else None
