"""The page around an HTML report: one self-contained file. Its style sheet (light and dark, by
``prefers-color-scheme``), the colour of every series (a kernel category has the same colour on
every chart of every page), a script of about 60 lines (sortable tables, bar tooltips) that the
page does not need in order to be read, and a Content-Security-Policy that lets the page load
nothing at all: no font, image, style or script from anywhere, its own inline ones excepted.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from urllib.parse import quote

from ..core.categories import CATEGORIES
from ..core.vocab import Change, CompileMode, Tuning, Verdict
from .chart_model import Series

# Kernel categories, in the order of ``core/categories.py``. Related kinds share a hue (C++ is
# the lighter shade of its Triton kind); each is still its own colour. Mid-tones that read on
# a white and on a near-black background.
CATEGORY_COLOURS: dict[str, str] = {
    "triton_pointwise": "#4e79a7",
    "triton_reduction": "#f28e2b",
    "triton_persistent_reduction": "#e15759",
    "triton_split_scan": "#76b7b2",
    "triton_template": "#59a14f",
    "triton_foreach": "#edc948",
    "triton_other": "#b07aa1",
    "cpp_pointwise": "#8cb8e3",
    "cpp_reduction": "#ffb870",
    "cpp_template": "#8cd17d",
    "cpp_attention_template": "#e8a0bf",
    "cpp_kernel": "#c7c7c7",
    "extern_gemm": "#9c755f",
    "extern_conv": "#ff9da7",
    "extern_attention": "#d37295",
    "extern_custom": "#b6992d",
    "communication": "#499894",
    "memcpy": "#bab0ac",
    "memset": "#79706e",
    "extern_other": "#d4a6c8",
    "host_compiled": "#a5c8e1",
    "host_framework": "#c9b48c",
}
UNKNOWN_COLOUR = "#a0a4aa"

SERIES_COLOURS: dict[str, str] = {
    Series.BUSY: "#5e60ce",
    Series.IDLE: "var(--idle)",
    Series.OTHER_WORK: "#b3b4ee",  # busy's hue, paler: the device busy, not with this step's work
    Series.WAITING: "#f4a261",
    Series.QUEUED: "#9d8df1",
    Series.NOTHING: "var(--idle)",
    Series.FASTEST: "#2da44e",
    Series.PICKED: "#3b6fb6",
    Series.CONFIG: "#a0a4aa",
    Series.BASE: "#8c8c8c",
    Series.HEAD: "#3b6fb6",
    Change.SLOWER: "#d73a49",
    Change.FASTER: "#2da44e",
    Change.ADDED: "#f66a0a",
    Change.REMOVED: "#0a9396",
    Verdict.WITHIN_NOISE: "#a0a4aa",
    Verdict.TOO_FEW: "#c8ccd0",
    Verdict.SAME_CODE: "#b4b8bd",  # greys too: no change of the code's speed to show
    Verdict.CALLS_CHANGED: "#7d8590",
    Verdict.OTHER_WORKLOAD: "#b4b8bd",  # no change judged across two workloads
    CompileMode.EAGER: "#8c8c8c",
    CompileMode.DEFAULT: "#3b6fb6",
    Tuning.BASELINE: "#3b6fb6",
    CompileMode.MAX_AUTOTUNE: "#b5179e",
    CompileMode.REDUCE_OVERHEAD: "#f77f00",
    CompileMode.MAX_AUTOTUNE_NO_CUDAGRAPHS: "#7209b7",
}


# A series with no colour of its own (a comparison's column of several model files,
# "mlp:default", "mlp_slow25:default"; a mode only the installed torch lists): the next of these, in the order
# the chart meets them, so that no bar is drawn in the SVG's default black.
EXTRA_COLOURS = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666")


def series_class(key: str) -> str:
    """The CSS class that colours a series: ``k-`` and the key with anything odd as ``-``."""
    return "k-" + re.sub(r"[^A-Za-z0-9_-]", "-", key)


def series_classes(keys: list[str]) -> dict[str, str]:
    """Each series key of one chart -> its class: its own colour's, else the next extra one."""
    out: dict[str, str] = {}
    extra = 0
    for k in keys:
        if k in out:
            continue
        if k in CATEGORIES or k in SERIES_COLOURS:
            out[k] = series_class(k)
        else:
            out[k] = f"x-{extra % len(EXTRA_COLOURS)}"
            extra += 1
    return out


def _colour_rules() -> str:
    colours = {**{k: CATEGORY_COLOURS.get(k, UNKNOWN_COLOUR) for k in CATEGORIES}, **SERIES_COLOURS}
    rules = [f".{series_class(k)}{{fill:{c};background:{c}}}" for k, c in colours.items()]
    rules += [f".x-{i}{{fill:{c};background:{c}}}" for i, c in enumerate(EXTRA_COLOURS)]
    return "\n".join(rules)


