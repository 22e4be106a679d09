"""The console script's entry (``inductor_bench/entry.py``): a Ctrl-C while the command line's
modules load ends with one line and status 130, not a traceback from inside an import."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_console_script_and_python_m_start_at_the_entry():
    scripts = re.search(r"^\[project\.scripts\]\n((?:.+\n)+)", (ROOT / "pyproject.toml").read_text(), re.M)
    assert scripts is not None and scripts.group(1).strip() == 'inductor-bench = "inductor_bench.entry:main"'
    proc = subprocess.run([sys.executable, "-m", "inductor_bench", "--version"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.startswith("inductor-bench "), proc.stderr


def test_ctrl_c_while_the_commands_load_is_one_line_and_status_130():
    """Synthetic: an import hook raises KeyboardInterrupt where ``inductor_bench.cli`` loads,
    as a Ctrl-C in that import does."""
    code = textwrap.dedent("""
        import sys
        class CtrlC:
            def find_spec(self, name, path=None, target=None):
                if name == "inductor_bench.cli":
                    raise KeyboardInterrupt
        sys.meta_path.insert(0, CtrlC())
        from inductor_bench.entry import main
        main()
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 130
    assert proc.stderr == "inductor-bench: interrupted while starting; nothing was run\n"
