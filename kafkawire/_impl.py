"""Pick the codec implementation: the compiled core, or the pure-Python reference, and say why.

``KAFKAWIRE_PURE=1`` forces the reference (so does ``KAFKAWIRE_NO_EXTENSIONS=1``, the switch that builds
kafkawire without its extension, and a wheel built with it). ``KAFKAWIRE_REQUIRE_COMPILED=1`` turns a
failed import of the compiled core into an error; the test suite sets it for the compiled run.

Without an opt-in, falling back to the reference is a surprise worth a warning: it decodes up to ~100x slower
with identical results, so nothing else would tell. The usual cause is a source checkout without a built
extension that shadows the installed wheel because Python (and ``python -m pyspark.daemon``, i.e. every
Spark Python worker) puts the working directory first on ``sys.path``; aiokafka's users ran 6x slower for
months when its extension silently failed to build. :data:`status` keeps the why for ``kafkawire
--version``, the Spark source and :func:`kafkawire.spark.session`'s worker check.
"""

from __future__ import annotations

import os
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from ._pure import codec as pure
from .errors import PureCodecWarning

__all__ = ["CodecStatus", "compiled", "impl", "status", "views"]

#: A file in the package tree marks a wheel or install built with KAFKAWIRE_NO_EXTENSIONS=1 (setup.py).
PURE_BUILD_MARKER = "_pure_build"

# Not resolved: an editable install's link tree keeps the package and its extension side by side as links.
_PACKAGE_DIR = Path(os.path.abspath(__file__)).parent


def _flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0")


@dataclass(frozen=True)
class CodecStatus:
    """Which codec this process runs, and why.

    ``compiled``: the compiled core is active. ``opted_in``: the pure reference was chosen on purpose
    (``KAFKAWIRE_PURE``, ``KAFKAWIRE_NO_EXTENSIONS``, a pure build). ``reason``: why the compiled core is
    not active (empty when it is). ``package``: the kafkawire directory this process imported.
    ``python``: this interpreter.
    """

    compiled: bool
    opted_in: bool
    reason: str
    package: str
    python: str

    @property
    def unexpected(self) -> bool:
        """The pure reference runs though nobody asked for it: the case worth a warning."""
        return not self.compiled and not self.opted_in

    def summary(self) -> str:
        """``compiled core`` / ``pure Python (...)``: one phrase for version lines and reports."""
        if self.compiled:
            return "compiled core"
        return f"pure Python: {self.reason}"

    def warning_text(self) -> str:
        """The warning for an unexpected pure codec: what runs, why, which files, how to fix it."""
        return (
            f"kafkawire is using its pure-Python codec (it decodes up to ~100x slower than the compiled core) "
            f"in {self.python}, imported from {self.package}: {self.reason}. Fix: if that directory is a "
            f"source checkout picked up because it is the working directory (Python and Spark's Python workers put the "
            f"working directory first on sys.path), run from another directory; to use it, build it "
            f"(`python setup.py build_ext --inplace` there) or install a wheel (`pip install kafkawire`). "
            f"Set KAFKAWIRE_PURE=1 to choose the pure codec on purpose and silence this warning."
        )


def _load() -> tuple[ModuleType, CodecStatus]:
    package, python = str(_PACKAGE_DIR), sys.executable or "python"
    if _flag("KAFKAWIRE_PURE"):
        return pure, CodecStatus(False, True, "KAFKAWIRE_PURE is set", package, python)
    if _flag("KAFKAWIRE_NO_EXTENSIONS"):
        return pure, CodecStatus(False, True, "KAFKAWIRE_NO_EXTENSIONS is set", package, python)
    if (_PACKAGE_DIR / PURE_BUILD_MARKER).exists():
        return pure, CodecStatus(False, True, "built with KAFKAWIRE_NO_EXTENSIONS=1", package, python)
    try:
        from . import _codec, _recview  # noqa: F401  (the per-record views are part of the compiled core)
    except ImportError as e:
        if _flag("KAFKAWIRE_REQUIRE_COMPILED"):
            raise
        if isinstance(e, ModuleNotFoundError) and e.name in (f"{__package__}._codec", f"{__package__}._recview"):
            reason = f"no compiled extension (kafkawire/{e.name.rpartition('.')[2]}*.so or .pyd) in {package}"
        else:  # present but unloadable: wrong platform or Python, a missing symbol, an ABI mismatch
            reason = f"the compiled extension failed to import ({type(e).__name__}: {e})"
        return pure, CodecStatus(False, False, reason, package, python)
    found = Path(os.path.abspath(_codec.__file__ or "")).parent
    if found != _PACKAGE_DIR:
        # An import hook (an editable install's finder) resolved the submodule in another kafkawire tree:
        # that extension was built from other sources and need not match this package's Python code.
        reason = f"no compiled extension in {package}; the one found, {_codec.__file__}, belongs to another tree"
        return pure, CodecStatus(False, False, reason, package, python)
    return _codec, CodecStatus(True, False, "", package, python)


def _in_spark_worker() -> bool:
    """True in a Python worker started by Spark's JVM: there the Spark source reports the codec once per
    query (:mod:`kafkawire.spark.codec_report`) instead of every worker process warning at import."""
    return "PYTHON_WORKER_FACTORY_SECRET" in os.environ


impl: ModuleType
status: CodecStatus
impl, status = _load()
compiled: bool = status.compiled
#: The per-record views of RecordColumns (RecordView, RecordCursor, iter_records): kafkawire/_recview.pyx
#: with the compiled core, else its pure twin.
views: ModuleType
if compiled:
    from . import _recview as views
else:
    from ._pure import recview as views

if status.unexpected and not _in_spark_worker():
    # The message names the files, so the reported location matters little; Python prints it once.
    warnings.warn(status.warning_text(), PureCodecWarning, stacklevel=2)
