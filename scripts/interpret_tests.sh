#!/usr/bin/env bash
# Inductor's CUDA Triton kernels on CPU: the interpreter tests (tests/test_triton_interpret.py,
# marker `interpret`) under each given torch, with TRITON_INTERPRET=1, in that torch's virtual
# environment (a CUDA build of torch brings Triton and its interpreter; no GPU is needed).
#
#   scripts/interpret_tests.sh [--skip-slow] [--venvs DIR] [VERSION ...]      # default: 2.14.1
#
# The environments are the version matrix's (scripts/version_matrix.sh --venv-only: same place,
# same install; a new one downloads several GB). The project is installed into each (editable,
# with numpy, which the interpreter computes with, and pytest) unless it already is. --skip-slow
# leaves out the cases also marked `slow` (CI). Extra pytest arguments, split on whitespace, go
# in INTERPRET_PYTEST_ARGS. Exit status: 0 every version passed, 1 a test failed, 2 bad
# arguments or an environment that could not be installed.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
venv_args=()
marker=interpret
wanted=()
while [ $# -gt 0 ]; do
  case "$1" in
    --venvs) venv_args=(--venvs "${2:?--venvs needs a directory}"); shift ;;
    --skip-slow) marker='interpret and not slow' ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    -*) echo "interpret_tests: unknown option $1" >&2; exit 2 ;;
    *) wanted+=("$1") ;;
  esac
  shift
done
[ ${#wanted[@]} -gt 0 ] || wanted=(2.14.1)
logs="$(mktemp -d /tmp/interpret-tests-XXXXXX)"

# The project at this checkout, numpy and pytest importable by the environment's python?
project_installed() {
  "$1" - "$root" <<'EOF' >/dev/null 2>&1
import sys, pathlib, numpy, pytest, inductor_bench
sys.exit(pathlib.Path(inductor_bench.__file__).resolve().parent.parent != pathlib.Path(sys.argv[1]).resolve())
EOF
}

rc=0
for v in "${wanted[@]}"; do
  t0=$(date +%s)
  if ! vpy="$("$here/version_matrix.sh" --venv-only "${venv_args[@]}" --out "$logs/venv-$v" "$v" | tail -n 1)" \
      || [ -z "$vpy" ]; then
    echo "interpret_tests: no environment for torch $v (logs: $logs/venv-$v)" >&2
    rc=2; continue
  fi
  if ! project_installed "$vpy"; then
    PIP_CONSTRAINT=/dev/null "$vpy" -m pip install -q --disable-pip-version-check -e "$root" numpy pytest \
      >>"$logs/install-$v.log" 2>&1 || {
      echo "interpret_tests: the project could not be installed for torch $v: $(tail -n 1 "$logs/install-$v.log")" >&2
      rc=2; continue
    }
  fi
  echo "== torch $v: interpreter tests ($vpy)"
  # shellcheck disable=SC2086  # INTERPRET_PYTEST_ARGS is split on purpose
  (cd "$root" && TRITON_INTERPRET=1 "$vpy" -m pytest -q -ra -m "$marker" -p no:cacheprovider \
      tests/test_triton_interpret.py ${INTERPRET_PYTEST_ARGS:-})
  trc=$?
  echo "== torch $v: exit $trc in $(( $(date +%s) - t0 )) s"
  [ "$trc" -ne 0 ] && [ "$rc" -eq 0 ] && rc=1
done
exit "$rc"
