"""Sphinx configuration of kafkawire's documentation: the user guide (``docs/guide``, MyST Markdown, one page
per task) and the API reference (``docs/api``, autodoc over the docstrings).

Build: ``python -m sphinx -W -n --keep-going -b html docs <out>`` (``tests/test_docs_build.py`` does, with
warnings as errors, nitpicky references and a check of every internal link of the output). Needs the ``dev``
extra (Sphinx, myst-parser) and, for the Spark pages, the ``spark`` extra. The guide's option tables come
from the code (``docs/_ext/kafkawire_tables.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))  # document the checkout, also when kafkawire is installed elsewhere
sys.path.insert(0, str(HERE / "_ext"))

import kafkawire  # noqa: E402

project = "kafkawire"
author = "the kafkawire contributors"
copyright = "the kafkawire contributors, Apache License 2.0"
release = version = kafkawire.__version__

extensions = ["sphinx.ext.autodoc", "myst_parser", "kafkawire_tables"]
html_theme = "alabaster"
html_static_path: list[str] = []
# The design notes beside the guide are read on their own (they link into the source tree).
exclude_patterns = ["_build", "_ext", "ARCHITECTURE.md", "BROKERS.md", "CODEC-SPEC.md", "EXACTLY_ONCE.md",
                    "SECURITY.md"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}

# Internal links are checked: a link to a page or heading that does not exist is a warning (-W: an error).
nitpicky = True
myst_heading_anchors = 3
myst_enable_extensions = ["deflist"]
suppress_warnings: list[str] = []

# Signatures keep the annotations as written; members follow the source order, which groups them as the
# modules do (construction, then reading, then conversion).
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
autodoc_default_options = {"members": True, "show-inheritance": True}
# Names that appear in annotations only under TYPE_CHECKING (or as numpy aliases) stay as written.
autodoc_type_aliases: dict[str, str] = {}


def _python_refs_outside_the_guide(app, domain, node):  # type: ignore[no-untyped-def]
    """Nitpicky mode checks every reference; the API reference's annotations name numpy, collections.abc and
    private classes that no page documents (and intersphinx cannot reach the network), so a missing Python
    target there is not reported. In the guide every reference must resolve."""
    docname = node.get("refdoc", "") or ""
    if domain is not None and domain.name == "py" and not docname.startswith("guide/"):
        return True
    return None


def setup(app):  # type: ignore[no-untyped-def]
    app.connect("warn-missing-reference", _python_refs_outside_the_guide)
