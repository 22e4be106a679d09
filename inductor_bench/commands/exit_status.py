"""The one exit status of a command whose run ended in more than one way, and its one line,
which says the others. The status is the first of, in order:

1. a stop (Ctrl-C, SIGTERM, SIGHUP: 128 + the signal): the user asked for it;
2. a ``--fail-on-regression`` gate's failing verdict (1 a regression, 5 no verdict): the merge
   gate's answer;
3. the run's own failure (3 the model, 4 a worker);
4. a file or stdout that could not be written once the run ended (74), or a file that appeared
   where it goes (2).

Its line goes on ``; also, `` with each of the others, but a stop that cut the run short says
only where what was measured is saved (and a write that then failed): the verdict and the
failures of a run cut short are the report's, which shows what the stop left undone."""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from pathlib import Path

from ..core.errors import BenchError, Interrupted, NotComparable, RegressionFound, UsageError
from ..runner.rundir import WriteError

GATE_VERDICTS = (RegressionFound, NotComparable)


def first_of(*outcomes: BenchError | None) -> BenchError | None:
    """Of a run's outcomes (a stop or its own error, a gate's failing verdict; None: none),
    the one that is the exit status, its line saying the others; None where there is none."""
    found = [e for e in outcomes if e is not None]
    stops = [e for e in found if isinstance(e, Interrupted)]
    if stops:
        return stops[0]
    found.sort(key=lambda e: not isinstance(e, GATE_VERDICTS))  # stable: the run's order kept
    return also(*found) if found else None


def also(first: BenchError, *others: object) -> BenchError:
    """``first``, its line going on with each of ``others`` (``...; also, ...``)."""
    return retold(first, "; also, ".join(str(e) for e in (first, *others))) if others else first


def retold(error: BenchError, line: str) -> BenchError:
    """``error`` (its kind, so its exit status), its line ``line``."""
    told = copy.copy(error)
    told.args = (line,)
    return told


@contextlib.contextmanager
def failure_first(failure: BenchError | None, threshold: float | None = None,
                  saved: Path | None = None) -> Iterator[None]:
    """The block writes what the run made, once it ended with ``failure`` (None: it did not fail;
    from ``first_of``). A write that fails (a full disk, 74; a file that appeared where it goes,
    2) leaves ``failure`` the exit status, its line naming the write too; with no failure, the
    write's failure is, its line saying the gate asked (``threshold``) passed. The write's part
    says where what was measured is ``saved``, unless a stop's line said it. A stop while writing
    is the exit status (128 + the signal), its line saying ``failure`` too."""
    try:
        yield
    except (WriteError, UsageError) as e:
        where = saved is not None and not isinstance(failure, Interrupted)
        written = f"{e}; what was measured is saved in {saved}" if where else str(e)
        if failure is not None:
            raise also(failure, written) from None
        if threshold is not None:
            written += f"; the gate passed: no significant regression above {threshold:g}%"
        raise retold(e, written) from None
    except KeyboardInterrupt:
        if isinstance(failure, Interrupted):
            raise failure from None
        said = f"; what was measured is saved in {saved}" if saved is not None else ""
        stop = Interrupted(f"interrupted as the report was written{said}")
        raise also(stop, failure) if failure is not None else stop from None
