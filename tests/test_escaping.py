"""One escaping policy per format: names from the user's model and from traces (model,
module and kernel names) may hold anything, and cannot break a table, start a heading, close a
code span or, in markdown a pull request renders, become HTML."""

from __future__ import annotations

import re

import pytest

from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat
from inductor_bench.render.breakdown import render_breakdown
from inductor_bench.render.doc import md_code, new_doc

HOSTILE = "k<img src=x onerror=alert(1)>|`x`\n# injected\n==="


def hostile_result() -> BreakdownResult:
    k = KernelStat(name=HOSTILE, category="cpp_pointwise", calls=1, ms=0.5)
    g = GraphResult(id="0-forward", role="forward", frame_id=0, kernels=[k], wall_ms=1.0, kernel_ms=0.5)
    return BreakdownResult(model=HOSTILE, device="cpu", graphs=[g])


def tables(text: str) -> list[list[str]]:
    """The markdown tables of ``text``: runs of lines starting with ``|``."""
    out: list[list[str]] = [[]]
    for ln in text.splitlines():
        if ln.startswith("|"):
            out[-1].append(ln)
        elif out[-1]:
            out.append([])
    return [t for t in out if t]


def test_markdown_keeps_names_inert():
    md = render_breakdown(hostile_result(), "markdown")
    outside_code = re.sub(r"(`+).+?\1", "", md)  # a code span shows its text as written
    assert "<img" not in outside_code and "&lt;img src=x onerror=alert(1)>" in md
    assert "| ``k<img src=x onerror=alert(1)>\\|`x` # injected ===`` |" in md  # a kernel name: code
    assert not [ln for ln in md.splitlines() if re.match(r"\s*(#+ injected|=+\s*$)", ln)], md
    found = tables(md)
    assert len(found) >= 2
    for rows in found:  # every row of a table has as many cells as its header
        cells = [len(re.split(r"(?<!\\)\|", r)) for r in rows]
        assert len(set(cells)) == 1, rows


def test_text_keeps_every_name_on_one_line():
    text = render_breakdown(hostile_result(), "text")
    assert not [ln for ln in text.splitlines() if ln.startswith("# injected") or ln == "==="], text
    assert "k<img src=x onerror=alert(1)>|`x` # injected ===" in text


def test_control_characters_in_a_name_cannot_reach_the_terminal():
    """A name with a terminal escape sequence (clear the screen), a tab and the freed bytes
    torch 2.5's Python tracer writes for some frames: each shows as U+FFFD, in text and
    markdown alike."""
    r = hostile_result()
    r.graphs[0].kernels[0].name = "k\x1b[2J\tx\x10\x0f|\x7f"
    for fmt_name in ("text", "markdown"):
        out = render_breakdown(r, fmt_name)
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", out), fmt_name
        assert "k\ufffd[2J\ufffdx\ufffd\ufffd" in out, fmt_name


@pytest.mark.parametrize("name,span", [
    ("plain", "`plain`"), ("a`b", "``a`b``"), ("``x", "``` ``x ```"), ("a\nb", "`a b`"),
])
def test_a_code_span_holds_any_name(name, span):
    assert md_code(name) == span


def test_markdown_table_cells_and_headings():
    doc = new_doc("markdown")
    doc.title("m\n# x")
    doc.table([["a|b", "<b>", "`c|d`"]], ["h1", "h2", "h3"])
    out = doc.render()
    assert out.splitlines()[0] == "## m # x"
    assert "| a\\|b | &lt;b> | `c\\|d` |" in out


def _html(markdown: str) -> str:
    markdown_it = pytest.importorskip("markdown_it")
    return markdown_it.MarkdownIt("commonmark").enable("table").render(markdown)


def test_markdown_lines_and_quotes_keep_their_line_breaks():
    doc = new_doc("markdown")
    doc.paragraph("baseline config: XBLOCK=1", "max-autotune config: XBLOCK=2")
    doc.paragraph("`inductor-bench diff` a vs b", "> warning: one", "> warning: two")
    doc.paragraph("- a", "- b", "run directory: r")
    md = doc.render()
    assert md == (
        "baseline config: XBLOCK=1  \nmax-autotune config: XBLOCK=2\n\n"
        "`inductor-bench diff` a vs b  \n> warning: one  \n> warning: two\n\n"
        "- a\n- b  \nrun directory: r\n"
    )
    assert _html(md) == (
        "<p>baseline config: XBLOCK=1<br />\nmax-autotune config: XBLOCK=2</p>\n"
        "<p><code>inductor-bench diff</code> a vs b</p>\n"
        "<blockquote>\n<p>warning: one<br />\nwarning: two</p>\n</blockquote>\n"
        "<ul>\n<li>a</li>\n<li>b<br />\nrun directory: r</li>\n</ul>\n"
    )


def test_source_lines_in_a_markdown_table_are_code():
    doc = new_doc("markdown")
    doc.table([[doc.code('h = self.layers["a|b"](x)')], [doc.code("y = x**2 + z**2")]], ["source"])
    md = doc.render()
    assert md.splitlines()[2:] == ['| `h = self.layers["a\\|b"](x)` |', "| `y = x**2 + z**2`            |"]
    html = _html(md)
    assert '<td style="text-align:left"><code>h = self.layers[&quot;a|b&quot;](x)</code></td>' in html
    assert '<td style="text-align:left"><code>y = x**2 + z**2</code></td>' in html
    assert "<a " not in html and "<strong>" not in html


def test_markdown_shows_names_as_written_not_as_emphasis():
    """A frame's ``__getattr__``, an op's ``_scaled_dot_product...``, a module's ``a*b*c``, a
    backslash, a ``~`` before each of two figures, an entity-like ``&lt;`` and brackets a
    parenthesis follows (a C++ frame's ``str[abi:cxx11](int)``, no link): rendered as
    CommonMark with GitHub's strikethrough, each reads as written; names inside a word keep
    their underscores unescaped (``triton_poi_fused_add_0``)."""
    names = ["torch/utils/_config_module.py(436): __getattr__", "fused: _scaled_dot_product_for_…",
             "fc<1>&q'\\s*a*b*", "~35% ~40%", "x &lt; y", "triton_poi_fused_add_0",
             "std::basic_string<char> c10::str[abi:cxx11](int)", "[link](http://example.com)"]
    doc = new_doc("markdown")
    doc.table([[n] for n in names], ["name"])
    doc.paragraph(*names)
    md = doc.render()
    assert "| triton_poi_fused_add_0" in md
    markdown_it = pytest.importorskip("markdown_it")
    html = markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(md)
    for tag in ("<strong>", "<em>", "<s>", "<del>", "<a "):
        assert tag not in html, tag
    import html as html_lib

    cells = [html_lib.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", html)]
    assert cells == names
    assert html_lib.unescape(html).count("torch/utils/_config_module.py(436): __getattr__") == 2


def test_a_kernel_s_cut_origin_ops_show_whole_on_hover():
    """A breakdown's origin ATen cell cut to its width holds the whole list on hover (HTML)."""
    ops = [f"aten.op_number_{i}" for i in range(8)]
    k = KernelStat(name="cpp_fused_x_0", category="cpp_pointwise", calls=1, ms=0.5, aten_ops=ops)
    g = GraphResult(id="0-forward", role="forward", frame_id=0, kernels=[k], wall_ms=1.0, kernel_ms=0.5)
    page = render_breakdown(BreakdownResult(model="m", device="cpu", graphs=[g]), "html")
    assert f'<span title="{", ".join(ops)}">' in page
