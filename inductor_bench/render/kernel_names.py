"""Kernel names as tables show them. A C++ kernel's demangled name (up to 800 characters for
``at::native`` kernels on an H200) is compacted to the width of its column, keeping what tells
one kernel from another; Inductor's kernel names fit and are shown whole. A column of them is
told apart in ``distinct_labels.py``."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

# The widest a kernel's name is shown in a table (JSON keeps the whole name): room for Inductor's
# longest fused names (``triton_per_fused_add_native_layer_norm_native_layer_norm_backward_view_8``).
KERNEL_CHARS = 80

CUT = "…"
# The fewest characters of a lone template argument a label shows (cut in its middle).
MIN_ARGUMENT = 8

# A namespace or class qualifier (``at::native::``, ``(anonymous namespace)::``), not the owner
# of a lambda or an operator (``threshold_kernel_impl::{lambda}``, ``sum_functor::operator()``).
_QUALIFIERS = re.compile(r"(?<![\w:])(?:(?:[A-Za-z_]\w*|\(anonymous namespace\))::)+(?![{~]|operator\b)")
# What a parenthesis after a name opens other than a function's parameters.
_NOT_FUNCTIONS = ("{lambda", "operator", "decltype", "sizeof", "alignof", "noexcept")
# A step of a chain of lambdas: ``::operator()() const`` between ``::{lambda()#1}``s.
_OPERATOR = re.compile(r"::operator\(\)(?:\(\))?(?: const)?")
_LAMBDA = "::{lambda"
# A part of a plain name and the underscores after it: ``tilesize32x32x8_`` of a cuBLAS kernel's.
NAME_PART = re.compile(r"[^_]+_*|_+")


def shorten(name: str, width: int) -> str:
    """Cut the middle out of a long name, keeping both ends: ``cpp_fused_a_b_…_sum_2``."""
    if len(name) <= width:
        return name
    keep = width - len(CUT)
    return name[: keep - keep // 3] + CUT + name[len(name) - keep // 3 :]


def _parts_cut(name: str, width: int) -> str:
    """``shorten`` with each side of the cut moved to the nearest ``_`` within a third of it, so
    that no part of a plain name is cut through: ``cutlass_80_simt_sgemm_…_8x5_nt_align1``."""
    if len(name) <= width:
        return name
    keep = width - len(CUT)
    head = name[: keep - keep // 3]
    if (i := head.rfind("_")) >= len(head) * 2 // 3:
        head = head[: i + 1]
    tail = name[len(name) - (keep - len(head)) :]
    if not name.endswith("_" + tail) and 0 <= (j := tail.find("_")) <= len(tail) // 3:
        tail = tail[j:]
    return head + CUT + tail


def kernel_label(name: str, width: int = KERNEL_CHARS) -> str:
    """A kernel's name as a table shows it: whole where it fits. A longer one loses, one step at a
    time until it fits, its ``void `` and parameter list; its namespaces (``at::native::``); the
    parameter lists of the functions named in its template arguments; the chains of lambdas in
    them (``launch_clamp_scalar::{lambda}``); then template arguments, the innermost first and of
    those the last first, the outermost level kept:
    ``vectorized_elementwise_kernel<4, BinaryFunctor<…>, array<…> >``.
    A function a lambda is defined in names the kernel's operation: where it does not fit with
    all of its outer template arguments, the label is the outer name and the arguments from it
    on (``vectorized_elementwise_kernel<…threshold_kernel_impl<float>::{lambda}…``); any other
    name loses its middle."""
    if len(name) <= width:
        return name
    *before, s = _steps(name)
    if fits := [x for x in before if len(x) <= width]:
        return fits[0]
    key = _lambda_owner(s)
    collapsed = _collapses(s, 2, key[1] if key else None)
    t = next((x for x in collapsed if len(x) <= width), collapsed[-1])
    if len(t) <= width:
        return t
    if key:
        return around(s, key[0], width)
    lt = t.find("<")
    if lt > 0 and _one_plain_argument(t[lt:]) and width - lt - 2 >= MIN_ARGUMENT:
        return t[: lt + 1] + _parts_cut(t[lt + 1 : -1], width - lt - 2) + ">"
    if 0 < lt <= width // 2:
        return _leading_arguments(s, width, cuts_inside=True)
    if 0 < lt < width:  # a long name before its arguments, which fits: never cut inside them
        return _leading_arguments(s, width, cuts_inside=False)
    return shorten(t, width)


def _one_plain_argument(arguments: str) -> bool:
    """Whether ``<…>`` holds one plain name: ``<cutlass_80_simt_sgemm_64x64_8x5_nt_align1>``."""
    return arguments.endswith(">") and not any(c in arguments[1:-1] for c in "<>,( ")


def widest_label(name: str, fits: Callable[[str], bool]) -> str:
    """``kernel_label`` of ``name`` at the most characters that ``fits`` (a chart's label column
    in pixels): its head and its first whole template arguments, as a table's column cuts it,
    not a cut through their middle."""
    lo, hi = 4, len(name)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if fits(kernel_label(name, mid)) else (lo, mid - 1)
    return kernel_label(name, lo)


def _leading_arguments(s: str, width: int, cuts_inside: bool) -> str:
    """The outer name and the first of its template arguments that fit whole, the least
    collapsed, then ``…``: ``unrolled_elementwise_kernel<CUDAFunctor_add<double>, Array<char*, 3>, …``;
    where not even the first fits, the most collapsed cut inside it, or without ``cuts_inside``
    the outer name alone (``splitKreduce_kernel<…>``)."""
    cuts = [cut_end(w, width) for w in _collapses(s, 2, None)]
    outer = s[: s.find("<")]
    alone = outer + "<" + CUT + ">" if len(outer) + len("<…>") <= width else outer + CUT
    return next((c for c in cuts if _whole_arguments(c[: -len(CUT)], 1)), cuts[-1] if cuts_inside else alone)


def compact(name: str) -> str:
    """A name with every step of ``kernel_label`` before its template arguments taken."""
    return _steps(name)[-1]


@functools.lru_cache(maxsize=4096)  # a chart asks again at each width it tries
def _steps(name: str) -> tuple[str, ...]:
    """The name after each step of ``kernel_label`` before its template arguments: without its
    ``void `` and parameter list, then its namespaces, its inner parameter lists, its lambdas."""
    steps = [_without_parameters(name.removeprefix("void "))]
    for step in (_drop_qualifiers, _drop_inner_parameters, _collapse_lambdas):
        steps.append(step(steps[-1]))
    return tuple(steps)


@functools.lru_cache(maxsize=4096)
def _collapses(s: str, min_depth: int, keep: str | None) -> tuple[str, ...]:
    """``s`` and each form of it with one more template argument list collapsed (``_collapse_one``)."""
    out = [s]
    while (w := _collapse_one(out[-1], min_depth, keep)) is not None:
        out.append(w)
    return tuple(out)


def around(s: str, pos: int, width: int) -> str:
    """``s`` from the word at ``pos`` on, compacted and cut to ``width``: after its outer name
    (whole where the word fits beside it) where the word is in its template arguments
    (``outer<…word…``), after the start of its name where the word comes late in it
    (``sm80_xmma_…tn_n_tilesize…``), else from its start."""
    pos = min(pos, len(s) - 1)
    lt = s.find("<")
    start, head, levels = _word_start(s, pos), "", 1
    if 0 <= lt < start:
        outer, room = _drop_qualifiers(s[:lt]), _word_end(s, start) - start + len(CUT)
        whole = len(outer) + len("<" + CUT) + room <= width  # the name, and the word after it
        head, levels = (outer if whole else shorten(outer, width // 2)) + "<" + CUT, 0
        if pos - start > (width - len(head)) // 2:  # a long word: from its part at ``pos``
            start = _part_start(s, pos)
    elif pos > width // 3:
        head, start = name_start(s, width // 3) + CUT, _part_start(s, pos)
    else:
        start = 0
    end = _word_end(s, start)
    window = s[start:end] + _compact_part(s[end:])
    budget = width - len(head)
    stages = [window]
    while len(stages[-1]) > budget and (w := _collapse_one(stages[-1], levels + 1, None)):
        stages.append(w)
    if len(stages[-1]) <= budget:
        return head + stages[-1]
    cuts = [cut_end(w, budget) for w in stages]
    clean = (c for c in cuts if _whole_arguments(c[: -len(CUT)], levels))
    return head + next(clean, cuts[-1])


def _whole_arguments(s: str, levels: int) -> bool:
    """Whether ``s`` ends after a whole argument, at most ``levels`` template lists in."""
    return s.endswith((", ", "}", ">")) and s.count("<") - s.count(">") <= levels


def _compact_part(s: str) -> str:
    """Part of a name without its namespaces, inner parameter lists and chains of lambdas."""
    return _collapse_lambdas(_drop_inner_parameters(_drop_qualifiers(s)))


def _word_start(s: str, pos: int) -> int:
    """The start of the qualified name ``pos`` is in, or of the ``{lambda…}`` it is in."""
    brace = s.rfind("{", 0, pos + 1)
    if brace >= 0 and "}" not in s[brace:pos] and pos - brace < 30:
        return brace
    while pos > 0 and (s[pos - 1].isalnum() or s[pos - 1] in "_:"):
        pos -= 1
    return pos


def _part_start(s: str, pos: int) -> int:
    """The start of the part of a name ``pos`` is in, between ``_`` and ``::``."""
    while pos > 0 and s[pos - 1].isalnum():
        pos -= 1
    return pos


def name_start(s: str, n: int) -> str:
    """The first ``n`` characters of ``s``, cut after a ``_`` or ``::`` near the end."""
    t = s[:n]
    i = max(t.rfind("_"), t.rfind(":"))
    return t[: i + 1] if i >= n // 2 else t


def _word_end(s: str, start: int) -> int:
    end = start
    while end < len(s) and (s[end].isalnum() or s[end] in "_:"):
        end += 1
    if s.startswith("{", end):
        close = _closing(s, end, "{", "}")
        end = len(s) if close is None else close + 1
    return end


def cut_end(s: str, width: int) -> str:
    """The end cut off, after a whole argument where one ends near: ``f<a, b, …``."""
    if len(s) <= width:
        return s
    t = s[: width - len(CUT)]
    ends = (i for i in range(len(t), width // 2, -1) if t[:i].endswith((", ", "}", ">")))
    return t[: next(ends, len(t))] + CUT


def _without_parameters(s: str) -> str:
    """``f<T>(A, B)`` -> ``f<T>``: the trailing balanced parenthesis group taken off."""
    if not s.endswith(")"):
        return s
    depth = 0
    for i in range(len(s) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(s[i], 0)
        if depth == 0:
            return s[:i].rstrip() or s
    return s


def _drop_qualifiers(s: str) -> str:
    """``at::native::BinaryFunctor<float>`` -> ``BinaryFunctor<float>``."""
    return _QUALIFIERS.sub("", s)


def _drop_inner_parameters(s: str) -> str:
    """The parameter lists of functions named in ``s`` taken off: ``impl<float>(A&, float) const``
    -> ``impl<float>``, ``operator()(A&)`` -> ``operator()``; a lambda's are kept."""
    out, i = [], 0
    while i < len(s):
        if s[i] == "(" and _opens_parameters(s, i):
            close = _closing(s, i, "(", ")")
            if close is not None:
                i = close + 1 + (len(" const") if s.startswith(" const", close + 1) else 0)
                continue
        out.append(s[i])
        i += 1
    return "".join(out)


