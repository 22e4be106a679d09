"""What a script asked of the compiler, where the run found nothing to profile.

A script runs under ``breakdown`` as under ``python``; the compile worker wraps ``torch.compile``
(giving it the run's mode where the call names none) and Inductor's ahead-of-time entry
(``compile_fx_aot``, which ``torch._inductor.aoti_compile_and_package`` and ``aot_compile`` reach
in every torch since 2.5), and counts what each was asked to compile. Where no graph came of
it, ``core/graph_breaks.nothing_compiled`` says why from these counts: an AOTInductor package
(which runs outside ``torch.compile``), or a module that ``nn.Module.compile()`` left eager.

Before torch 2.14 ``nn.Module.compile()`` of a module whose ``forward`` is torch's own
(``nn.Sequential``, ``nn.Linear``) compiles nothing: it compiles ``Module._call_impl``, and Dynamo
skips both that frame and the ``forward`` it calls as torch's files (pytorch/pytorch#150915,
fixed by pytorch/pytorch#185722 for 2.14).
"""
from __future__ import annotations

import functools
from typing import Any

from . import compat

# The first torch whose Dynamo compiles nn.Module.compile() of torch's own modules.
MODULE_COMPILE_FIXED = (2, 14)


class ScriptCompiles:
    """The calls of ``torch.compile`` and of Inductor's AOT compile a script made."""

    def __init__(self) -> None:
        self.targets: list[str] = []  # what each torch.compile call was given, in order
        self.modes: list[str] = []  # the mode each call that compiles with Inductor compiled in
        self.eager_modules: list[str] = []  # nn.Module.compile() targets this torch leaves eager
        self.aot = 0

    def found(self) -> dict[str, Any]:
        """The counts a run keeps (``CompileOutcome.script_compiles``)."""
        return {"torch_compile": list(self.targets), "module_compile_eager": list(self.eager_modules),
                "aot_compiles": self.aot, "modes": list(self.modes)}

    def note_target(self, target: Any, mode: str | None) -> None:
        """``mode``: the mode the call compiles in; None for a backend other than Inductor."""
        name, eager = describe(target)
        self.targets.append(name)
        if eager:
            self.eager_modules.append(name)
        if mode is not None:
            self.modes.append(mode)


def describe(target: Any, version: str | None = None) -> tuple[str, bool]:
    """(a name for what ``torch.compile`` was given, whether ``nn.Module.compile()`` of torch
    ``version`` (this one's by default) leaves it eager)."""
    import torch

    version = version or torch.__version__
    owner = getattr(target, "__self__", None)
    if isinstance(owner, torch.nn.Module) and getattr(target, "__name__", "") == "_call_impl":
        cls = type(owner)
        return f"{cls.__name__} (nn.Module.compile())", _torch_forward(cls) and not _fixed(version)
    if isinstance(target, torch.nn.Module):
        return type(target).__name__, False
    return str(getattr(target, "__qualname__", None) or type(target).__name__), False


def _torch_forward(cls: type) -> bool:
    """The module's ``forward`` is defined in torch's own files (Dynamo's skip list)."""
    fwd = getattr(cls, "forward", None)
    return str(getattr(fwd, "__module__", "") or "").startswith("torch.")


def _fixed(version: str) -> bool:
    try:
        return compat.parse(version) >= MODULE_COMPILE_FIXED
    except ValueError:
        return True  # a version this cannot read: claim nothing


def attach(mode: str | None) -> ScriptCompiles:
    """Wrap ``torch.compile`` (``mode``: given to calls naming none; None leaves them be) and
    Inductor's AOT compile for the rest of this process; returns what they record."""
    import torch
    import torch._inductor.compile_fx as cfx

    seen = ScriptCompiles()
    orig = torch.compile

    @functools.wraps(orig)
    def compile_watched(*a: Any, **kw: Any) -> Any:
        inductor = kw.get("backend", "inductor") == "inductor"  # another backend has no modes
        compiled_in = with_mode(kw, mode) if inductor else None
        target = a[0] if a else kw.get("model")
        if target is not None:  # with arguments alone it returns a decorator, which calls it again
            seen.note_target(target, compiled_in)
        return orig(*a, **kw)

    torch.compile = compile_watched
    aot = cfx.compile_fx_aot

    @functools.wraps(aot)
    def aot_watched(*a: Any, **kw: Any) -> Any:
        seen.aot += 1
        return aot(*a, **kw)

    cfx.compile_fx_aot = aot_watched
    return seen


def with_mode(kw: dict[str, Any], mode: str | None) -> str:
    """A ``torch.compile`` call's keywords given ``mode`` (None: none) where the call names none;
    returns the mode the call compiles in. torch takes a mode or options, never both
    (RuntimeError): a call with options of its own gets the mode's options under them
    (``list_mode_options``), as torch applies a mode's and then a call's."""
    if kw.get("mode") is not None:
        return str(kw["mode"])
    if mode is None:
        return "default"
    if kw.get("options") is None:
        kw["mode"] = mode
    else:
        from torch._inductor import list_mode_options

        kw["options"] = {**list_mode_options(mode, kw.get("dynamic")), **kw["options"]}
    return mode
