"""Sphinx configuration of kafkawire's API reference, built from the docstrings (autodoc).

Build: ``python -m sphinx -W --keep-going -b html docs/api <out>`` (``tests/test_docs_build.py`` does, with
warnings as errors). Needs the ``dev`` extra (Sphinx) and, for the Spark pages, the ``spark`` extra.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # document the checkout, also when kafkawire is installed elsewhere

import kafkawire  # noqa: E402

project = "kafkawire"
author = "the kafkawire contributors"
copyright = "the kafkawire contributors, Apache License 2.0"
release = version = kafkawire.__version__

extensions = ["sphinx.ext.autodoc"]
html_theme = "alabaster"
html_static_path: list[str] = []
exclude_patterns = ["_build"]

# Signatures keep the annotations as written; members follow the source order, which groups them as the
# modules do (construction, then reading, then conversion).
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
autodoc_default_options = {"members": True, "show-inheritance": True}
# Names that appear in annotations only under TYPE_CHECKING (or as numpy aliases) stay as written.
autodoc_type_aliases: dict[str, str] = {}