STYLE = """
:root{color-scheme:light dark;--bg:#fff;--fg:#1f2328;--muted:#59636e;--line:#d0d7de;
--row:#f6f8fa;--link:#0969da;--alert:#cf222e;--idle:#d5d8dc;--code:#eff1f3}
@media screen and (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;
--line:#3d444d;--row:#151b23;--link:#4493f8;--alert:#ff7b72;--idle:#4a5059;--code:#1f242c}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,
"Segoe UI",Roboto,"DejaVu Sans",sans-serif}
main{max-width:2400px;margin:0 auto;padding:16px 24px 48px}
p:not(.lines){max-width:75em}
h1{font-size:22px;margin:8px 0 12px}h2{font-size:17px;margin:28px 0 8px;
border-bottom:1px solid var(--line);padding-bottom:4px}
p,ul{margin:8px 0}a{color:var(--link)}h1,h2,p,li,figcaption{overflow-wrap:break-word}
code{font:12.5px ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace;
background:var(--code);padding:1px 4px;border-radius:4px}
pre{font:12.5px ui-monospace,Menlo,Consolas,monospace;overflow-x:auto}
.alert{color:var(--alert)}.fine{color:var(--muted);font-size:12.5px}
.section{font-size:16px;font-weight:600}.quote{border-left:3px solid var(--line);padding-left:8px;
display:inline-block}.caption{margin:16px 0 4px;font-weight:600}
.scroll{overflow-x:auto;margin:6px 0}
table{border-collapse:collapse;font-size:13px}
th,td{padding:3px 10px;border-bottom:1px solid var(--line);text-align:left;white-space:nowrap}
td.w{white-space:normal;overflow-wrap:break-word;min-width:18em}
th{font-weight:600;position:relative}td.r,th.r{text-align:right;font-variant-numeric:tabular-nums}
tbody tr:nth-child(even){background:var(--row)}
.g tbody tr:nth-child(even){background:none}.g tbody:nth-of-type(even) tr{background:var(--row)}
.g tbody tr:not(:last-child) td{border-bottom-color:transparent}
tfoot td{font-weight:600;border-top:2px solid var(--line)}
.js th{cursor:pointer;user-select:none}.js th:hover{color:var(--link)}
th[aria-sort=ascending]::after{content:" \\25B4"}th[aria-sort=descending]::after{content:" \\25BE"}
figure{margin:18px 0 10px}figcaption{font-weight:600;margin-bottom:4px}
.legend{list-style:none;padding:0;margin:4px 0;display:flex;flex-wrap:wrap;gap:4px 14px;
font-size:12.5px}
.sw{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:5px;
vertical-align:-1px}.sw.whisker{background:none;border-top:2px solid var(--fg);height:6px}
svg.chart{display:block;max-width:100%;height:auto;font-size:12px}
svg.chart text{fill:var(--fg)}svg.chart .tick{fill:var(--muted)}
svg.chart .grid{stroke:var(--line);stroke-width:1}svg.chart .zero{stroke:var(--muted)}
svg.chart .wh{stroke:var(--fg);stroke-width:1.3}
svg.chart rect.b:hover{stroke:var(--fg);stroke-width:1.5}svg.chart .faint{opacity:.35}
#tip{position:fixed;pointer-events:none;background:var(--fg);color:var(--bg);padding:3px 7px;
border-radius:4px;font-size:12px;white-space:pre;display:none;z-index:9}
footer{margin-top:32px;color:var(--muted);font-size:12px}
@media print{:root{color-scheme:light}main{padding:0;max-width:none}.scroll{overflow:visible}
table{font-size:10.5px}th,td{white-space:normal;padding:2px 5px}td.r{white-space:nowrap}td.w{min-width:10em}
code{font-size:10px}td code{overflow-wrap:anywhere}figure,tr{break-inside:avoid}
h2,.caption{break-after:avoid}#tip{display:none}
details::details-content{content-visibility:visible;display:block}}
"""

