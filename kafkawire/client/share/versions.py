"""The version a share-group request (KIP-932) is sent at, or an error that says what the broker lacks."""

from __future__ import annotations

from typing import Any

from ...protocol.errors import UnsupportedVersionError

__all__ = ["share_version"]


def share_version(conn: Any, cls: Any, error: type[Exception], prefix: str, needs: str) -> int:
    """The highest version of request ``cls`` both ``conn``'s broker and kafkawire speak; when they share none,
    ``error`` reading ``<prefix><host>:<port> does not speak <API> <needs>``."""
    try:
        return int(conn.version_for(cls))
    except UnsupportedVersionError as e:
        raise error(f"{prefix}{conn.host}:{conn.port} does not speak {cls.__name__[:-7]} {needs}: {e}") from e
