"""`python -m inductor_bench` is `inductor-bench`.

``-m`` puts the working directory first on ``sys.path``: a ``queue.py`` or ``logging.py`` there
(a model's directory) would stand in for the standard library's as the tool imports it. The
package is found by now; the working directory goes to the end, where the console script,
which runs from its own directory, does not have it at all."""

import os
import sys

if sys.path and not getattr(sys.flags, "safe_path", False) and sys.path[0] == os.getcwd():
    sys.path.append(sys.path.pop(0))

from .entry import main  # noqa: E402

main()
