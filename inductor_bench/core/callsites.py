"""The calls a compiled module's ``call()`` makes, in order, and the buffers each one writes
(pure text; no torch). With graph partitions (torch 2.11+, CUDA graphs on) these are the calls
of each ``partition_N`` function ``call()`` runs and the eager calls it makes between them.

A generated kernel writes the arguments its signature marks as outputs: C++ pointers that are
not ``const`` (``float* out_ptr0``, ``float* in_out_ptr0``, a template's ``float* Y``), Triton
parameters named ``out_ptr*`` / ``in_out_ptr*``. An extern call writes its result
(``buf3 = extern_kernels.convolution(...)``) or its ``out=`` argument, a copy its destination
(``buf3.copy_(buf4, False)``). The buffer names are
the scheduler's (``bufN``, or a graph input it mutates), which is how a call is joined to
what the compile worker recorded about it (``core/attribution.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import cppwrapper
from .modparse import CPP_SIGNATURE, KernelInfo, ModuleInfo, extern_line, partition_names, run_order_via

_KERNEL = re.compile(r"^\s+(?P<name>\w+)(?:\.run)?\((?P<args>.*)$")
_NAME = re.compile(r"^[A-Za-z_]\w*$")
_WRAPPED = re.compile(r"^(?:reinterpret_tensor|c_void_p|as_strided)\(\s*(?P<inner>[\w.()]+?)\s*[,)]")
_REUSE = re.compile(r"^\s+(?P<new>\w+) = (?:reinterpret_tensor\()?(?P<old>\w+)\b.*#\s*reuse\s*$")
# buffers made by something other than a kernel or an extern call (the inputs, a subgraph
# function's call, an item of what it returned: ``buf5 = buf4[0]``), not a bare allocation a
# kernel then fills
_MADE = re.compile(r"^\s+(?P<lhs>\w+(?:\s*,\s*\w+)*),? = (?!empty\w*\(|torch\.empty\w*\()\S")


@dataclass
class Call:
    """One call in ``call()``."""

    name: str  # the kernel's name, or the extern callee ("extern_kernels.mm")
    extern: bool
    index: int  # extern calls: their position among the module's extern calls; kernels: -1
    written: list[str] | None = field(default_factory=list)  # None: the signature was not understood
    partition: int | None = None  # the graph partition it runs in; None: ``call()`` itself runs it
    via: str | None = None  # in a subgraph function: what its call in ``call()`` returns into
    line: int | None = None  # its line's index in the module's text (a C++ wrapper's: None)
    # buffers it writes under another name: an operation fused into it whose buffer the module
    # hands on (``buf4 = buf0; del buf0  # reuse``) before any call was given it (``fused_writes``)
    fused: list[str] = field(default_factory=list)


def split_args(s: str) -> list[str]:
    """Top-level comma-separated arguments of a call's argument text (up to its closing paren)."""
    out, depth, cur = [], 0, []
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                break
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def buffer_of(arg: str) -> str | None:
    """The buffer an argument names: ``buf3``, ``reinterpret_tensor(buf3, ...)`` -> ``buf3``."""
    arg = arg.strip()
    if _NAME.match(arg):
        return arg
    m = _WRAPPED.match(arg)
    if m:
        return buffer_of(m.group("inner").split(".", 1)[0])
    return None


def output_positions(k: KernelInfo) -> list[int] | None:
    """Which positional parameters of a generated kernel it writes; None when its signature
    is not found in its source."""
    if k.kind == "cpp":
        m = CPP_SIGNATURE.search(k.source)
        if m is None:
            return None
        params = [p.strip() for p in m.group("params").split(",") if p.strip()]
        return [i for i, p in enumerate(params) if "*" in p and not re.search(r"\bconst\b", p)]
    m = re.search(rf"def\s+{re.escape(k.name)}\((?P<params>[^)]*)\)", k.source) or re.search(
        r"@triton\.jit\s*\ndef\s+\w+\((?P<params>[^)]*)\)", k.source
    )
    if m is None:
        return None
    params = [p.split(":")[0].strip() for p in m.group("params").split(",") if p.strip()]
    return [i for i, p in enumerate(params) if p.startswith(("out_ptr", "in_out_ptr"))]


