"""A command a message gives to run (written between backticks, as on stderr) reads as code in
each format: markdown keeps the code span, HTML writes it as <code> (its text escaped), text
keeps the line as it is. The diff is the recorded `models/mlp.py --train --device cpu` run of
2026-12-07 (torch 2.13.0+cpu, tests/fixtures/results/README.md) against a copy with its graphs'
calls taken out, as an older run saved it: the line says to measure it again, the command
given. The HTML page had shown the backticks."""

from __future__ import annotations

import json
import re

import pytest

from inductor_bench.cli import main
from inductor_bench.render.doc import new_doc

from .conftest import FIXTURES

RUN = FIXTURES / "results" / "cpu_mlp_train_20261207" / "breakdown.json"
COMMAND = "inductor-bench breakdown mlp.py --train --batch-size 64 --device cpu"
ADVICE = "measure base again with this version, {} on base's code"


@pytest.fixture
def old_base(tmp_path):
    data = json.loads(RUN.read_text())
    for g in data["graphs"]:
        g["calls"] = None
    path = tmp_path / "breakdown.json"
    path.write_text(json.dumps(data))
    return path


def _diff(capsys, base, fmt: str) -> str:
    main(["diff", str(base), str(RUN), "--format", fmt])
    return capsys.readouterr().out


def test_html_writes_the_command_as_code(old_base, capsys):
    page = _diff(capsys, old_base, "html")
    body = page.split("<main>")[1]
    assert body.count(ADVICE.format(f"<code>{COMMAND}</code>")) == 2  # the verdict and the note
    assert "`" not in re.sub(r"<script.*?</script>", "", body, flags=re.S)


def test_markdown_keeps_the_code_span(old_base, capsys):
    assert _diff(capsys, old_base, "markdown").count(ADVICE.format(f"`{COMMAND}`")) == 2


def test_text_keeps_the_line_as_written(old_base, capsys):
    assert _diff(capsys, old_base, "text").count(ADVICE.format(f"`{COMMAND}`")) == 2


def test_an_html_code_span_is_escaped_and_a_lone_backtick_is_text():
    doc = new_doc("html")
    doc.paragraph("run `a <b> & c` now", "it's a ` alone", "``x ` y`` then `z`")
    body = doc.render().split("<main>")[1]
    assert "run <code>a &lt;b&gt; &amp; c</code> now<br>" in body
    assert "it's a ` alone<br>" in body
    assert "<code>x ` y</code> then <code>z</code>" in body
