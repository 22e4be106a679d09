"""A recorded graph's compiled module and lowering record, as gzipped in the fixtures: the
module's text, the record, the parsed module and its calls. Without torch."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from inductor_bench.core.callsites import parse_calls
from inductor_bench.core.modparse import parse_module


def recorded_graph(gdir: Path):
    text = gzip.decompress((gdir / "module.py.gz").read_bytes()).decode()
    record = json.loads(gzip.decompress((gdir / "sources.json.gz").read_bytes()))
    module = parse_module(text)
    return text, record, module, parse_calls(text, module)
