"""Build the step a model file describes, inside a worker (torch side).

``core/workload.py`` holds the convention and the options; here the factory is called,
the model moved to its dtype, and one step (inference, or forward + backward of a scalar
loss) made callable.
"""

from __future__ import annotations

import inspect
import itertools
import os
from collections.abc import Callable
from typing import Any

from ..core.errors import UsageError, WorkloadError
from ..core.workload import FACTORY, WorkloadOptions
from .failures import missing_module

LOADED_NAME = "inductor_bench_workload"  # __name__ of a model file imported for its factory


def torch_dtype(name: str):
    import torch

    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[name]


def run_model_file(path: str, run_name: str = LOADED_NAME) -> dict[str, Any]:
    """Run the model file as ``python path`` would: its directory (a link's target's) first on
    ``sys.path``, so that it imports the modules beside it (a model package's own files) wherever
    the tool runs, then the path Python built for the user (``python_start.py``: no working
    directory, no entry of the tool's). A script (``run_name`` ``__main__``) runs as Python runs
    it (``_run_as_main``); a model file imported for its factory becomes a module of its own
    (``_load_as_module``). The custom ops it makes stay visible to the profiler
    (``custom_ops.py``)."""
    from .custom_ops import keep_custom_ops_visible
    from .python_start import put_first_on_path

    keep_custom_ops_visible()
    directory = os.path.dirname(os.path.realpath(path))
    put_first_on_path(directory, as_python=run_name != LOADED_NAME)
    if shadowed := shadowing_files(directory):
        raise WorkloadError(shadowing_error(path, shadowed))
    if run_name != LOADED_NAME:
        return _run_as_main(path, run_name)
    return _load_as_module(path)


def shadowing_files(directory: str) -> dict[str, str]:
    """{module name: its file} for each module (``NAME.py``, ``NAME/``) beside the model file
    that this process imported from the standard library or an installed package after Python
    started: ``import NAME`` in the file gets that module, where ``python FILE`` imports the
    file's own for torch as well."""
    import site
    import sys
    import sysconfig

    from .python_start import AT_START

    roots = [p for key, p in sysconfig.get_paths().items() if "lib" in key]  # stdlib, site-packages
    roots += [*getattr(site, "getsitepackages", list)(), site.getusersitepackages()]  # dist-packages
    installed = {os.path.realpath(p) for p in roots}
    found = {}
    for entry in sorted(os.listdir(directory)):
        name = entry.removesuffix(".py")
        if entry == name and not os.path.isfile(os.path.join(directory, entry, "__init__.py")):
            continue
        loaded = getattr(sys.modules.get(name), "__file__", None)
        if name in AT_START or not loaded:
            continue
        if any(os.path.realpath(loaded).startswith(os.path.join(root, "")) for root in installed):
            found[name] = entry if entry != name else f"{entry}/"
    return found


def shadowing_error(path: str, shadowed: dict[str, str]) -> str:
    """The line refusing a model file whose directory holds ``shadowed`` (``shadowing_files``)."""
    base, files = os.path.basename(path), " and ".join(shadowed.values())
    names = ", ".join(shadowed)
    return (f"{base}: {files} beside it has the name of a module torch imports ({names}): here `import` gets "
            f"the installed one, not {files}, and `python {base}` gives torch {files} in its place; "
            f"rename {files}")


def _run_as_main(path: str, run_name: str) -> dict[str, Any]:
    """Execute the file as ``runpy.run_path`` does (its module ``sys.modules[run_name]`` while it
    runs, its globals returned), but leaving ``sys.argv`` as it is: ``run_path`` sets
    ``sys.argv[0]`` to the path it was given, where ``python train.py`` keeps it as typed."""
    import sys
    import types

    module = types.ModuleType(run_name)
    module.__dict__.update(__file__=path, __cached__=None, __loader__=None, __package__="", __spec__=None)
    with open(path, "rb") as f:  # bytes: compile() honours the file's coding cookie
        code = compile(f.read(), path, "exec")
    before = sys.modules.get(run_name)
    sys.modules[run_name] = module
    try:
        exec(code, module.__dict__)
    finally:
        if before is None:
            sys.modules.pop(run_name, None)
        else:
            sys.modules[run_name] = before
    return module.__dict__.copy()


def main_file(path: str, typed: str) -> str:
    """The ``__file__`` that ``python typed`` gives its script: the path as typed joined to the
    working directory, not normalised (``/work/./train.py``); ``path`` (absolute) where the
    working directory is no longer the one it was typed in."""
    joined = os.path.join(os.getcwd(), typed) if typed else path
    return joined if os.path.exists(joined) and os.path.samefile(joined, path) else path