def parse_calls(text: str, module: ModuleInfo) -> list[Call]:
    """Every kernel and extern call the module's ``call()`` makes, in the order it makes them:
    with graph partitions, those of each ``partition_N`` it runs and its own eager calls
    between them (``modparse.run_order``); in a C++ wrapper module, ``inductor_entry_impl``'s."""
    if cppwrapper.is_cpp_wrapper(text):
        return cpp_calls(text, module)
    out: list[Call] = []
    n_extern = 0
    positions = {name: output_positions(k) for name, k in module.kernels.items()}
    lines = text.splitlines()
    reused: dict[str, str] = {}  # a buffer -> the one whose storage it took (``# reuse``)
    given: set[str] = set()  # the buffers some call was given so far
    for i, part, via in run_order_via(lines, partition_names(text)):
        ln = lines[i]
        if ln.lstrip().startswith("#"):
            continue
        if (rm := _REUSE.match(ln)) is not None:
            reused[rm.group("new")] = rm.group("old")
            continue
        if (em := extern_line(ln)) is not None:  # the same calls as ModuleInfo.externs, in order
            args = split_args(em.args)
            written = [b for b in (em.lhs, em.into) if b]
            written += [b for a in args if a.startswith("out=") and (b := buffer_of(a[4:]))]
            out.append(Call(em.callee, True, n_extern, written, part, via, i))
            n_extern += 1
            given.update([*written, *(b for a in args if (b := buffer_of(a.split("=", 1)[-1])))])
            continue
        km = _KERNEL.match(ln)
        if (mm := _MADE.match(ln)) is not None and not (km and km.group("name") in module.kernels):
            given.update(re.findall(r"\w+", mm.group("lhs")))  # another call's: no kernel's fused write
        if km and km.group("name") in module.kernels:
            name = km.group("name")
            pos = positions[name]
            args = [a for a in split_args(km.group("args")) if not re.match(r"^\w+\s*=", a)]
            written = None if pos is None else [b for i in pos if i < len(args) and (b := buffer_of(args[i]))]
            fused = fused_writes(written or [], reused, given)
            out.append(Call(name, False, -1, written, part, via, i, fused))
            given.update(b for a in args if (b := buffer_of(a)))
    return out


def fused_writes(written: list[str], reused: dict[str, str], given: set[str]) -> list[str]:
    """The buffers a kernel writes under the names of ``written``: each buffer one of them took
    the storage of (``buf4 = buf0; del buf0  # reuse``, back along such a chain) that no call
    was given or returned before, the buffer of an operation the scheduler fused into the kernel
    (BERT's embeddings summed into ``buf0`` in the kernel of the LayerNorm that writes ``buf4``);
    a buffer another call was given or returned was that call's."""
    out: list[str] = []
    for b in written:
        while (b := reused.get(b)) is not None and b not in given and b not in out:
            out.append(b)
    return out


def cpp_calls(text: str, module: ModuleInfo) -> list[Call]:
    """``parse_calls`` of a C++ wrapper module (``core/cppwrapper.py``): an op's ``out=``
    overload (``aoti_torch_cpu_mm_out(buf0, ...)``, torch 2.5's ``at::addmm_out(buf0, ...)``)
    writes its first argument, another op the handles it is given to fill (``&buf3_handle``) or
    what it returns (torch 2.5's ``auto buf0 = op_x.call(...)``)."""
    out: list[Call] = []
    positions = {name: output_positions(k) for name, k in module.kernels.items()}
    dispatched = cppwrapper.dispatched_ops(text)
    for ln in cppwrapper.entry_lines(text):
        if ln.lstrip().startswith("//"):
            continue
        if (ext := cppwrapper.extern_call(ln, dispatched)) is not None:
            written = [b for a in ext.writes(split_args(ext.args)) if (b := _cpp_buffer(a))]
            out.append(Call(ext.callee, True, sum(c.extern for c in out), written))
            continue
        km = _KERNEL.match(ln)
        if km and km.group("name") in module.kernels:
            pos = positions[km.group("name")]
            args = split_args(km.group("args"))
            written = None if pos is None else [
                b for i in pos if i < len(args) and (b := _cpp_buffer(args[i]))]
            out.append(Call(km.group("name"), False, -1, written))
    return out


def _cpp_buffer(arg: str) -> str | None:
    """The buffer a C++ wrapper's argument names: ``(float*)(buf5.data_ptr())`` -> ``buf5``."""
    arg = arg.strip()
    if (m := cppwrapper.DATA_PTR.match(arg)) is not None:
        return m.group("buf")
    return arg if _NAME.match(arg) else None
