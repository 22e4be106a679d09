"""The command line: options -> one call -> renderer -> exit code.

Each command is a function in ``inductor_bench/commands/<name>.py``, registered below.
Global options live in typer's context (``commands.options.Settings``). Project errors
become one line on stderr and their exit code; ``--verbose`` keeps the traceback.
"""

from __future__ import annotations

import sys
import traceback

import typer

try:  # typer 0.2x carries its own copy of click, and raises its exceptions
    from typer._click.exceptions import ClickException
except ImportError:  # older typer runs on click itself
    from click.exceptions import ClickException

from .commands import analyze, breakdown, compare, diff, kernel, report
from .commands.options import Settings
from .core.errors import BenchError

app = typer.Typer(
    name="inductor-bench",
    help="Where a TorchInductor-compiled model spends its time, kernel by kernel.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

for command in (
    breakdown.breakdown, report.report, analyze.analyze, kernel.kernel, compare.compare, diff.diff
):
    app.command()(command)


@app.callback()
def _root(
    ctx: typer.Context,
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="Show worker logs and full tracebacks on errors."
    ),
) -> None:
    ctx.obj.verbose = verbose


INTERNAL_ERROR = 70  # EX_SOFTWARE
INTERRUPTED = 130


def main(argv: list[str] | None = None) -> None:
    settings = Settings()
    try:
        app(args=argv, standalone_mode=False, obj=settings)
    except BenchError as e:
        _fail(settings, f"error: {e}", e.exit_code)
    except KeyboardInterrupt:
        _fail(Settings(), "interrupted", INTERRUPTED)
    except ClickException as e:  # usage errors: click's own message
        e.show()
        sys.exit(e.exit_code)
    except typer.Abort:  # click's form of Ctrl-C (or end of input at a prompt)
        _fail(Settings(), "interrupted", INTERRUPTED)
    except Exception as e:  # anything unexpected: one line, the traceback with --verbose
        msg = f"internal error: {type(e).__name__}: {e} (run with --verbose for the traceback)"
        _fail(settings, msg, INTERNAL_ERROR)


def _fail(settings: Settings, msg: str, code: int) -> None:
    if settings.verbose:
        traceback.print_exc()
    print(f"inductor-bench: {msg}", file=sys.stderr)
    sys.exit(code)


if __name__ == "__main__":
    main()
