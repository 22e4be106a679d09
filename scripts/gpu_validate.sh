#!/usr/bin/env bash
# The whole GPU validation in one command (issue #9): GPU tests, breakdowns of the example
# models, kernel re-tuning, compare, and checks against independent measurements.
#
#   scripts/gpu_validate.sh [OPTIONS] OUT_DIR            on a CUDA machine: ends within 9 minutes
#   scripts/gpu_validate.sh --dry-run [OPTIONS] OUT_DIR  on CPU: the script's own plumbing
#   scripts/gpu_validate.sh --fetch-wheels               here, with PyPI: wheels the GPU image lacks
#
# OUT_DIR (new or empty) receives report.md, results.json, fixtures.tar.gz, logs.tar.gz and
# console.log: five files, since a device machine returns at most eight. Every check prints
# `PASS|FAIL|SKIPPED name: numbers`. Exit status: 0 no check failed, 1 a check failed or the run
# was stopped, 2 no GPU (without --dry-run; one line, nothing run), bad arguments, OUT_DIR not
# empty. OPTIONS: scripts/gpu_validate.py --help (--budget, --models, --only, --skip, --jobs ...).
#
# Nothing is installed: the checkout runs in place (this repository first on PYTHONPATH). The
# GPU image has torch, triton, typer, tabulate and pytest but not msgspec: run --fetch-wheels
# here first and carry .whl to the device; missing packages are installed from there into a
# private directory. Environment: PYTHON (default python3), GPU_VALIDATE_PY_VERSION (the
# device's Python for --fetch-wheels, default 3.12).
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
case " $* " in
  *" --dry-run "*) exec "$py" "$here/gpu_validate.py" "$@" ;;
esac
# The driver keeps its own budget (500 s) and watchdog; this is the last resort, inside the
# 10 minutes a device command may run.
exec timeout -k 10 "${GPU_VALIDATE_HARD_LIMIT_S:-570}" "$py" "$here/gpu_validate.py" "$@"