def _opens_parameters(s: str, i: int) -> bool:
    """Whether the ``(`` at ``i`` opens the parameter list of a function named before it."""
    if s.endswith("operator()", 0, i):
        return True
    after_name = i > 0 and (s[i - 1].isalnum() or s[i - 1] in "_>")
    return after_name and not s.endswith(_NOT_FUNCTIONS, 0, i)


def _collapse_lambdas(s: str) -> str:
    """Each chain of lambdas and their ``operator()``s as one ``::{lambda}``:
    ``f::{lambda()#1}::operator()() const::{lambda(float)#1}`` -> ``f::{lambda}``."""
    out, i = [], 0
    while i < len(s):
        end, lambdas = i, 0
        while True:
            if s.startswith(_LAMBDA, end) and (close := _closing(s, end + 2, "{", "}")) is not None:
                end, lambdas = close + 1, lambdas + 1
            elif m := _OPERATOR.match(s, end):
                end = m.end()
            else:
                break
        if lambdas:
            out.append("::{lambda}")
            i = end
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


@functools.lru_cache(maxsize=4096)
def _lambda_owner(s: str) -> tuple[int, str] | None:
    """(where, name) of the function the first lambda in the template arguments of the compact
    name ``s`` is defined in: ``threshold_kernel_impl`` of ``threshold_kernel_impl<float>::{lambda}``."""
    at = s.find("::{lambda}", s.find("<") + 1)
    if s.find("<") < 0 or at < 0:
        return None
    end = at
    if s[end - 1] == ">":  # its template arguments
        depth = 0
        while end > 0:
            end -= 1
            depth += {">": 1, "<": -1}.get(s[end], 0)
            if depth == 0:
                break
    start = end
    while start > 0 and (s[start - 1].isalnum() or s[start - 1] == "_"):
        start -= 1
    return (start, s[start:end]) if start < end and start > s.find("<") else None


def _closing(s: str, i: int, open_: str, close: str) -> int | None:
    """Where the bracket opened at ``i`` closes."""
    depth = 0
    for j in range(i, len(s)):
        depth += 1 if s[j] == open_ else -1 if s[j] == close else 0
        if depth == 0:
            return j
    return None


def _collapse_one(s: str, min_depth: int, keep: str | None) -> str | None:
    """``s`` with one template argument list shown as ``<…>``: the deepest, and of those the
    last, at least ``min_depth`` levels in, that does not hold ``keep``; None where none is left."""
    stack, groups = [], []
    for i, c in enumerate(s):
        if c == "<":
            stack.append(i)
        elif c == ">" and stack:
            start = stack.pop()
            groups.append((len(stack) + 1, start, i))
    candidates = [
        (depth, start, end) for depth, start, end in groups
        if depth >= min_depth and s[start + 1 : end] != CUT and not (keep and keep in s[start:end])
    ]
    if not candidates:
        return None
    _, start, end = max(candidates)
    return s[: start + 1] + CUT + s[end:]