# Sort a table by a header click (numbers by value: a mark before one (^ in cache, ~ latency)
# aside, times in µs/ms/s, bytes in B/kB/MB/GB/TB/KiB/MiB/GiB and FLOPs in kFLOP/MFLOP/...
# by their units; a third click restores the order; a table of groups, one <tbody> each, sorts
# its groups by their first rows; a table whose rows are quantities, columns the things
# compared (its first header empty: class "fixed"), does not sort); show a bar's <title> as a
# tooltip at once. The page reads the same
# without it: the tables are plain HTML and the charts plain SVG with native <title> tips.
SCRIPT = r"""
(function(){
document.documentElement.classList.add('js');
var U={'µs':1e-3,'us':1e-3,'ms':1,'s':1e3},P={'':1,k:1e3,K:1e3,M:1e6,G:1e9,T:1e12,P:1e15,
 Ki:1024,Mi:1048576,Gi:1073741824,Ti:1099511627776};
var R=new RegExp('^\\s*[\\^~!]?\\s*([+-]?\\d[\\d,]*\\.?\\d*(?:e[+-]?\\d+)?)\\s*'+
 '(µs|us|ms|s\\b|([kKMGTP]i?)?(?:B|FLOP)\\b)?');
function key(t){var m=R.exec(t);
 if(!m)return null;var v=parseFloat(m[1].replace(/,/g,''));
 return !m[2]?v:U[m[2]]?v*U[m[2]]:v*P[m[3]||''];}
document.querySelectorAll('table:not(.fixed)').forEach(function(tb){
 var body=tb.tBodies[0];if(!body)return;var g=tb.tBodies.length>1;
 var orig=Array.prototype.slice.call(g?tb.tBodies:body.rows);
 tb.querySelectorAll('thead th').forEach(function(th,i){th.addEventListener('click',function(){
  var s=th.getAttribute('aria-sort'),next=s==='descending'?'ascending':s==='ascending'?'':'descending';
  tb.querySelectorAll('thead th').forEach(function(h){h.removeAttribute('aria-sort');});
  var rows=orig.slice();
  function cell(r){r=g?r.rows[0]:r;return r.cells[i]?r.cells[i].textContent:'';}
  if(next){th.setAttribute('aria-sort',next);var d=next==='ascending'?1:-1;
   rows.sort(function(a,b){var x=cell(a),y=cell(b);
    var p=key(x),q=key(y);if(p!==null&&q!==null)return d*(p-q);if(p!==null)return -1;if(q!==null)return 1;
    return d*x.localeCompare(y);});}
  rows.forEach(function(r){if(g)tb.insertBefore(r,tb.tFoot);else body.appendChild(r);});});});});
var tip=document.createElement('div');tip.id='tip';document.body.appendChild(tip);
document.querySelectorAll('svg.chart [data-tip], svg.chart title').forEach(function(t){
 if(t.tagName==='title'){t.parentNode.setAttribute('data-tip',t.textContent);t.remove();}});
document.addEventListener('mousemove',function(e){
 var el=e.target.closest?e.target.closest('[data-tip]'):null;
 if(!el){tip.style.display='none';return;}
 tip.textContent=el.getAttribute('data-tip');tip.style.display='block';
 var x=e.clientX+14,y=e.clientY+14,w=tip.offsetWidth;
 if(x+w>window.innerWidth-4)x=Math.max(4,e.clientX-w-10);
 tip.style.left=x+'px';tip.style.top=y+'px';});
})();
"""

BASE_MARK = "<!-- base -->"


def _sha256(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; "
    f"script-src 'sha256-{_sha256(SCRIPT)}'; img-src data:; form-action 'none'"
)


def page(title: str, body: str) -> str:
    """The whole file: head (the policy, the style), the body, the script."""
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="inductor-bench">
{BASE_MARK}
<title>{html.escape(title)}</title>
<style>{STYLE}{_colour_rules()}
</style>
</head>
<body>
<main>
{body}
<footer>made by inductor-bench · one self-contained file: it loads nothing from anywhere</footer>
</main>
<script>{SCRIPT}</script>
</body>
</html>
"""


def url_of(path: str) -> str:
    """A file path as a URL relative to the page (or from the file system's root)."""
    return quote(path.replace("\\", "/"), safe="/:._-~")


def plain_file_path(path: str) -> bool:
    """Whether ``path`` can only be a file's path: no scheme (``javascript:``) or drive (no
    ``:`` at all) and no ``..``. Files of a run are relative to its directory (a saved result
    naming any other is refused when read: ``core/rundir.py``); the kernel command links the
    file it was given, which may be absolute."""
    p = path.replace("\\", "/")
    return bool(p) and ":" not in p and ".." not in p.split("/")


def with_base(document: str, href: str) -> str:
    """The page with its relative links resolved against ``href`` (a directory, relative to
    where the page is saved): a report printed on stdout or written away from its run
    directory still links to the run's files. The page links to no anchor of its own, so a
    ``<base>`` changes nothing else."""
    if not href or href in (".", "./"):
        return document
    href = url_of(href if href.endswith("/") else href + "/")
    return document.replace(BASE_MARK, f'<base href="{html.escape(href)}">', 1)
