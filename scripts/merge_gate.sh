#!/usr/bin/env bash
# Merge gate: break down a model file as it is on two git revisions and diff the results.
#
#   scripts/merge_gate.sh [-p PCT] [-o OUT_DIR] [-a "BREAKDOWN ARGS"] MODEL_FILE [BASE_REV [HEAD_REV]]
#
#   MODEL_FILE  a model file inside a git repository (the make_workload() convention)
#   BASE_REV    the revision to compare against (default: main)
#   HEAD_REV    the revision under test (default: the working tree, as it is)
#   -p PCT      fail when the step time got significantly slower by more than PCT % (default 10)
#   -o OUT_DIR  where the two runs and the diff go (default: runs/merge-gate-<timestamp>)
#   -a ARGS     extra arguments for `inductor-bench breakdown` (default: "--train")
#
# Each revision's copy of the model file's directory is exported with `git archive` (so the
# model's sibling imports resolve; the repository's checkout and git state are not touched)
# and broken down in its own run directory. The diff goes to stdout and to OUT_DIR/diff.md
# (markdown, ready for a PR comment; appended to $GITHUB_STEP_SUMMARY when that is set).
#
# Exit status: 0 no significant regression above PCT, 1 regression, 2 bad arguments or
# unreadable results, 3 a breakdown failed (its log is OUT_DIR/base.log or head.log).
#
# Environment:
#   INDUCTOR_BENCH         the command to run, split into words (default: inductor-bench)
#   INDUCTOR_BENCH_PYTHON  run the package installed for this interpreter instead
#                          (python3 is the last resort when no inductor-bench is on PATH)
#   OMP_NUM_THREADS        defaults to 1: CPU timings taken with several intra-op threads
#                          swing far more between runs on shared machines than the
#                          regressions a gate is meant to catch
set -euo pipefail

usage() { sed -n '3,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

pct=10
out=""
bench_args="--train"
while getopts "p:o:a:h" opt; do
  case "$opt" in
    p) pct="$OPTARG" ;;
    o) out="$OPTARG" ;;
    a) bench_args="$OPTARG" ;;
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

[ -f "$model" ] || die "$model: no such model file"
model_dir="$(cd "$(dirname "$model")" && pwd)"
root="$(git -C "$model_dir" rev-parse --show-toplevel 2>/dev/null)" \
  || die "$model is not inside a git repository"
rel_dir="$(git -C "$model_dir" rev-parse --show-prefix)"
rel_dir="${rel_dir%/}"
name="$(basename "$model")"
for rev in "$base_rev" ${head_rev:+"$head_rev"}; do
  git -C "$root" rev-parse --verify --quiet "$rev^{commit}" >/dev/null \
    || die "$rev: not a revision of $root"
done

out="${out:-runs/merge-gate-$(date +%Y%m%d-%H%M%S)}"
[ ! -e "$out" ] || [ -z "$(ls -A "$out")" ] || die "$out: already exists and is not empty"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

# export REV SIDE: the model file's directory as it is at REV -> $out/src-SIDE
export_rev() {
  local rev="$1" dest="$out/src-$2"
  mkdir -p "$dest"
  git -C "$root" archive --format=tar "$rev" ${rel_dir:+"$rel_dir"} | tar -x -C "$dest"
  [ -f "$dest/${rel_dir:+$rel_dir/}$name" ] || die "$rel_dir/$name does not exist at $rev"
  echo "$dest/${rel_dir:+$rel_dir/}$name"
}

# breakdown SIDE FILE: one run directory per side; the report goes to SIDE.txt
breakdown() {
  local side="$1" file="$2"
  echo "merge_gate: breaking down $side ($file)" >&2
  # shellcheck disable=SC2086  # bench_args is a list of words on purpose
  if ! "${bench[@]}" breakdown "$file" $bench_args --out "$out/$side" \
      >"$out/$side.txt" 2>"$out/$side.log"; then
    echo "merge_gate: the $side breakdown failed; last lines of $out/$side.log:" >&2
    tail -n 5 "$out/$side.log" >&2
    exit 3
  fi
}

base_file="$(export_rev "$base_rev" base)"
if [ -n "$head_rev" ]; then
  head_file="$(export_rev "$head_rev" head)"
else
  head_file="$model_dir/$name"
fi
breakdown base "$base_file"
breakdown head "$head_file"

set +e
"${bench[@]}" diff "$out/base" "$out/head" --fail-on-regression "$pct" --format markdown \
  >"$out/diff.md"
rc=$?
set -e
cat "$out/diff.md"
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  cat "$out/diff.md" >>"$GITHUB_STEP_SUMMARY"
fi
echo "merge_gate: base ${base_rev}, head ${head_rev:-working tree}; results in $out" >&2
exit "$rc"