_LOADS = itertools.count()  # model files loaded in this process: each gets a name of its own


def _load_as_module(path: str) -> dict[str, Any]:
    """Execute the model file as a module kept in ``sys.modules``, under a name no other load
    in this process has: code that finds a function's globals by importing its ``__module__``
    finds this file's (Dynamo tracing a ``flex_attention`` score_mod from torch's own frame, as
    eager flex attention does; pickling a class defined here). ``runpy.run_path`` removes its
    module once the file ran, and that import then fails."""
    import sys
    import types

    n = next(_LOADS)
    name = LOADED_NAME if n == 0 else f"{LOADED_NAME}_{n}"
    module = types.ModuleType(name)
    module.__file__ = path
    with open(path, "rb") as f:  # bytes: compile() honours the file's coding cookie
        code = compile(f.read(), path, "exec")
    sys.modules[name] = module
    try:
        exec(code, module.__dict__)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module.__dict__


def load_factory(path: str) -> Callable[..., Any]:
    try:
        ns = run_model_file(path)
    except WorkloadError:
        raise
    except (Exception, SystemExit) as e:  # sys.exit or argparse at its top level: the model's failure
        raise WorkloadError(f"{path}: importing the model file raised {type(e).__name__}: {e}"
                            f"{missing_module(e, path)}") from e
    fn = ns.get(FACTORY)
    if not callable(fn):
        raise UsageError(f"{path}: {FACTORY} is not a function")
    return fn


def call_factory(fn: Callable[..., Any], opts: WorkloadOptions, device: str):
    """Call the factory with the parameters it declares; return (model, args, kwargs)."""
    offered = {
        "device": device,
        "dtype": torch_dtype("float32" if opts.autocast else opts.dtype),
        "batch_size": opts.batch_size,
    }
    params = inspect.signature(fn).parameters
    takes_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    if opts.batch_size is not None and "batch_size" not in params and not takes_kw:
        raise UsageError(f"{opts.path}: {FACTORY}() takes no batch_size, so --batch-size cannot apply")
    kwargs = {k: v for k, v in offered.items() if (k in params or takes_kw) and v is not None}
    try:
        out = fn(**kwargs)
    except (Exception, SystemExit) as e:
        raise WorkloadError(f"{FACTORY}() raised {type(e).__name__}: {e}"
                            f"{missing_module(e, opts.path)}") from e
    if not isinstance(out, tuple) or len(out) not in (2, 3):
        raise WorkloadError(f"{FACTORY}() must return (model, args) or (model, args, kwargs)")
    model, args = out[0], out[1]
    call_kwargs = out[2] if len(out) == 3 else {}
    if not isinstance(args, (tuple, list)):
        args = (args,)
    return model, tuple(args), dict(call_kwargs)


def scalar_loss(out: Any):
    """A scalar from the model's output(s): the sum of every floating tensor's sum."""
    import torch

    tensors = [
        t for t in _flatten(out) if isinstance(t, torch.Tensor) and t.is_floating_point() and t.requires_grad
    ]
    if not tensors:
        raise WorkloadError("--train: the model's output has no floating tensor that requires grad (a "
                            "model without trainable parameters, or one run under no_grad, has no backward "
                            "to profile: leave out --train, or give the factory's inputs requires_grad=True)")
    loss = tensors[0].float().sum()
    for t in tensors[1:]:
        loss = loss + t.float().sum()
    return loss


def _flatten(x: Any):
    if isinstance(x, dict):
        for v in x.values():
            yield from _flatten(v)
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from _flatten(v)
    elif hasattr(x, "to_tuple"):  # HF ModelOutput
        yield from _flatten(x.to_tuple())
    else:
        yield x


def build_step(model, args, kwargs, opts: WorkloadOptions, device: str) -> Callable[[], Any]:
    """One step of the (possibly compiled) model: inference, or forward + backward."""
    import contextlib

    import torch

    if isinstance(model, torch.nn.Module):
        model.train(opts.train)

    def ctx():
        if opts.autocast:
            return torch.autocast(device_type=device, dtype=torch_dtype(opts.dtype))
        return contextlib.nullcontext()

    if opts.train:

        def step():
            with ctx():
                out = model(*args, **kwargs)
                loss = scalar_loss(out)
            loss.backward()
            if isinstance(model, torch.nn.Module):
                model.zero_grad(set_to_none=True)
            return loss

    else:

        def step():
            with torch.no_grad(), ctx():
                return model(*args, **kwargs)

    return step
