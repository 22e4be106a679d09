"""The command line: options -> one call -> renderer -> exit code.

Each command lives in ``inductor_bench/commands/<name>.py`` and registers itself on ``app``.
Project errors become one line on stderr and a non-zero exit; ``--verbose`` keeps the
traceback.
"""

from __future__ import annotations

import sys
import traceback

import typer

from .errors import BenchError

app = typer.Typer(
    name="inductor-bench",
    help="Where a TorchInductor-compiled model spends its time, kernel by kernel.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

_state = {"verbose": False}


@app.callback()
def _root(
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="Show worker logs and full tracebacks on errors."
    ),
) -> None:
    _state["verbose"] = verbose


def verbose() -> bool:
    return _state["verbose"]


def _register() -> None:
    # Imported for their side effect: each adds its command(s) to ``app``.
    from .commands import breakdown, compare, diff, kernel, report  # noqa: F401


def main(argv: list[str] | None = None) -> None:
    _register()
    try:
        app(args=argv, standalone_mode=False)
    except BenchError as e:
        if _state["verbose"]:
            traceback.print_exc()
        print(f"inductor-bench: error: {e}", file=sys.stderr)
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        print("inductor-bench: interrupted", file=sys.stderr)
        sys.exit(130)
    except SystemExit:
        raise
    except Exception as e:  # click's own usage errors and anything unexpected
        import click

        if isinstance(e, click.exceptions.ClickException):
            e.show()
            sys.exit(e.exit_code)
        if isinstance(e, click.exceptions.Abort):
            sys.exit(1)
        if _state["verbose"]:
            traceback.print_exc()
        print(
            f"inductor-bench: internal error: {type(e).__name__}: {e} (run with --verbose for the traceback)",
            file=sys.stderr,
        )
        sys.exit(70)


if __name__ == "__main__":
    # Run as `python -m inductor_bench.cli`: the commands register on the package's module,
    # not on this `__main__` copy of it.
    from inductor_bench.cli import main as _main

    _main()
