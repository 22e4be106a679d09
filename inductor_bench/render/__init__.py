"""Documents from results: text for a terminal, markdown for a pull request. Renderers
import ``core`` only and return strings; the commands print or write them."""
