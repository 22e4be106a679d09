#!/usr/bin/env bash
# Every supported torch, one line each: install it into its own virtual environment, run
# `inductor-bench breakdown` on CPU on models/mlp.py --train and on a graph-break script, check
# what was found (scripts/version_matrix.py says which checks), print one line per version and
# the markdown table of docs/version-matrix.md.
#
#   scripts/version_matrix.sh [--compact] [--venvs DIR] [--out DIR] [VERSION ...]
#   scripts/version_matrix.sh --venv-only [--venvs DIR] VERSION ...   # only ensure each, print its python
#
# VERSION defaults to 2.5.1 2.8.0 2.11.0 2.13.0 2.14.1 2.15.0. The environments live in --venvs
# (default: $VERSION_MATRIX_VENVS, else ~/.cache/inductor-bench-venvs) and are reused while
# their torch is the one asked for (the project's other requirements are installed into them);
# a new one costs a download (PyPI's Linux x86_64 wheels are CUDA builds: 5-7 GB with their
# nvidia-* libraries, which run on CPU too). --out (default: a
# new directory under /tmp) receives each version's runs, logs and summary.json. --compact
# profiles fewer iterations (CI). A machine-wide pip constraints file (PIP_CONSTRAINT, or one in
# /etc/xdg/pip) that caps torch would keep the newest release out: the matrix's own pip calls
# read an empty constraints file it writes into --out instead, which lifts such a cap for those
# calls alone. PYTHON (default python3) is the interpreter that makes the environments:
# `PYTHON=python3.10 scripts/version_matrix.sh --venvs DIR 2.5.1` checks a torch on another
# Python (give each Python its own --venvs). Exit status: 0 every version passed, 1 one failed, 2 bad
# arguments or an environment that could not be installed.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
py="${PYTHON:-python3}"
venvs="${VERSION_MATRIX_VENVS:-$HOME/.cache/inductor-bench-venvs}"
out=""
compact=()
venv_only=""
wanted=()
while [ $# -gt 0 ]; do
  case "$1" in
    --compact) compact=(--compact) ;;
    --venv-only) venv_only=1 ;;
    --venvs) venvs="${2:?--venvs needs a directory}"; shift ;;
    --out) out="${2:?--out needs a directory}"; shift ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    -*) echo "version_matrix: unknown option $1" >&2; exit 2 ;;
    *) wanted+=("$1") ;;
  esac
  shift
done
[ ${#wanted[@]} -gt 0 ] || wanted=(2.5.1 2.8.0 2.11.0 2.13.0 2.14.1 2.15.0)
if [ -z "$out" ]; then
  out="$(mktemp -d /tmp/version-matrix-XXXXXX)"
elif [ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
  echo "version_matrix: $out is not empty (a previous matrix is never overwritten)" >&2
  exit 2
fi
mkdir -p "$out" "$venvs"
# An empty constraints file for the matrix's own pip calls (see above).
no_constraints="$out/no-constraints.txt"
: >"$no_constraints"

# The project's own requirements but torch, read from pyproject.toml (one list to keep).
mapfile -t deps < <("$py" - "$root/pyproject.toml" <<'EOF'
import sys
try:
    import tomllib
except ImportError:  # Python 3.10: the copy pip carries
    from pip._vendor import tomli as tomllib
for d in tomllib.load(open(sys.argv[1], "rb"))["project"]["dependencies"]:
    if not d.replace(" ", "").startswith(("torch>", "torch=", "torch<", "triton")):
        print(d)
EOF
)

installed_torch() { "$1/bin/python" -c 'import torch; print(torch.__version__.split("+")[0])' 2>/dev/null; }

pip_install() {  # $1 environment, $2 torch version
  PIP_CONSTRAINT="$no_constraints" "$1/bin/python" -m pip install -q --disable-pip-version-check \
    "torch==$2" "${deps[@]}" \
    >>"$out/install-$2.log" 2>&1
}

deps_install() {  # $1 environment: the project's other requirements, its torch left as it is
  PIP_CONSTRAINT="$no_constraints" "$1/bin/python" -m pip install -q --disable-pip-version-check \
    "${deps[@]}" >>"$out/install-deps.log" 2>&1
}

ensure_venv() {  # $1 version -> prints the environment's python, or fails
  local v="$1" dir="$venvs/torch-$1" t0
  if [ "$(installed_torch "$dir")" = "$v" ]; then
    deps_install "$dir" || {
      echo "version_matrix: the requirements could not be installed into $dir: $(tail -n 1 "$out/install-deps.log")" >&2
      return 1
    }
    echo "$dir/bin/python"; return 0
  fi
  rm -rf "$dir"
  t0=$(date +%s)
  echo "installing torch $v into $dir ..." >&2
  "$py" -m venv "$dir" || return 1
  # twice: a download of several GB may break off once
  pip_install "$dir" "$v" || pip_install "$dir" "$v" || {
    echo "version_matrix: torch $v could not be installed: $(tail -n 1 "$out/install-$v.log")" >&2
    return 1
  }
  echo "installed torch $v in $(( $(date +%s) - t0 )) s ($(du -sh "$dir" | cut -f1))" >&2
  echo "$dir/bin/python"
}

rc=0
dirs=()
for v in "${wanted[@]}"; do
  if ! vpy="$(ensure_venv "$v")"; then rc=2; continue; fi
  if [ -n "$venv_only" ]; then echo "$vpy"; continue; fi
  "$vpy" "$here/version_matrix.py" --python "$vpy" --out-dir "$out/torch-$v" "${compact[@]}" || { [ "$rc" -eq 0 ] && rc=1; }
  [ -f "$out/torch-$v/summary.json" ] && dirs+=("$out/torch-$v")
done
[ -n "$venv_only" ] && exit "$rc"
if [ ${#dirs[@]} -gt 0 ]; then
  echo
  "$py" "$here/version_matrix.py" --table "${dirs[@]}" | tee "$out/table.md"
fi
echo "runs, logs and summaries: $out" >&2
exit "$rc"
