"""The README's test command installs the suite with `pip install -e ".[test]"`: every library a
test imports or skips without must come with that install, or the test is skipped on a fresh
machine and measures nothing (the slow test of the host ceilings against numpy was skipped
there: torch's CPU wheel does not bring numpy, nor did the test extra)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Modules a test imports or skips without that a dependency brings with it, not named itself.
BROUGHT_BY = {"markdown_it": "typer"}  # typer -> rich -> markdown-it-py


def _names(block: str) -> set[str]:
    """The distribution names in a TOML list of requirement strings."""
    return {re.split(r"[<>=;\[ ]", req, maxsplit=1)[0].lower() for req in re.findall(r'"([^"]+)"', block)}


def _installed_by_the_test_extra() -> set[str]:
    text = (ROOT / "pyproject.toml").read_text()
    deps = re.search(r"^dependencies = \[\n(.*?)^\]", text, re.M | re.S)
    test = re.search(r"^test = \[(.*?)\]", text, re.M | re.S)
    assert deps is not None and test is not None
    return _names(re.sub(r"#.*", "", deps.group(1))) | _names(test.group(1))


def test_every_library_a_test_skips_without_comes_with_the_test_extra():
    skipped_without = set()
    for path in (ROOT / "tests").glob("*.py"):
        skipped_without |= set(re.findall(r'importorskip\("([A-Za-z_]+)', path.read_text()))
    assert "numpy" in skipped_without
    installed = _installed_by_the_test_extra()
    missing = sorted(
        m for m in skipped_without
        if m.replace("_", "-") not in installed and BROUGHT_BY.get(m) not in installed
    )
    assert missing == [], f'not installed by pip install -e ".[test]": {missing}'
