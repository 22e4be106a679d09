"""What differs between the torch versions inductor-bench supports (2.5 to 2.15), in one place,
as read from the source of each release.

Each ``Difference`` names the torch version the newer behaviour starts at, what changed, the
file that handles both sides (and a line of code there that does), and the test that covers
it. ``tests/test_compat.py`` checks that every file still holds its line and every
test exists; ``docs/version-matrix.md`` prints this table (``markdown()``). A new difference
gets a row here, a branch where it is handled, and a test.

Where no version of a feature can serve, the code says so in one line naming the torch version
(``too_old``; ``--mode`` checked against the installed torch's own mode table).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import WorkloadError

OLDEST = (2, 5)
# AOTAutograd tags the nodes it traces for the forward `partitioner_tag = "is_forward"` from
# this version (runner/sources.py: a backward graph's recomputed forward work).
FORWARD_TAGGED_FROM = (2, 10)


@dataclass(frozen=True)
class Difference:
    since: str  # first torch version with the newer behaviour
    what: str
    where: str  # the file that handles both sides, relative to the package
    marker: str  # a line fragment of that file that does so
    test: str  # tests/<file>.py::<test> that covers it


DIFFERENCES = (
    Difference("2.6", "`size_hints` of a Triton kernel is a dict of named sizes (a list before)",
               "render/kernel.py", "isinstance(size_hints, (list, tuple))",
               "tests/test_compat.py::test_list_size_hints_of_torch_2_5_render"),
    Difference("2.6", "`max-autotune` also turns on coordinate descent (from 2.10 a `lite` mode "
               "exists too): the modes are read from the installed torch's own table",
               "runner/compile_modes.py", "list_mode_options",
               "tests/test_autotune.py::test_the_worker_reads_the_installed_torchs_mode_table"),
    Difference("2.6", "a C++ wrapper module (`cpp_wrapper = True`) calls an extern op through its C "
               "shim, `aoti_torch_cpu_addmm_out(buf0, ...)`, which the profiler records under the shim's "
               "name; torch 2.5 calls ATen, `at::addmm_out(buf0, ...)`, recorded as `aten::addmm`, or the op "
               "it finds in the dispatcher (`op_mkl__mkl_linear_.call(...)`: `mkl::_mkl_linear`)",
               "core/cppwrapper.py", '_DISPATCHED_CALL = re.compile(',
               "tests/test_cppwrapper.py::test_the_forwards_extern_calls_are_counted_from_their_shapes"),
    Difference("2.7", "a graph break's structured-trace record gives its reason as `Graph Break Reason:` "
               "and Dynamo's explanation; 2.6, the first to write the record, as `Reason:` and the "
               "exception", "core/graph_breaks.py", "(?:Graph Break )?Reason:",
               "tests/test_graph_breaks.py::"
               "test_torch_2_6s_artifacts_give_the_place_and_dynamos_exception_as_the_reason"),
    Difference("2.7", "Dynamo's limit on compiles of one function is `recompile_limit` (`cache_size_limit` "
               "before, its alias since); the warning of a hit names the one the torch has, and the report "
               "takes the name from it", "core/compiles.py", '"name": str(args[0])',
               "tests/test_compiles.py::test_the_recorded_limit_warning_lands_on_the_compile_that_met_it"),
    Difference("2.8", "max-autotune compiles some autotuning choices as subgraphs that emit their own "
               "module records, named `benchmark_<choice>` (from 2.10 through "
               "`_compile_for_benchmarking`); none before", "core/subgraphs.py", "GRAPH_NAME_PREFIX = ",
               "tests/test_subgraphs.py::test_without_the_workers_evidence_the_graph_name_or_the_module_text_tells"),
    Difference("2.8", "`CompiledFxGraph.post_compile` is handed `graph_kwargs` (the CUDA-graph flag, "
               "`static_input_idxs`); 2.6 and 2.7 hand it the flag itself and keep `static_input_idxs` in "
               "the graph's `fx_kwargs`", "runner/cudagraph_state.py", "def handed(",
               "tests/test_replay_worker.py::test_torch_2_6_and_2_7s_post_compile_arguments_give_the_same_state"),
    Difference("2.9", "each compiled-graph call runs inside a `## Call CompiledFxGraph <key> ##` "
               "record function (none before: kernels sit under the harness's own ops)",
               "core/kernel_events.py", "CompiledFxGraph",
               "tests/test_breakdown.py::test_cpu_top_level_ops_per_iteration"),
    Difference("2.9", "per-backend `fp32_precision` settings beside `allow_tf32`; absent keys are "
               "neither recorded nor applied", "runner/torch_settings.py",
               "except (AttributeError, RuntimeError",
               "tests/test_compat.py::test_settings_a_torch_lacks_are_left_out"),
    Difference("2.9", "importing `torch._inductor.compile_fx` no longer starts the compile pool (2.6 to "
               "2.8 start it there, and it writes a structured record before `compile_fx` exists): the "
               "wrapper that records each compile's dynamo graph is put on at the first record after it "
               "does", "runner/dynamo_graphs.py", 'getattr(cfx, "compile_fx", None)',
               "tests/test_compile_fx_wrapper.py::"
               "test_a_call_during_compile_fx_s_import_leaves_the_wrapping_to_the_next"),
    Difference("2.10", "`inductor_output_code` records carry `file_path` (`filename` only before)",
               "runner/trace_log.py", 'info.get("file_path") or info.get("filename")',
               "tests/test_compat.py::test_a_module_record_without_file_path_is_found"),
    Difference("2.10", "AOTAutograd tags the nodes it traces for the forward `partitioner_tag = "
               "\"is_forward\"` (untagged before; the backward's are `\"is_backward\"` in every "
               "version): a backward graph's nodes tagged forward are the work it recomputes, "
               "unknown before", "runner/sources.py", "compat.FORWARD_TAGGED_FROM",
               "tests/test_recomputed.py::test_the_worker_marks_forward_tagged_nodes_of_a_backward_graph"),
    Difference("2.11", "compiled modules write `get_args()` and `benchmark_compiled_module(args, times, "
               "repeat)`; before, `benchmark_compiled_module(times, repeat)` builds the inputs itself "
               "and hands `print_performance` a closure", "runner/harness_inputs.py", "HARNESS_2_5 = ",
               "tests/test_gpu_truth.py::test_a_module_written_by_torch_2_5_is_profiled_through_its_own_harness"),
    Difference("2.11", "cudagraph skip lines go to the `cudagraphs` artifact logger (`perf_hints` before)",
               "runner/cudagraph_log.py", '"torch._inductor.cudagraph_utils.__perf_hints"',
               "tests/test_compat.py::test_cudagraph_skips_on_the_older_perf_hints_logger_are_read"),
    Difference("2.13", "`get_args()` builds inputs that share a storage as `torch.as_strided` views of "
               "one `_shared_storage_<n>` buffer (each input drawn on its own before): their bytes are "
               "counted on the view's shape in the storage's type", "core/buffers.py", "_AS_STRIDED = ",
               "tests/test_roofline.py::test_inputs_that_share_a_storage_take_their_view_shape_and_the_storages_type"),
    Difference("2.13", "the mode no longer leaves a graph whose inputs overlap in memory out of CUDA "
               "graphs (\"complex memory overlap\" before): without torch's state the overlap is "
               "checked only for older torches", "core/replay_plan.py", "OVERLAP_UNCHECKED_FROM = (2, 13)",
               "tests/test_replay_plan.py::test_complex_memory_overlap_from_the_harness_strides"),
    Difference("2.14", "a `torch.library.custom_op` with a Python kernel is called through a path that "
               "skips the dispatcher and the profiler's record of the op (its ATen ops showed at the "
               "top level, the module's call of it never found): the workers turn that path off, "
               "about 1 µs a call", "runner/custom_ops.py", "OpOverload._enable_pyobj_dispatch = off_only",
               "tests/test_custom_ops.py::test_the_profiler_records_a_custom_op_made_after_it_as_its_own_call"),
    Difference("2.15", "a C++ wrapper's record of a C shim call is given the call's inputs, in a vector "
               "named after the shim (`aoti_torch_cpu_mm_out_inputs_`): only the call the module checks, "
               "`AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_cpu_mm_out(...))`, is read as one",
               "core/cppwrapper.py", r'_SHIM_CALL = re.compile(r"\bAOTI_TORCH_ERROR_CODE_CHECK',
               "tests/test_cppwrapper.py::test_a_cpp_wrapper_module_reads_as_its_python_twin"),
    Difference("2.15", "a Triton kernel's `inductor_meta` writes `autotune_hints` as a tuple, `()` "
               "(`set()` before): the kernel-file reader evaluates both without running the file",
               "core/kernelfile.py", 'if node.func.id == "set" and not node.args and not node.keywords:',
               "tests/test_compat.py::test_autotune_hints_as_a_set_or_a_tuple_read_alike"),
)


def parse(version: str) -> tuple[int, int]:
    """(major, minor) of a torch version string ('2.5.1+cu124' -> (2, 5))."""
    parts = version.split("+")[0].split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        raise ValueError(f"not a torch version: {version!r}") from None


def too_old(version: str) -> WorkloadError | None:
    """The one-line error for a torch older than the oldest supported, else None."""
    if parse(version) >= OLDEST:
        return None
    return WorkloadError(f"torch {version} is older than {OLDEST[0]}.{OLDEST[1]}, the oldest torch "
                         "inductor-bench supports: install torch>=2.5")


def markdown() -> str:
    """The table of differences, as docs/version-matrix.md shows it."""
    rows = ["| from torch | what changed | handled in | test |", "|---|---|---|---|"]
    for d in DIFFERENCES:
        rows.append(f"| {d.since} | {d.what} | `inductor_bench/{d.where}` | `{d.test}` |")
    return "\n".join(rows)


def versions() -> dict[str, str]:
    """The versions a run records: the tool's, torch's, Python's and triton's."""
    import platform

    import torch

    from .. import __version__

    v = {"inductor_bench": __version__, "torch": torch.__version__, "python": platform.python_version()}
    try:
        import triton

        v["triton"] = triton.__version__
    except Exception:  # triton is optional on CPU machines
        v["triton"] = "not installed"
    return v
