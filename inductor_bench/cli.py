"""The command line: options -> one call -> renderer -> exit code.

Each command is a function in ``inductor_bench/commands/<name>.py``, imported only when it
runs (``commands/table.py``). Global options live in typer's context
(``commands.global_settings``). Project errors become one line on stderr and their exit code;
``--verbose`` keeps the traceback.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import traceback

import typer
from typer.completion import completion_init

try:  # typer 0.2x carries its own copy of click, and raises its exceptions
    from typer._click.exceptions import ClickException
except ImportError:  # older typer runs on click itself
    from click.exceptions import ClickException

from .commands.global_settings import Settings
from .commands.table import SHORT_HELP, LazyGroup
from .core.errors import BenchError, Interrupted, UsageError
from .runner import stop
from .runner.worker import scrubbed_variables

__all__ = ["SHORT_HELP", "app", "main"]  # SHORT_HELP: the command list, read by the tests

# What each exit status means, in every command (README.md's table says more).
EXIT_STATUS = (
    "Exit status: 0 ok; 1 a significant regression (--fail-on-regression); 2 bad input or device; "
    "3 the model or its compilation failed; 4 a worker crashed or timed out; 5 not comparable, no "
    "verdict; 70 a bug in inductor-bench (-v shows the traceback); 74 a file or stdout could not be "
    "written; 128 + the signal when stopped (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP)."
)

app = typer.Typer(
    name="inductor-bench",
    help="Where a TorchInductor-compiled model spends its time, kernel by kernel.",
    epilog=EXIT_STATUS,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # click's own help: wrapped to the terminal, never cut short with an ellipsis, no boxes
    rich_markup_mode=None,
    cls=LazyGroup,  # each command's module imported when it runs, not all of them to start
)

# Shell completion (``eval "$(_INDUCTOR_BENCH_COMPLETE=source_bash inductor-bench)"``): typer
# registers the shells only for an app that adds --install-completion, which this one leaves out.
completion_init()


def _print_version(asked: bool) -> None:
    if asked:
        from .commands.version import version_text

        typer.echo(version_text())
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="Show worker logs and full tracebacks on errors."
    ),
    _version: bool = typer.Option(
        False, "--version", is_eager=True, callback=_print_version,
        help="Show the versions of the tool, torch (and the CUDA or ROCm it was built with), Triton "
        "and Python, and exit.",
    ),
) -> None:
    ctx.obj.verbose = verbose


INTERNAL_ERROR = 70  # EX_SOFTWARE
# Typer (0.16 on) turns a KeyboardInterrupt that leaves a command into this return value when
# not standalone, instead of raising it: a stop in a phase after the measurements (the
# ceilings, --autotune-top) would otherwise end the run with exit 0 and no line.
TYPER_INTERRUPTED = 130


def main(argv: list[str] | None = None) -> None:
    settings = Settings()
    whole_process = argv is None  # the command line itself, not a call from Python
    if whole_process:
        stop.install()  # SIGTERM and SIGHUP stop a run as Ctrl-C does
        stop.adopt_orphans()
        settings.dropped_env = scrubbed_variables()
    try:
        _run(argv, settings)
    finally:
        if whole_process:
            stop.end_leftovers()
            _settle_stdout()


def _run(argv: list[str] | None, settings: Settings) -> None:
    try:
        returned = app(args=argv, standalone_mode=False, obj=settings, prog_name="inductor-bench")
        if stop.received() is not None or returned == TYPER_INTERRUPTED:
            raise KeyboardInterrupt  # the stop is reported below, with its exit status
    except Interrupted as e:
        _fail(settings, f"error: {e}{_by_signal()}", stop.exit_status(stop.received()))
    except BenchError as e:
        _fail(settings, f"error: {e}", e.exit_code)
    except KeyboardInterrupt:
        _fail(Settings(), f"interrupted{_by_signal()}", stop.exit_status(stop.received()))
    except ClickException as e:  # usage errors: click's message, on one line
        if type(e).__name__ == "NoArgsIsHelpError":  # no command given: the help itself
            e.show()
            sys.exit(e.exit_code)
        _fail(settings, f"error: {_usage_line(e)}", e.exit_code)
    except typer.Abort:  # click's form of Ctrl-C (or end of input at a prompt)
        _fail(Settings(), f"interrupted{_by_signal()}", stop.exit_status(stop.received()))
    except OSError as e:  # the machine, not the tool: a path it cannot read or write
        where = f"{e.filename}: " if e.filename else ""
        from .runner.rundir import WriteError

        _fail(settings, f"error: {where}{e.strerror or e}", WriteError.exit_code)
    except RecursionError:
        _fail(settings, "error: input nested too deeply to read", UsageError.exit_code)
    except Exception as e:  # anything unexpected: one line, the traceback with --verbose
        msg = f"internal error: {type(e).__name__}: {e} (run with --verbose for the traceback)"
        _fail(settings, msg, INTERNAL_ERROR)


def _usage_line(e: ClickException) -> str:
    """Click's message of a usage error, one line, with where to read the usage: not click's
    three lines of usage text (``Value error, `` is how typer's parser prefixes a choice)."""
    message = " ".join(e.format_message().replace("Value error, ", "").split())
    ctx = getattr(e, "ctx", None)
    option = getattr(e, "option_name", None) if type(e).__name__ == "NoSuchOption" else None
    hint = _global_option_hint(option, ctx)
    if hint:  # click's guess of a near name (--version: "Possible options: --json") misleads
        message = f"No such option: {option}{hint}"
    elif option and ctx is not None and ctx.info_name == "breakdown":  # a script's own, misplaced
        message += (f" (a script's own arguments go after --: inductor-bench breakdown SCRIPT.py -- "
                    f"{option} ...)")
    return f"{message} (`{ctx.command_path} --help` shows the usage)" if ctx is not None else message


def _global_option_hint(option: str | None, ctx) -> str:
    """A global option given after a command (``report RUN -v``) is no option of the command:
    say where it goes, not only that the command has no such option."""
    if ctx is None or ctx.parent is None:
        return ""
    if option in ("-v", "--verbose"):
        return f" (-v/--verbose goes before the command: inductor-bench {option} {ctx.info_name} ...)"
    if option == "--version":
        return " (the tool's version: inductor-bench --version, with no command)"
    return ""


def _settle_stdout() -> None:
    """What is left in stdout's buffer written now; if it cannot be (a full disk, a closed
    pipe), dropped, so that Python's own flush at exit prints no second error."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except (OSError, ValueError):
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _by_signal() -> str:
    """Which signal stopped the run, when it was not Ctrl-C."""
    sig = stop.received()
    return f" (by {signal.Signals(sig).name})" if sig not in (None, signal.SIGINT) else ""


def _fail(settings: Settings, msg: str, code: int) -> None:
    # a closed stderr (``2>&1 | head``) loses the line, not the exit status: raised here, its
    # BrokenPipeError would end the process with Python's 1, which reads as a regression
    with contextlib.suppress(OSError, ValueError):
        if settings.verbose:
            traceback.print_exc()
        print(f"inductor-bench: {msg}", file=sys.stderr, flush=True)
    sys.exit(code)


if __name__ == "__main__":
    main()
