"""A stopped run's error lines as a diff warns of them: ``interrupted`` with what the stop cost
it, the lines that say so (``not profiled: 0-backward``; ``stopped before every process
measured: 0-forward (windows of 1 of 2 processes) ...``) joined to it, so that ``head:
interrupted`` never stands alone where every graph was measured. Pure."""

from __future__ import annotations

from .processes import LOST_WINDOWS
from .step import NOT_PROFILED

INTERRUPTED = "interrupted"
# a stopped breakdown that measured every graph and recorded nothing lost (saved by a version
# that did not record a later process's windows lost, or stopped after its graphs were measured)
NOTHING_RECORDED = "every graph was measured; nothing it lost is recorded"


def stop_lines(errors: list[str], graphs_measured: bool) -> list[str]:
    """``errors`` with ``interrupted`` saying what was lost: ``interrupted: not profiled:
    0-backward``; where no line says, and every graph was measured (``graphs_measured``),
    ``interrupted (every graph was measured; nothing it lost is recorded)``."""
    if INTERRUPTED not in errors:
        return list(errors)
    lost = [e for e in errors if e.startswith((NOT_PROFILED, LOST_WINDOWS))]
    rest = [e for e in errors if e != INTERRUPTED and e not in lost]
    if lost:
        return [f"{INTERRUPTED}: {'; '.join(lost)}", *rest]
    return [f"{INTERRUPTED} ({NOTHING_RECORDED})" if graphs_measured else INTERRUPTED, *rest]
