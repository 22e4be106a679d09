"""The ``inductor-bench`` console script: the command line (``cli.py``) loaded, then run.

Loading the commands takes a moment (typer, click, the renderers); a Ctrl-C in it would stop
Python inside an import with a traceback. Here it ends with one line and status 130, as a run
stopped by Ctrl-C does: nothing had started.
"""

from __future__ import annotations

import sys


def main() -> None:
    try:
        from .cli import main as run
    except KeyboardInterrupt:
        print("inductor-bench: interrupted while starting; nothing was run", file=sys.stderr)
        sys.exit(130)
    run()
