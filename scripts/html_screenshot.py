"""The README's screenshot of a breakdown page: a real CPU breakdown of ``models/mlp.py``
(``tests/fixtures/results/cpu_mlp_train_quiet``, or the result or run directory given with
``--result``) rendered as HTML, opened in headless Chromium the way
``tests/test_html_browser.py`` opens it, and the part a reader looks at first saved as
``docs/html-breakdown.png``: from the time by category down to the top kernels' chart.

Usage: ``python scripts/html_screenshot.py [--dark] [--result DIR] [OUT.png]`` from the
repository root (needs ``apt-get install chromium chromium-driver`` and
``pip install -e '.[test]'``).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

try:
    from tests.test_html import RESULTS, run  # noqa: E402
    from tests.test_html_browser import Browser, find_browser  # noqa: E402
except ImportError as missing:  # the test extra (pytest) is not installed
    sys.exit(f"html_screenshot.py needs the test extra (pip install -e '.[test]'): {missing}")

WIDTH = 1280  # the top kernels' table whole: its % peak and source columns
FIRST = "Time by category"  # from this section's heading
CHARTS_SHOWN = 3  # down to the end of the third chart (the top kernels)
QUIET = RESULTS / "cpu_mlp_train_quiet"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="The README's screenshot of a breakdown page.")
    parser.add_argument("--dark", action="store_true", help="the page in the dark colour scheme")
    parser.add_argument("--result", type=Path, default=QUIET, help="a result or run directory")
    parser.add_argument("out", type=Path, nargs="?", help="the PNG (default: docs/html-breakdown[-dark].png)")
    args = parser.parse_args(argv)
    dark, result = args.dark, args.result
    out = args.out or ROOT / "docs" / ("html-breakdown-dark.png" if dark else "html-breakdown.png")
    found = find_browser()
    if isinstance(found, str):
        print(f"no browser: {found}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "breakdown.html"
        run(["report", str(result), "--html", str(page)])
        b = Browser(*found, width=WIDTH, height=1000)
        try:
            if dark:
                b.dark()
            load = b.open(page)
            assert not load.errors, load.errors
            top, bottom = b.driver.execute_script(
                "const h = [...document.querySelectorAll('h2')].find(e => e.textContent.startsWith("
                f"'{FIRST}'));"
                f"return [h.getBoundingClientRect().top + window.scrollY, document.querySelectorAll('figure')"
                f"[{CHARTS_SHOWN - 1}].getBoundingClientRect().bottom + window.scrollY]"
            )
            b.screenshot(out, clip=(0, int(top) - 12, WIDTH, int(bottom - top) + 24))
        finally:
            b.quit()
    if shutil.which("pngquant"):  # 256 colours: a third of the size, no visible change
        subprocess.run(
            ["pngquant", "--force", "--skip-if-larger", "--output", str(out), "256", str(out)], check=False
        )
    print(f"{out}: {out.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
