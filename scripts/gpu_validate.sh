#!/usr/bin/env bash
# The GPU validation, in parts that each fit one device command (a device command may run 10
# minutes; a session has 15 minutes of device time, the machine's start included, so a session
# runs one part or two): the breakdowns of the example models checked against independent
# measurements, kernel re-tuning, compare, the load readings, the disturbance benchmark, the
# GPU tests.
#
#   scripts/gpu_validate.sh --list-parts                    the parts, their steps, caps and device calls
#   scripts/gpu_validate.sh --part N [OPTIONS] OUT_DIR      on a CUDA machine: part N within its limit
#   scripts/gpu_validate.sh --part N --dry-run OUT_DIR      on CPU: that part's plumbing
#   scripts/gpu_validate.sh --fetch-wheels                  here, with PyPI: wheels the GPU image lacks
#
# The device calls, in this order, each after the one before has returned, grouped into GPU
# sessions (scripts/gpu_validate_parts.py holds the limits and the sessions; --list-parts
# prints the same): part 1 in one session, part 2 in the next, parts 3 and 4 in the next, part 5
# in the next:
#   run(command="scripts/gpu_validate.sh --part 1 $OUT/p1", carry=[".whl"], timeout_s=500)
#   run(command="scripts/gpu_validate.sh --part 2 $OUT/p2", carry=[".whl"], timeout_s=500)
#   run(command="scripts/gpu_validate.sh --part 3 $OUT/p3", carry=[".whl"], timeout_s=320)
#   run(command="scripts/gpu_validate.sh --part 4 $OUT/p4", carry=[".whl"], timeout_s=320)
#   run(command="scripts/gpu_validate.sh --part 5 $OUT/p5", carry=[".whl"], timeout_s=500)
# Part 1 is what matters most: mlp and transformer_block training in mode default with every
# independent check, and kernel --max-autotune; part 2 the same in mode reduce-overhead and
# compare; part 3 the load readings and the disturbance benchmark; part 4 the other models;
# part 5 pytest -m gpu. Without --part every part runs in turn (a machine without the 10-minute
# limit).
#
# OUT_DIR (new or empty) receives report.md, results.json, fixtures.tar.gz, logs.tar.gz and
# console.log: five files, since a device machine returns at most eight. Every check prints
# `PASS|FAIL|SKIPPED name: numbers`. Exit status: 0 no check failed, 1 a check failed or the run
# was stopped, 2 no GPU (without --dry-run; one line, nothing run), bad arguments, OUT_DIR not
# empty. OPTIONS: scripts/gpu_validate.py --help (--only, --skip, --models, --jobs ...).
#
# Nothing is installed: the checkout runs in place (this repository first on PYTHONPATH). The
# GPU image has torch, triton, typer, tabulate, pytest and nvidia-ml-py but not msgspec: run
# --fetch-wheels here first and carry .whl to the device; missing packages are installed from
# there into a private directory. Environment: PYTHON (default python3), GPU_VALIDATE_PY_VERSION
# (the device's Python for --fetch-wheels, default 3.12).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
py="${PYTHON:-python3}"
command -v "$py" >/dev/null 2>&1 || py=python

if [ "${1:-}" = "--fetch-wheels" ]; then
  # msgspec is required by the trace reader; isal is optional (faster gzip).
  exec "$py" -m pip download -q --no-deps --only-binary=:all: \
    --python-version "${GPU_VALIDATE_PY_VERSION:-3.12}" --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d "$root/.whl" msgspec isal
fi

export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
dry=0
limit=0
prev=""
for arg in "$@"; do
  case "$arg" in
    --dry-run|--list-parts|-h|--help) dry=1 ;;
  esac
  part=""
  case "$prev" in --part) part="$arg" ;; esac
  case "$arg" in --part=*) part="${arg#--part=}" ;; esac
  if [ -n "$part" ]; then
    limit="$("$py" "$here/gpu_validate_parts.py" limit "$part")" || exit 2
  fi
  prev="$arg"
done
[ "$dry" = 1 ] && exec "$py" "$here/gpu_validate.py" "$@"
# Without --part: every part's limit in turn.
[ "$limit" = 0 ] && limit="$("$py" - "$here" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import gpu_validate_parts as p
print(f"{sum(x.limit_s for x in p.PARTS):.0f}")
PY
)"
# The driver keeps the part's budget and a watchdog; this is the last resort, inside the
# device command's timeout_s.
exec timeout -k 10 "${GPU_VALIDATE_HARD_LIMIT_S:-$limit}" "$py" "$here/gpu_validate.py" "$@"
