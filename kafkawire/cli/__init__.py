"""The ``kafkawire`` command line: ``kafkawire demo``, ``kafkawire codec-demo``, ``kafkawire broker``, ..."""

from .main import main

__all__ = ["main"]
