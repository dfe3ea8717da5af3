"""The accumulator behind ``Producer.send()``: the compiled one (``_accumulator.pyx``) or its pure twin
(``_accumulator_pure.py``), chosen as the codec is (:mod:`kafkawire._impl`: ``KAFKAWIRE_PURE=1`` and a pure
build choose the twin; ``KAFKAWIRE_REQUIRE_COMPILED=1`` makes a missing extension an error)."""

from __future__ import annotations

from types import ModuleType

from ... import _impl
from . import _accumulator_pure

__all__ = ["accumulator_impl", "compiled"]


def _load() -> ModuleType:
    if not _impl.compiled:
        return _accumulator_pure
    try:
        from . import _accumulator  # type: ignore[attr-defined]
    except ImportError:
        if _impl._flag("KAFKAWIRE_REQUIRE_COMPILED"):
            raise
        return _accumulator_pure
    return _accumulator  # type: ignore[no-any-return]


accumulator_impl: ModuleType = _load()
#: The compiled accumulator is active.
compiled: bool = accumulator_impl is not _accumulator_pure
