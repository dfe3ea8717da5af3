"""Make ``import kafkawire._codec`` load a separately built (sanitized) extension.

The in-place ``kafkawire/_codec*.so`` is shared by everyone working in the checkout, so sanitizer
builds go to their own directory (``fuzz/build_sanitized.sh``: ``build/fuzz-asan/kafkawire/``). A
meta-path finder placed in front of the normal import machinery answers for ``kafkawire._codec`` with
that file; everything else (the Python package) comes from the checkout as usual.
"""

from __future__ import annotations

import glob
import importlib.machinery
import importlib.util
import os
import sys
from importlib.abc import MetaPathFinder

__all__ = ["install"]


class _CodecFinder(MetaPathFinder):
    def __init__(self, path: str, avro_path: str | None = None, protobuf_path: str | None = None) -> None:
        self.paths = {"kafkawire._codec": path}
        if avro_path is not None:  # the Avro decoder of kafkawire.serde (the `avro` target)
            self.paths["kafkawire.serde._avro"] = avro_path
        if protobuf_path is not None:  # the Protobuf decoder (the `protobuf` target)
            self.paths["kafkawire.serde._protobuf"] = protobuf_path

    def find_spec(self, fullname, path=None, target=None):  # noqa: ANN001, ANN201 - importlib protocol
        where = self.paths.get(fullname)
        if where is None:
            return None
        loader = importlib.machinery.ExtensionFileLoader(fullname, where)
        return importlib.util.spec_from_file_location(fullname, where, loader=loader)


def install(ext_dir: str | None = None) -> str | None:
    """Route ``kafkawire._codec`` to the extension under ``ext_dir`` (default ``$KAFKAWIRE_FUZZ_EXT_DIR``).

    Returns the path of the extension used, or None when no directory was given. Must run before
    ``kafkawire`` is imported.
    """
    ext_dir = ext_dir or os.environ.get("KAFKAWIRE_FUZZ_EXT_DIR")
    if not ext_dir:
        return None
    if "kafkawire" in sys.modules:
        raise RuntimeError("fuzz._ext.install() must run before kafkawire is imported")
    found = sorted(glob.glob(os.path.join(ext_dir, "kafkawire", "_codec*.so")))
    if not found:
        raise FileNotFoundError(f"no kafkawire/_codec*.so under {ext_dir}: run fuzz/build_sanitized.sh")
    avro = sorted(glob.glob(os.path.join(ext_dir, "kafkawire", "serde", "_avro*.so")))
    protobuf = sorted(glob.glob(os.path.join(ext_dir, "kafkawire", "serde", "_protobuf*.so")))
    sys.meta_path.insert(0, _CodecFinder(found[0], avro[0] if avro else None, protobuf[0] if protobuf else None))
    return found[0]
