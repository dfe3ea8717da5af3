"""Request and response headers.

Request header v0 is ``api_key int16, api_version int16, correlation_id int32``; v1 adds
``client_id`` as a *nullable string* (int16 length); v2 (flexible APIs, KIP-482) adds a tag section
but keeps ``client_id`` non-compact, so that a broker can parse the header before it knows whether the
API version is flexible. Response header v0 is ``correlation_id int32``; v1 adds a tag section.
ApiVersions responses always use response header v0, even for flexible versions (KIP-511), because a
client cannot know the broker's flexibility before it has the broker's ApiVersions answer.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from ..errors import ProtocolError
from ._compile import _write_tags, read_uvarint

__all__ = [
    "RequestHeader",
    "ResponseHeader",
    "encode_request_header",
    "decode_request_header",
    "encode_response_header",
    "decode_response_header",
    "response_header_version",
    "API_VERSIONS_KEY",
]

API_VERSIONS_KEY = 18
_HDR0 = struct.Struct(">hhi")
_CID = struct.Struct(">i")
_LEN16 = struct.Struct(">h")


@dataclass
class RequestHeader:
    """A decoded request header; ``unknown_tags`` holds v2 tagged fields (tag -> raw bytes)."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None = None
    unknown_tags: dict[int, bytes] | None = field(default=None)


@dataclass
class ResponseHeader:
    """A decoded response header; ``unknown_tags`` holds v1 tagged fields (tag -> raw bytes)."""

    correlation_id: int
    unknown_tags: dict[int, bytes] | None = field(default=None)


def response_header_version(api_key: int, flexible: bool) -> int:
    """Response header version for an API: 1 when the body is flexible, but 0 for ApiVersions (KIP-511)."""
    if api_key == API_VERSIONS_KEY:
        return 0
    return 1 if flexible else 0


def encode_request_header(
    out: bytearray,
    api_key: int,
    api_version: int,
    correlation_id: int,
    client_id: str | None,
    header_version: int,
    unknown_tags: dict[int, bytes] | None = None,
) -> bytearray:
    """Append a request header of ``header_version`` (0, 1 or 2) to ``out``."""
    try:
        out += _HDR0.pack(api_key, api_version, correlation_id)
    except struct.error as exc:
        raise ProtocolError(f"bad request header field: {exc}") from exc
    if header_version >= 1:
        if client_id is None:
            out += b"\xff\xff"
        else:
            raw = client_id.encode("utf-8")
            if len(raw) > 0x7FFF:
                raise ProtocolError("client_id longer than 32767 bytes")
            out += _LEN16.pack(len(raw))
            out += raw
    if header_version >= 2:
        _write_tags(out.extend, [], unknown_tags)
    return out


def decode_request_header(buf: Any, header_version: int) -> tuple[RequestHeader, int]:
    """Parse a request header at the start of ``buf``; returns it and the offset of the body."""
    try:
        api_key, api_version, correlation_id = _HDR0.unpack_from(buf, 0)
        pos = 8
        client_id = None
        unknown = None
        if header_version >= 1:
            (n,) = _LEN16.unpack_from(buf, pos)
            pos += 2
            if n >= 0:
                if n > len(buf) - pos:
                    raise ProtocolError("client_id length exceeds the bytes left")
                client_id = str(memoryview(buf)[pos : pos + n], "utf-8")
                pos += n
            elif n != -1:
                raise ProtocolError("negative client_id length")
        if header_version >= 2:
            unknown, pos = _read_tags(buf, pos)
    except (struct.error, UnicodeDecodeError, IndexError) as exc:
        raise ProtocolError(f"malformed request header: {exc}") from exc
    return RequestHeader(api_key, api_version, correlation_id, client_id, unknown), pos


def encode_response_header(
    out: bytearray, correlation_id: int, header_version: int, unknown_tags: dict[int, bytes] | None = None
) -> bytearray:
    """Append a response header of ``header_version`` (0 or 1) to ``out``."""
    out += _CID.pack(correlation_id)
    if header_version >= 1:
        _write_tags(out.extend, [], unknown_tags)
    return out


def decode_response_header(buf: Any, header_version: int) -> tuple[ResponseHeader, int]:
    """Parse a response header at the start of ``buf``; returns it and the offset of the body."""
    try:
        (correlation_id,) = _CID.unpack_from(buf, 0)
        pos = 4
        unknown = None
        if header_version >= 1:
            unknown, pos = _read_tags(buf, pos)
    except (struct.error, IndexError) as exc:
        raise ProtocolError(f"malformed response header: {exc}") from exc
    return ResponseHeader(correlation_id, unknown), pos


def _read_tags(buf: Any, pos: int) -> tuple[dict[int, bytes] | None, int]:
    count, pos = read_uvarint(buf, pos)
    unknown: dict[int, bytes] | None = None
    for _ in range(count):
        tag, pos = read_uvarint(buf, pos)
        size, pos = read_uvarint(buf, pos)
        if size > len(buf) - pos:
            raise ProtocolError("tagged field exceeds the bytes left")
        if unknown is None:
            unknown = {}
        unknown[tag] = bytes(buf[pos : pos + size])
        pos += size
    return unknown, pos
