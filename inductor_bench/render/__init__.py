"""Documents from results: text for a terminal, markdown for a pull request, HTML for a
browser. Renderers import ``core`` only and return strings; the commands print or write them.

Importing the package registers the HTML document (``html.py``) with ``doc.new_doc``."""

from . import html as _html  # noqa: F401  (registers the "html" format)
