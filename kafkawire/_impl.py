"""Pick the codec implementation: the compiled core, or the pure-Python reference.

``KAFKAWIRE_PURE=1`` forces the reference. ``KAFKAWIRE_REQUIRE_COMPILED=1`` turns a failed import of the
compiled core into an error instead of a silent (slow) fallback; the test suite sets it for the compiled run.
"""

from __future__ import annotations

import os
from types import ModuleType

from ._pure import codec as pure

impl: ModuleType
compiled: bool

if os.environ.get("KAFKAWIRE_PURE", "") not in ("", "0"):
    impl, compiled = pure, False
else:
    try:
        from . import _codec as impl  # type: ignore[no-redef]

        compiled = True
    except ImportError:
        if os.environ.get("KAFKAWIRE_REQUIRE_COMPILED", "") not in ("", "0"):
            raise
        impl, compiled = pure, False
