#!/usr/bin/env bash
# Merge gate: time a model file as it is on two git revisions, side by side, and judge it.
#
#   scripts/merge_gate.sh [-p PCT] [-o OUT_DIR] [-m MODE] [-a "COMPARE ARGS"] MODEL_FILE [BASE_REV [HEAD_REV]]
#
#   MODEL_FILE  a model file inside a git repository (the make_workload() convention)
#   BASE_REV    the revision to compare against (default: main)
#   HEAD_REV    the revision under test (default: the working tree, as it is)
#   -p PCT      fail when the step time got significantly slower by more than PCT % (default 10)
#   -o OUT_DIR  where the runs and the reports go (default: runs/merge-gate-<timestamp>)
#   -m MODE     the torch.compile mode (default: default)
#   -a ARGS     extra arguments for `inductor-bench compare` (default: "--train")
#
# Each revision's copy of the model file's directory is exported with `git archive` (so the
# model's sibling imports resolve; the repository's checkout and git state are not touched).
# One `inductor-bench compare BASE HEAD` compiles and breaks down both, then times both in one
# process, their calls interleaved, so that the machine's drift between processes cannot pass
# for a regression; its verdict decides. `inductor-bench diff` of the two breakdowns follows,
# kernel by kernel. Both go to stdout and to OUT_DIR/gate.md (markdown, ready for a PR
# comment; appended to $GITHUB_STEP_SUMMARY when that is set).
#
# Exit status: 0 no significant regression above PCT, 1 regression, 2 bad arguments or
# unreadable results, 3 the comparison failed (its log is OUT_DIR/compare.log), 5 not
# comparable: a revision's column, or a graph of its breakdown, was not measured (failed,
# timed out, interrupted); the NOT COMPARABLE line names them and no verdict is given;
# 128 + signal (130 Ctrl-C, 143 SIGTERM) stopped, no verdict, what was measured kept in OUT_DIR;
# 74 a file in OUT_DIR could not be written (a full disk: the line names it), no verdict.
#
# Environment:
#   INDUCTOR_BENCH         the command to run, split into words (default: inductor-bench)
#   INDUCTOR_BENCH_PYTHON  run the package installed for this interpreter instead
#                          (python3 is the last resort when no inductor-bench is on PATH)
#   OMP_NUM_THREADS        defaults to 1: CPU timings taken with several intra-op threads
#                          swing far more on shared machines than the regressions a gate is
#                          meant to catch
set -euo pipefail

# usage [STATUS]: the synopsis above; on stdout and exit 0 when asked for (-h, --help),
# else on stderr and exit 2 (bad arguments)
usage() {
  if [ "${1:-2}" -eq 0 ]; then sed -n '3,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0; fi
  sed -n '3,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2
}
for arg in "$@"; do
  case "$arg" in
    --help) usage 0 ;;
    --) break ;;
  esac
done

