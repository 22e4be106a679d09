"""The compiled graphs of one run: each module copied into the run directory with its kernels
and recorded inputs, and labelled with its frame, compile id and role."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core import subgraphs
from ..core.compiles import compile_name
from ..core.modparse import ModuleInfo, read_module, role_of
from ..core.results import GraphResult
from ..core.rundir import (
    CALL_INPUTS_DIR,
    CALL_INPUTS_FILE,
    KERNELS_DIR,
    MODULE_FILE,
    MODULES_LOG,
    SOURCES_FILE,
    SOURCES_LOG,
    graph_dir,
)
from ..core.source_store import AOT_ID, read_log
from ..core.vocab import Role
from . import cudagraph_state
from .dynamo_frame import CODE_KEY
from .rundir import copy_atomic, link_or_copy, record_digests, record_inputs
from .trace_log import COMPILED_AUTOGRAD

ROLE_ORDER = {Role.FORWARD: 0, Role.INFERENCE: 1, Role.BACKWARD: 2}


@dataclass
class GraphSource:
    graph: GraphResult
    module_path: Path  # the copy inside the run directory
    info: ModuleInfo
    kernel_files: dict[str, str]  # kernel name -> path relative to the run directory
    cudagraph_skip: str | None = None  # why torch.compile left it out of CUDA graphs (its log)
    cudagraph_state: dict[str, Any] | None = None  # torch's own state of it (runner/cudagraph_state.py)
    sources: dict[str, Any] | None = None  # what it was made from (runner/sources.py)
    origin: str = ""  # the module as Inductor wrote it (the compile worker's path)


def collect_graphs(
    modules: list[dict[str, Any]],
    run_dir: Path,
    default_device: str,
    left_out: list[dict[str, Any]] | None = None,
) -> list[GraphSource]:
    """Copy each compiled module (and the Triton kernel files it names) into the run
    directory and label it with its frame / compile id and role. Autotuning subgraphs
    (``core/subgraphs.py``: flagged by the compile worker, or recognised from the module's
    text) are not graphs of the model: they are left out, and appended to ``left_out`` with
    ``subgraph: true`` and the reason."""
    sources: list[GraphSource] = []
    used: set[str] = set()
    records = read_log(run_dir / SOURCES_LOG)
    states = _cudagraph_states(run_dir / MODULES_LOG)
    record_inputs(run_dir)  # the steps the compile worker profiled
    for m in modules:
        path = Path(m["path"])
        if not path.exists():
            continue
        marked = subgraphs.mark(dict(m), path.read_text(errors="replace"))
        if marked.get(subgraphs.SUBGRAPH_KEY):
            if left_out is not None:
                left_out.append(marked)
            continue
        record = records.get(m["path"])
        sources.append(_collect(m, run_dir, default_device, used, record))
        sources[-1].cudagraph_state = states.get(cudagraph_state.text_sha(path.read_text(errors="replace")))
        sources[-1].sources = _save_record(record, sources[-1].module_path.parent)
    sources.sort(
        key=lambda s: (
            s.graph.frame_id if s.graph.frame_id is not None else 1 << 30,
            s.graph.frame_compile_id or 0,
            ROLE_ORDER.get(s.graph.role, 3),
        )
    )
    _share_code([s.graph for s in sources])
    return sources


def _share_code(graphs: list[GraphResult]) -> None:
    """A graph compiled with no Dynamo frame on the stack (a backward, at the first backward)
    takes the code of the graph of the same compile (frame id and compile id)."""
    code = {(g.frame_id, g.frame_compile_id): g.compiled_from for g in graphs if g.compiled_from}
    for g in graphs:
        if g.compiled_from is None and g.frame_id is not None:
            g.compiled_from = code.get((g.frame_id, g.frame_compile_id))


def _collect(m: dict[str, Any], run_dir: Path, default_device: str, used: set[str],
             record: dict[str, Any] | None = None) -> GraphSource:
    src = Path(m["path"])
    info = read_module(src)
    aot_id = (record or {}).get(AOT_ID)
    if info.role == Role.UNKNOWN and aot_id:  # a C++ wrapper's module says none
        info.role = role_of(str(aot_id))
    autograd = bool(m.get(COMPILED_AUTOGRAD))  # compiled autograd's backward: AOT's inference
    info.role = Role.BACKWARD if autograd and info.role == Role.INFERENCE else info.role
    gid = _graph_id(m, info, used)
    gdir = graph_dir(run_dir, gid)
    (gdir / KERNELS_DIR).mkdir(parents=True, exist_ok=True)
    dst = gdir / MODULE_FILE
    copy_atomic(src, dst)
    kernel_files = {}
    for k in info.kernels.values():
        if k.kernel_path and Path(k.kernel_path).exists():
            kdst = gdir / KERNELS_DIR / f"{k.name}.py"
            copy_atomic(k.kernel_path, kdst)
            kernel_files[k.name] = str(kdst.relative_to(run_dir))
    copied = [dst, *(run_dir / f for f in kernel_files.values())]
    records = run_dir / CALL_INPUTS_DIR  # its first call's, and at each other size's (call_inputs.py)
    for record in [records / f"{src.stem}.pt", *sorted(records.glob(f"{src.stem}.*.pt"))]:
        if record.exists():
            mine = gdir / (Path(CALL_INPUTS_FILE).stem + record.name[len(src.stem):])
            link_or_copy(record, mine)
            copied.append(mine)
    record_digests(run_dir, copied)
    g = GraphResult(
        id=gid,
        role=info.role,
        aot_id=info.aot_id,
        frame_id=m.get("frame_id"),
        frame_compile_id=m.get("frame_compile_id"),
        compiled_from=m.get(CODE_KEY),
        compiled_autograd=autograd,
        module=str(dst.relative_to(run_dir)),
        device=info.device or default_device,
    )
    return GraphSource(g, dst, info, kernel_files, m.get("cudagraph_skip"), origin=str(m["path"]))


def _cudagraph_states(log: Path) -> dict[str, dict[str, Any]]:
    """module text SHA-256 -> torch's CUDA-graph state of its graph, from the modules log."""
    lines = []
    if log.exists():
        for line in log.read_text().splitlines():
            try:
                lines.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a torn last line
    return cudagraph_state.states_by_sha([ln for ln in lines if isinstance(ln, dict)])


def _save_record(record: dict[str, Any] | None, gdir: Path) -> dict[str, Any] | None:
    """The module's lowering record beside its copy (``sources.json``), for re-analysis."""
    if record is not None:
        (gdir / SOURCES_FILE).write_text(json.dumps(record))
    return record


def _graph_id(m: dict[str, Any], info: ModuleInfo, used: set[str]) -> str:
    frame = m.get("frame_id")
    head = compile_name(frame if frame is not None else info.aot_id.split("_", 1)[0] or "g",
                        m.get("frame_compile_id"))
    gid, n = f"{head}-{info.role}", 2
    while gid in used:
        gid = f"{head}-{info.role}-{n}"
        n += 1
    used.add(gid)
    return gid

