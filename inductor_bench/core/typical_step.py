"""The typical step of an analysed trace: each figure the mean over its steady steps."""

from __future__ import annotations

from . import categories, host_python
from .analyze_result import AnalyzeResult, DeviceStep, steady_indices, steady_steps
from .host_python import PythonLayer
from .regions import TypicalRegion, typical
from .shaped_ops import TypicalShapedOp, shaped_ops_left_out, typical_shaped_ops
from .steady import mean
from .top_kernels import TypicalKernel, kernels_left_out, typical_kernels


def steady_regions(result: AnalyzeResult) -> list[TypicalRegion]:
    """Each range name in the typical step, the mean over the steady steps (``regions.typical``)."""
    return typical(result.regions, steady_indices(result))


def regions_left_out(result: AnalyzeResult) -> list[tuple[str, list[str]]]:
    """The range names that ran only in steps left out of the typical step (a periodic eval
    or checkpoint, slower than the steps around it), with the steps they ran in."""
    kept = set(steady_indices(result))
    return [(g.name, [result.steps[i].name for i, n in enumerate(g.calls) if n])
            for g in result.regions if any(g.calls) and not any(g.calls[i] for i in kept)]


def steady_kernels(result: AnalyzeResult) -> list[TypicalKernel]:
    """The kernels in the typical step, the most time first: the mean over the steady steps, so
    that a device's rows of a category add up to the category table's figure."""
    return typical_kernels(result.kernels, steady_indices(result))


def steady_kernels_left_out(result: AnalyzeResult) -> list[tuple[str, list[str]]]:
    """The kernels that ran only in steps left out of the typical step, with those steps."""
    return kernels_left_out(result.kernels, steady_indices(result), [s.name for s in result.steps])


def steady_shaped_ops(result: AnalyzeResult) -> list[TypicalShapedOp]:
    """The GEMMs, convolutions and attention by shape in the typical step, by time
    (``shaped_ops.typical_shaped_ops``)."""
    return typical_shaped_ops(result.shaped_ops, steady_indices(result), result.device_names)


def steady_shaped_ops_left_out(result: AnalyzeResult) -> list[tuple[str, list[str]]]:
    """The GEMM, convolution and attention shapes that ran only in steps left out of the
    typical step, with those steps (``shaped_ops.shaped_ops_left_out``)."""
    return shaped_ops_left_out(result.shaped_ops, steady_indices(result), [s.name for s in result.steps])


def steady_host_python(result: AnalyzeResult) -> tuple[list[PythonLayer], float]:
    """The typical step's time in no op by whose Python it is, and that time (ms)."""
    kept = steady_indices(result)
    if not result.host_python:
        return [], 0.0
    layers = host_python.typical([result.host_python[i] for i in kept], mean)
    return layers, sum(x.ms for x in layers)


def steady_wall(result: AnalyzeResult) -> float:
    return mean([s.wall_ms for s in steady_steps(result)])


def steady_step(result: AnalyzeResult, device: str) -> DeviceStep | None:
    """The typical step of one device: every field the mean over the same steady steps, so
    that its categories add up to its kernel time and its idle parts to wall less busy."""
    rows = [d for s in steady_steps(result) if (d := s.device(device))]
    if not rows:
        return None
    cats = {c for r in rows for c in r.categories}
    return DeviceStep(
        device=device,
        busy_ms=mean([r.busy_ms for r in rows]),
        kernel_ms=mean([r.kernel_ms for r in rows]),
        waiting_on_cpu_ms=mean([r.waiting_on_cpu_ms for r in rows]),
        queued_ms=mean([r.queued_ms for r in rows]),
        nothing_launched_ms=mean([r.nothing_launched_ms for r in rows]),
        other_work_ms=mean([r.other_work_ms for r in rows]),
        events=round(mean([r.events for r in rows])),
        categories={
            c: mean([r.categories.get(c, 0.0) for r in rows]) for c in sorted(cats, key=categories.order)
        },
    )