pct=10
out=""
mode="default"
bench_args="--train"
while getopts "p:o:m:a:h" opt; do
  case "$opt" in
    p) pct="$OPTARG" ;;
    o) out="$OPTARG" ;;
    m) mode="$OPTARG" ;;
    a) bench_args="$OPTARG" ;;
    h) usage 0 ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] && [ $# -le 3 ] || usage
model="$1"
base_rev="${2:-main}"
head_rev="${3:-}"

export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
main_code="from inductor_bench.cli import main; main()"
if [ -n "${INDUCTOR_BENCH:-}" ]; then
  read -r -a bench <<<"$INDUCTOR_BENCH"
elif [ -n "${INDUCTOR_BENCH_PYTHON:-}" ]; then
  bench=("$INDUCTOR_BENCH_PYTHON" -c "$main_code")
elif command -v inductor-bench >/dev/null 2>&1; then
  bench=(inductor-bench)
else
  bench=(python3 -c "$main_code")
fi

die() { echo "merge_gate: $*" >&2; exit 2; }
# unwritten LINE: a file in OUT_DIR could not be written (exit 74, as inductor-bench's own), so a
# full disk never reads as a regression (1) or a failed comparison (3)
unwritten() { echo "merge_gate: $*; no verdict" >&2; exit 74; }
# stopped STATUS: a comparison or diff stopped by a signal (128 + its number: 130 Ctrl-C, 143
# SIGTERM) stops the gate with that status, no verdict given
stopped() {
  [ "$1" -ge 128 ] || return 0
  echo "merge_gate: stopped (exit $1), no verdict; what was measured is saved in $out" >&2
  exit "$1"
}

# The arguments are checked before any revision is exported: a percentage, and a mode name as
# the CLI checks it (its form, then, for a name that is not a common mode, the installed
# torch's list; skipped where this interpreter has no inductor_bench: compare checks it then).
[[ "$pct" =~ ^[0-9]+([.][0-9]*)?$|^[.][0-9]+$ ]] || die "-p $pct: not a percentage (e.g. 10 or 2.5)"
mode_check='import sys
try:
    from inductor_bench.core.errors import UsageError
    from inductor_bench.core.modes import COMMON, check_name
except ImportError:
    sys.exit(0)
try:
    check_name(sys.argv[1], "-m")
    if sys.argv[1] not in COMMON:
        from inductor_bench.runner.compile_modes import check
        check(sys.argv[1])
except ImportError:
    sys.exit(0)
except UsageError as e:
    sys.exit(f"merge_gate: {e}")'
"${INDUCTOR_BENCH_PYTHON:-python3}" -c "$mode_check" "$mode" || exit 2

[ -f "$model" ] || die "$model: no such model file"
model_dir="$(cd "$(dirname "$model")" && pwd)"
root="$(git -C "$model_dir" rev-parse --show-toplevel 2>/dev/null)" \
  || die "$model is not inside a git repository"
rel_dir="$(git -C "$model_dir" rev-parse --show-prefix)"
rel_dir="${rel_dir%/}"
name="$(basename "$model")"
rel_model="${rel_dir:+$rel_dir/}$name"
for rev in "$base_rev" ${head_rev:+"$head_rev"}; do
  git -C "$root" rev-parse --verify --quiet "$rev^{commit}" >/dev/null \
    || die "$rev: not a revision of $root"
  git -C "$root" cat-file -e "$rev:$rel_model" 2>/dev/null || die "$rel_model does not exist at $rev"
done

out="${out:-runs/merge-gate-$(date +%Y%m%d-%H%M%S)}"
[ ! -e "$out" ] || [ -z "$(ls -A "$out")" ] || die "$out: already exists and is not empty"
made="$(mkdir -p "$out" 2>&1)" || die "$out: cannot create the directory (${made##*: })"
out="$(cd "$out" && pwd)"
# The reports' files are made before any work: a redirect that cannot create its file exits 1
# without running its command, which would read as a regression.
for f in verdict.md compare.log gate.md; do
  made="$( { : >"$out/$f"; } 2>&1)" || unwritten "$out/$f: cannot write (${made##*: })"
done

# export REV SIDE: the model file's directory as it is at REV -> $out/src-SIDE
export_rev() {
  local rev="$1" dest="$out/src-$2" made
  made="$( { mkdir -p "$dest" && git -C "$root" archive --format=tar "$rev" ${rel_dir:+"$rel_dir"} \
    | tar -x -C "$dest"; } 2>&1)" || unwritten "$dest: cannot write $rev's files (${made##*: })"
  echo "$dest/$rel_model"
}

base_file="$(export_rev "$base_rev" base)"
if [ -n "$head_rev" ]; then
  head_file="$(export_rev "$head_rev" head)"
else
  head_file="$model_dir/$name"
fi
echo "merge_gate: comparing $base_rev and ${head_rev:-the working tree} ($name, mode $mode)" >&2
set +e
# shellcheck disable=SC2086  # bench_args is a list of words on purpose
"${bench[@]}" compare "$base_file" "$head_file" --names base,head --modes "$mode" --no-eager --warm-cache \
  $bench_args --out "$out/compare" --fail-on-regression "$pct" --format markdown \
  >"$out/verdict.md" 2>"$out/compare.log"
rc=$?
set -e
stopped "$rc"
if [ "$rc" -eq 74 ]; then
  unwritten "the comparison could not write its results ($(tail -n 1 "$out/compare.log"))"
fi
if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ] && [ "$rc" -ne 5 ]; then
  echo "merge_gate: the comparison failed (exit $rc); last lines of $out/compare.log:" >&2
  tail -n 5 "$out/compare.log" >&2
  exit 3
fi
grep -v "^inductor-bench: run directory" "$out/compare.log" | grep -e "regression" -e "not comparable" >&2 || true
# the two columns' breakdowns, kernel by kernel
set +e
(
  cat "$out/verdict.md"
  echo
  echo "Kernel by kernel: \`inductor-bench diff\` of the two breakdowns. Each was measured in its"
  echo "own process, so its step times drift more than the interleaved verdict above."
  echo
  "${bench[@]}" diff "$out/compare/base-$mode" "$out/compare/head-$mode" --format markdown \
    2>>"$out/compare.log"
  diff_rc=$?
  [ "$diff_rc" -eq 0 ] || [ "$diff_rc" -ge 128 ] || echo "(the diff failed: see $out/compare.log)"
  exit "$diff_rc"
) >"$out/gate.md"
diff_rc=$?
set -e
stopped "$diff_rc"
cat "$out/gate.md"
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  cat "$out/gate.md" >>"$GITHUB_STEP_SUMMARY"
fi
echo "merge_gate: base ${base_rev}, head ${head_rev:-working tree}; results in $out" >&2
exit "$rc"
