"""Python classes for messages and their nested structs, built from the schemas.

Each struct in a schema becomes a small ``__slots__`` class whose constructor takes every field as a
keyword argument (omitted ones take the spec's default). A message (request or response) class adds
``encode`` / ``decode`` for a version chosen at call time; the specialised encoder and decoder for each
version are compiled on first use and cached (see :mod:`kafkawire.protocol._compile`).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, TypeVar

from ..errors import ProtocolError
from . import _compile
from .headers import encode_request_header, encode_response_header, response_header_version
from .schema import Field, MessageSchema, StructSchema, parse_message

__all__ = ["Struct", "Message", "Request", "Response", "build_message"]

_MISSING: Any = object()
_SIZE = struct.Struct(">i")
_VERSION = struct.Struct(">h")  # the version in front of a data message
# Exceptions a compiled decoder can raise on malformed input; all become ProtocolError.
_DECODE_ERRORS = (struct.error, IndexError, ValueError, UnicodeDecodeError, OverflowError, TypeError)
_ENCODE_ERRORS = (struct.error, AttributeError, TypeError, ValueError, OverflowError, UnicodeEncodeError)


class Struct:
    """Base of every generated struct class: equality, repr and dict conversion over its fields."""

    __slots__ = ()

    # The generated classes' fields, constructors and nested structs are typed in ``_messages.pyi``
    # (scripts/gen_message_stubs.py): a misspelled field is a type error, not a silent default.
    #: Unknown tagged fields read by the decoder, tag -> raw bytes, written back when re-encoded (KIP-482).
    _unknown_tags: dict[int, bytes] | None
    #: Field names in schema order.
    FIELDS: ClassVar[tuple[str, ...]] = ()
    #: The schema node this class was built from.
    STRUCT_SCHEMA: ClassVar[StructSchema]

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        for name in self.FIELDS:
            if getattr(self, name) != getattr(other, name):
                return False
        return (self._unknown_tags or None) == (other._unknown_tags or None)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        parts = []
        for name in self.FIELDS:
            v = getattr(self, name)
            if isinstance(v, memoryview):
                v = f"<{len(v)} bytes>"
            else:
                v = repr(v)
            parts.append(f"{name}={v}")
        return f"{type(self).__name__}({', '.join(parts)})"

    def to_dict(self) -> dict[str, Any]:
        """Fields as a plain dict, nested structs and lists converted recursively."""

        def conv(v: Any) -> Any:
            if isinstance(v, Struct):
                return v.to_dict()
            if isinstance(v, list):
                return [conv(x) for x in v]
            if isinstance(v, memoryview):
                return v.tobytes()
            return v

        return {name: conv(getattr(self, name)) for name in self.FIELDS}


def _struct_class(st: StructSchema, bases: tuple[type, ...], extra_ns: dict[str, Any]) -> type:
    """Create a ``__slots__`` class with a generated ``__init__`` taking every field."""
    ns: dict[str, Any] = {"_MISSING": _MISSING}
    params, body = [], []
    for i, f in enumerate(st.fields):
        d = f"_d{i}"
        if f.is_array and f.default is not None:
            # a fresh list per instance; an array declared =null defaults to None like any scalar
            ns[d] = _MISSING
            params.append(f"{f.name}={d}")
            body.append(f"    self.{f.name} = [] if {f.name} is _MISSING else {f.name}")
        else:
            ns[d] = f.default
            params.append(f"{f.name}={d}")
            body.append(f"    self.{f.name} = {f.name}")
    body.append("    self._unknown_tags = _unknown_tags")
    params.append("_unknown_tags=None")
    src = f"def __init__(self, {', '.join(params)}):\n" + "\n".join(body)
    exec(compile(src, f"<kafkawire struct {st.name}>", "exec"), ns)
    init = ns["__init__"]
    init.__doc__ = f"Build a {st.name}; omitted fields take their schema default."
    attrs: dict[str, Any] = {
        "__slots__": tuple(f.name for f in st.fields) + ("_unknown_tags",),
        "__init__": init,
        "FIELDS": tuple(f.name for f in st.fields),
        "STRUCT_SCHEMA": st,
        "__doc__": _struct_doc(st),
    }
    attrs.update(extra_ns)
    return type(st.name, bases, attrs)


def _field_doc(f: Field) -> str:
    t = ("[]" if f.is_array else "") + f.type
    extra = [str(f.versions)]
    if f.nullable.lo is not None:
        extra.append(f"nullable {f.nullable}")
    if f.tag is not None:
        extra.append(f"tag {f.tag}")
    return f"``{f.name}`` ({t}, {', '.join(extra)})"


def _struct_doc(st: StructSchema) -> str:
    return f"{st.name}: " + "; ".join(_field_doc(f) for f in st.fields)


class Message(Struct):
    """Base of request and response classes."""

    __slots__ = ()
    API_KEY: ClassVar[int]
    MIN_VERSION: ClassVar[int]
    MAX_VERSION: ClassVar[int]
    #: First flexible (KIP-482) version, or None.
    FLEXIBLE_VERSION: ClassVar[int | None]
    SCHEMA: ClassVar[MessageSchema]
    _classes: ClassVar[dict[int, type]]
    _enc_cache: ClassVar[dict[int, Callable[..., Any]]]
    _dec_cache: ClassVar[dict[int, Callable[..., Any]]]
    _records_encoder: ClassVar[Callable[[Any], Any] | None] = None

    @classmethod
    def is_flexible(cls, version: int) -> bool:
        """True when ``version`` uses KIP-482 compact encodings and tagged fields."""
        return cls.FLEXIBLE_VERSION is not None and version >= cls.FLEXIBLE_VERSION

    @classmethod
    def _check_version(cls, version: int) -> None:
        if not cls.MIN_VERSION <= version <= cls.MAX_VERSION:
            raise ProtocolError(f"{cls.__name__} has versions {cls.MIN_VERSION}-{cls.MAX_VERSION}, not {version}")

    @classmethod
    def _encoder(cls, version: int) -> Callable[..., Any]:
        fn = cls._enc_cache.get(version)
        if fn is None:
            cls._check_version(version)
            fn = _compile.compile_encoder(cls.SCHEMA, version, cls._classes, cls._records_encoder)
            cls._enc_cache[version] = fn
        return fn

    @classmethod
    def _decoder(cls, version: int) -> Callable[..., Any]:
        fn = cls._dec_cache.get(version)
        if fn is None:
            cls._check_version(version)
            fn = _compile.compile_decoder(cls.SCHEMA, version, cls._classes)
            cls._dec_cache[version] = fn
        return fn

    def _encode_chunks(self, chunks: list[bytes], version: int) -> list[bytes]:
        enc = self._encoder(version)
        try:
            enc(self, chunks.append)
        except ProtocolError:
            raise
        except _ENCODE_ERRORS as exc:
            raise ProtocolError(f"cannot encode {type(self).__name__} v{version}: {exc}") from exc
        return chunks

    def encode_body(self, version: int) -> bytes:
        """The message body at ``version`` (no size prefix, no header)."""
        return b"".join(self._encode_chunks([], version))

    @classmethod
    def decode(cls, buf: bytes | bytearray | memoryview, version: int, *, allow_trailing: bool = False) -> Any:
        """Decode a body (the bytes after the header) at ``version``.

        Variable-length ``records`` fields are zero-copy ``memoryview`` slices of ``buf``. Bytes left over
        after the body raise :class:`ProtocolError` unless ``allow_trailing``.
        """
        dec = cls._decoder(version)
        mv = buf if isinstance(buf, memoryview) else memoryview(buf)
        if mv.ndim != 1 or mv.itemsize != 1:
            mv = mv.cast("B")
        try:
            obj, pos = dec(mv)
        except ProtocolError:
            raise
        except _DECODE_ERRORS as exc:
            raise ProtocolError(f"malformed {cls.__name__} v{version}: {exc}") from exc
        if pos != len(mv) and not allow_trailing:
            raise ProtocolError(f"{cls.__name__} v{version}: {len(mv) - pos} bytes left after the body")
        return obj


class Request(Message):
    """Base of request classes."""

    __slots__ = ()
    #: The matching response class.
    RESPONSE: ClassVar[type[Response]]

    @classmethod
    def header_version(cls, version: int) -> int:
        """Request header version for this API at ``version``: 2 when flexible, else 1."""
        return 2 if cls.is_flexible(version) else 1

    def encode(self, version: int, correlation_id: int = 0, client_id: str | None = "kafkawire") -> bytes:
        """The full frame: 4-byte size, request header (v1, or v2 when flexible), body."""
        header = encode_request_header(
            bytearray(), self.API_KEY, version, correlation_id, client_id, self.header_version(version)
        )
        return _frame(self._encode_chunks([b"", bytes(header)], version))


class Response(Message):
    """Base of response classes."""

    __slots__ = ()
    REQUEST: ClassVar[type[Request]]

    @classmethod
    def header_version(cls, version: int) -> int:
        """Response header version: 1 when flexible, else 0 (always 0 for ApiVersions, KIP-511)."""
        return response_header_version(cls.API_KEY, cls.is_flexible(version))

    def encode(self, version: int, correlation_id: int = 0) -> bytes:
        """The full frame a broker would send: 4-byte size, response header, body."""
        header = encode_response_header(bytearray(), correlation_id, self.header_version(version))
        return _frame(self._encode_chunks([b"", bytes(header)], version))


class DataMessage(Message):
    """Base of data messages: bytes that other messages carry (Kafka's ``"type": "data"`` specs, such as a
    group member's subscription inside JoinGroup), with no header and no API key."""

    __slots__ = ()

    def encode_versioned(self, version: int) -> bytes:
        """An int16 version, then the body at that version: how the consumer protocol's payloads travel."""
        return _VERSION.pack(version) + self.encode_body(version)

    @classmethod
    def decode_versioned(cls, buf: bytes | bytearray | memoryview) -> tuple[int, Any]:
        """``(version written, message)`` from an int16 version and a body.

        A version above the highest known is read at the highest, the rest ignored: later versions only
        append fields (what Java's ``ConsumerProtocol`` does). A body shorter than its version needs is read
        at the highest lower version it holds whole: some writers stamp a version without its new fields.
        Anything else (a negative version, a body no version explains) is a :class:`ProtocolError`.
        """
        mv = memoryview(buf).cast("B") if not isinstance(buf, memoryview) else buf
        if len(mv) < 2:
            raise ProtocolError(f"{cls.__name__}: {len(mv)} bytes, too short for its version")
        version = int(_VERSION.unpack_from(mv)[0])
        if version < cls.MIN_VERSION:
            raise ProtocolError(f"{cls.__name__}: version {version} is below {cls.MIN_VERSION}")
        first = min(version, cls.MAX_VERSION)
        try:
            return version, cls.decode(mv[2:], first, allow_trailing=version > cls.MAX_VERSION)
        except ProtocolError as exc:
            for v in range(first - 1, cls.MIN_VERSION - 1, -1):
                try:
                    return version, cls.decode(mv[2:], v)
                except ProtocolError:
                    continue
            raise exc


def _frame(chunks: list[bytes]) -> bytes:
    """Join header and body chunks behind a 4-byte size (``chunks[0]`` is the size's placeholder)."""
    chunks[0] = _SIZE.pack(sum(map(len, chunks)))
    return b"".join(chunks)


_M = TypeVar("_M", bound=Message)


def build_message(text: str, base: type[_M], mixins: Mapping[str, type] | None = None) -> type[_M]:
    """Parse one schema block and build its message class with nested struct classes as attributes."""
    schema = parse_message(text)
    mixins = mixins or {}
    classes: dict[int, type] = {}
    by_sig: dict[tuple[str, Any], type] = {}
    nested: dict[str, type] = {}

    def walk(st: StructSchema) -> None:
        for f in st.fields:
            if f.struct is not None:
                walk(f.struct)
                key = (f.struct.name, f.struct.signature())
                cls = by_sig.get(key)
                if cls is None:
                    bases = (mixins[f.struct.name], Struct) if f.struct.name in mixins else (Struct,)
                    cls = _struct_class(f.struct, bases, {})
                    by_sig[key] = cls
                    name = f.struct.name
                    while name in nested:  # same name, different shape: keep both reachable
                        name += "_"
                    nested[name] = cls
                classes[id(f.struct)] = cls

    walk(schema.root)
    flex = schema.flexible.lo
    root_bases = (mixins[schema.name], base) if schema.name in mixins else (base,)
    attrs: dict[str, Any] = {
        "API_KEY": schema.api_key,
        "MIN_VERSION": schema.min_version,
        "MAX_VERSION": schema.max_version,
        "FLEXIBLE_VERSION": flex,
        "SCHEMA": schema,
        "_enc_cache": {},
        "_dec_cache": {},
    }
    attrs.update(nested)
    cls: type[_M] = _struct_class(schema.root, root_bases, attrs)
    classes[id(schema.root)] = cls
    cls._classes = classes
    cls.__module__ = "kafkawire.protocol"
    for c in nested.values():
        c.__module__ = "kafkawire.protocol"
        c.__qualname__ = f"{schema.name}.{c.__name__}"
    return cls
