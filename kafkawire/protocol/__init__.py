"""Kafka's request/response messages, described as data and encoded by one generic walker.

Usage
-----
Requests are built with keyword arguments (snake_case forms of Kafka's field names; nested structs are
classes reachable from the message class) and encoded for the version chosen at send time::

    from kafkawire.protocol import MetadataRequest, MetadataResponse, read_response_header

    req = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name="t")])
    frame = req.encode(version=9, correlation_id=7, client_id="me")   # bytes, 4-byte size prefix included

    # ... read the 4-byte size and then `size` bytes of the response into `buf` ...
    correlation_id, body = read_response_header(buf, MetadataResponse, version=9)  # header v0/v1 as due
    resp = MetadataResponse.decode(body, version=9)
    for t in resp.topics:
        print(t.name, t.error_code, [p.partition_index for p in t.partitions])

Omitted fields take the spec's default (arrays a fresh empty list, or None where the spec says null:
null and empty are different values; tagged structs None, which stands for the default struct). Encoding a
field set to a non-default value in a version that cannot carry it raises
:class:`kafkawire.errors.ProtocolError`, unless the spec marks it *ignorable* (then it is dropped).
Decoding malformed or hostile bytes raises :class:`kafkawire.errors.ProtocolError` and nothing else.
A decoded message sets every field, a field its version lacks holding that default, so fields are read
directly. Each class, field and constructor keyword is typed for mypy (``_messages.pyi``, generated from the
schemas by ``scripts/gen_message_stubs.py``): a misspelled field is a type error.
``decode`` also rejects bytes left over after the body unless ``allow_trailing=True`` (a client should
pass it: librdkafka's mock cluster ends flexible Metadata responses with a stray byte).

Fetch responses keep each partition's ``records`` as a zero-copy ``memoryview`` of the response buffer;
``partition.records_columns(fetch_offset=..., isolation="read_committed")`` (which passes the
partition's ``aborted_transactions`` on) or the lazily cached ``partition.columns`` decode them with
:func:`kafkawire.decode_records`. Produce requests take encoded batch bytes in ``records``, or a
:class:`kafkawire.RecordColumns` / list of values (encoded with :func:`kafkawire.encode_records`).

Version negotiation (KIP-35/KIP-511) is in :mod:`kafkawire.protocol.negotiation`::

    from kafkawire.protocol.negotiation import ApiVersionsExchange, negotiate

    ex = ApiVersionsExchange(client_id="me")
    frame = ex.request_frame(correlation_id=1)   # first try: our newest ApiVersions version
    result = ex.handle_response(response_frame)  # frame without size; NegotiatedVersions, or None:
                                                 # then send ex.request_frame(...) again (KIP-511 retry)
    result.version_for(FetchRequest)             # highest version both sides speak (or raises)
    # or, over any callable frame -> response frame:  result = negotiate(send_and_receive)

Broker error codes are exception classes in :mod:`kafkawire.protocol.errors`
(``error_for_code(6)`` is ``NotLeaderOrFollowerError``; ``raise_for_code(code, message)`` raises
unless 0; every class has ``code``, ``name`` and ``retriable``).

Every message class exposes ``API_KEY``, ``MIN_VERSION``, ``MAX_VERSION``, ``FLEXIBLE_VERSION``
(None when never flexible), ``FIELDS``, ``SCHEMA``, ``header_version(v)``, ``encode_body(v)``,
``decode(buf, v)`` and ``to_dict()``; ``API_BY_KEY[key]`` gives ``(RequestClass, ResponseClass)`` and
``decode_request(frame)`` parses a request as a broker would (for fakes and tests). Message
definitions live in ``kafkawire/protocol/messages/<api>.schema``, one small data file per API in the notation
of :mod:`kafkawire.protocol.schema`; adding a version is a one-line change.

Versions run from 0 for every API, including those Kafka 4.0 stopped serving (KIP-896), up to the
newest *stable* version in Apache Kafka's message specs at the time of writing (Kafka 4.1 and the few
later additions such as Fetch v18; versions upstream marks unstable, like InitProducerId v6, are left
out). Negotiation picks the highest version both sides speak, so extra versions only matter to brokers
that advertise them. ``tests/protocol/test_kafka_conformance.py`` checks every declared version against
the message specs in the pinned ``kafka-clients`` jar, and the versions Kafka 4.0 removed against those
of the legacy release (Kafka 3.9).
"""

from __future__ import annotations

# kafkawire.protocol.negotiation is imported where it is used: it builds on the message classes made here.
from . import errors
from ._messages import *  # noqa: F403  # every request and response class, typed in _messages.pyi
from ._messages import API_BY_KEY
from ._messages import __all__ as _message_names
from ._registry import API_MODULES
from .headers import (
    RequestHeader,
    ResponseHeader,
    decode_request_header,
    decode_response_header,
    encode_request_header,
    encode_response_header,
    response_header_version,
)
from .message import Message, Request, Response, Struct


def read_response_header(
    buf: bytes | bytearray | memoryview, response: type[Response], version: int
) -> tuple[int, memoryview]:
    """Split a response frame (without its 4-byte size) into ``(correlation_id, body)``.

    Uses the header version ``response`` has at ``version`` (v0, v1 when flexible, v0 always for
    ApiVersions). ``body`` is a zero-copy memoryview to pass to ``response.decode``.
    """
    mv = buf if isinstance(buf, memoryview) else memoryview(buf)
    header, pos = decode_response_header(mv, response.header_version(version))
    return header.correlation_id, mv[pos:]


def decode_request(frame: bytes | bytearray | memoryview) -> tuple[RequestHeader, Request]:
    """Parse a request frame (without its 4-byte size), as a broker would: header, then body.

    The header version follows from the API key and version read first (v2 for flexible versions).
    """
    mv = frame if isinstance(frame, memoryview) else memoryview(frame)
    header, _ = decode_request_header(mv, 0)
    pair = API_BY_KEY.get(header.api_key)
    if pair is None:
        from ..errors import ProtocolError

        raise ProtocolError(f"unknown API key {header.api_key}")
    req = pair[0]
    header, pos = decode_request_header(mv, req.header_version(header.api_version))
    return header, req.decode(mv[pos:], header.api_version)


__all__ = [
    "API_BY_KEY",
    "API_MODULES",
    "Message",
    "Request",
    "RequestHeader",
    "Response",
    "ResponseHeader",
    "Struct",
    "decode_request",
    "decode_request_header",
    "decode_response_header",
    "encode_request_header",
    "encode_response_header",
    "errors",
    "read_response_header",
    "response_header_version",
]
__all__ += _message_names
