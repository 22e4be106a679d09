"""Running the command line with torch and triton unimportable: what `report` and its
re-analysis promise (no torch, no GPU). Run as ``python -c CLI_WITHOUT_TORCH ARGS...``."""

CLI_WITHOUT_TORCH = r"""
import sys
class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("torch", "triton"):
            raise ImportError(f"{name} is blocked in this test")
        return None
sys.meta_path.insert(0, Blocker())
from inductor_bench.cli import main
main(sys.argv[1:])
"""
