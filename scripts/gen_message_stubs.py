"""Write ``kafkawire/protocol/_messages.pyi``: the types of every message class the schemas build.

The classes are built at import from ``kafkawire/protocol/messages/*.schema`` (:mod:`kafkawire.protocol._messages`),
so a type checker cannot see their fields; this stub tells it, one class per request, response, data message
and nested struct, with each field's type and the constructor's keyword arguments. It is generated from the
classes the runtime builds (the same nested names, the same struct shared by two fields), never edited by hand.
``tests/protocol/test_message_stubs.py`` regenerates it and fails when the checked-in copy differs.

    python scripts/gen_message_stubs.py            # rewrite kafkawire/protocol/_messages.pyi
    python scripts/gen_message_stubs.py --out DIR  # write DIR/_messages.pyi instead

Field types follow what the decoder stores (:mod:`kafkawire.protocol._compile`): every field is set on every
decoded object, a field the version lacks holding its schema default, so no field is ever absent; a type is
``| None`` when some version can carry null, when the default is null, and always for a single nested struct
(``None`` is a tagged struct that was not sent, or a struct of a version without it). ``records`` of a decoded
response is a zero-copy ``memoryview`` (``bytes`` when built by hand); Produce's request also takes
``RecordColumns`` or a list of values, encoded when the request is.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STUB = "_messages.pyi"
COMMAND = "python scripts/gen_message_stubs.py"

_SCALARS = {
    "int8": "int",
    "int16": "int",
    "int32": "int",
    "int64": "int",
    "uint16": "int",
    "uint32": "int",
    "float64": "float",
    "bool": "bool",
    "string": "str",
    "bytes": "bytes",
    "uuid": "UUID",
}
_RECORDS_DECODED = "memoryview | bytes | None"
_RECORDS_PRODUCED = "_ProduceRecords"


def _versions_note(f: object, within: object) -> str:
    """A short comment for a field tagged or not in every version of the struct holding it (``within``): the
    versions that carry it and what the decoder stores otherwise."""
    from kafkawire.protocol.schema import Field, VersionRange

    assert isinstance(f, Field) and isinstance(within, VersionRange)
    lo, hi = f.versions.lo, f.versions.hi
    notes = []
    if f.tag is not None:
        notes.append(f"tag {f.tag}")
    whole = lo is not None and within.lo is not None and lo <= within.lo
    whole = whole and (hi is None or (within.hi is not None and hi >= within.hi))
    if not whole or f.tag is not None:
        notes.append(str(f.versions))
        default = "a fresh []" if f.is_array and f.default is not None else repr(f.make_default())
        if f.type == "uuid" and not f.is_array:
            default = "the zero UUID"
        if f.struct is not None and not f.is_array:
            default = "None"
        what = "when not sent" if f.tag is not None else "in other versions"
        notes.append(f"{default} {what}")
    return f"  # {', '.join(notes)}" if notes else ""


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text if text else "")


def _struct_names(msg: type) -> dict[type, str]:
    """Nested struct class -> the attribute of ``msg`` that holds it (``FetchResponse.PartitionData``)."""
    from kafkawire.protocol.message import Message, Struct

    return {
        v: k
        for k, v in vars(msg).items()
        if isinstance(v, type) and issubclass(v, Struct) and not issubclass(v, Message)  # not RESPONSE/REQUEST
    }


def _field_type(f: object, msg: type, names: dict[type, str]) -> str:
    from kafkawire.protocol.message import Request
    from kafkawire.protocol.schema import Field

    assert isinstance(f, Field)
    if f.type == "records":
        produced = issubclass(msg, Request) and msg._records_encoder is not None
        return _RECORDS_PRODUCED if produced else _RECORDS_DECODED
    nullable = f.nullable.lo is not None or f.make_default() is None
    if f.struct is not None:
        base = f"{msg.__name__}.{names[msg._classes[id(f.struct)]]}"  # type: ignore[attr-defined]
        if not f.is_array:
            return f"{base} | None"
    else:
        base = _SCALARS[f.type]
    t = f"list[{base}]" if f.is_array else base
    return f"{t} | None" if nullable else t


def _struct_versions(msg: type) -> dict[type, object]:
    """Struct class -> the versions of the field holding it (the message's own versions for the message)."""
    from kafkawire.protocol.schema import StructSchema, VersionRange

    out: dict[type, object] = {msg: VersionRange(msg.MIN_VERSION, msg.MAX_VERSION)}  # type: ignore[attr-defined]

    def walk(st: StructSchema) -> None:
        for f in st.fields:
            if f.struct is not None:
                out.setdefault(msg._classes[id(f.struct)], f.versions)  # type: ignore[attr-defined]
                walk(f.struct)

    walk(msg.SCHEMA.root)  # type: ignore[attr-defined]
    return out


def _emit_struct(w: _Writer, cls: type, msg: type, names: dict[type, str], indent: int, name: str) -> None:
    from kafkawire.protocol.message import DataMessage, Request, Response, Struct

    bases = []
    for b in cls.__bases__:
        bases.append(b.__name__)
    w.emit(indent, f"class {name}({', '.join(bases)}):")
    body = indent + 1
    st = cls.STRUCT_SCHEMA  # type: ignore[attr-defined]
    if cls is msg:
        for nested, attr in names.items():
            _emit_struct(w, nested, msg, names, body, attr)
        if issubclass(msg, Request):
            w.emit(body, f"RESPONSE: ClassVar[type[{msg.RESPONSE.__name__}]]")
        elif issubclass(msg, Response):
            w.emit(body, f"REQUEST: ClassVar[type[{msg.REQUEST.__name__}]]")
    for f in st.fields:
        line, note = f"{f.name}: {_field_type(f, msg, names)}", _versions_note(f, _struct_versions(msg)[cls])
        if note and len(line + note) + 4 * body > 120:
            w.emit(body, note.strip())  # the note goes above a field too long to carry it
            note = ""
        w.emit(body, line + note)
    params = [f"{f.name}: {_field_type(f, msg, names)} = ..." for f in st.fields]
    params.append("_unknown_tags: dict[int, bytes] | None = None")
    one_line = f"def __init__(self, {', '.join(params)}) -> None: ..."
    if len(one_line) + 4 * body <= 120:
        w.emit(body, one_line)
    else:
        w.emit(body, "def __init__(")
        w.emit(body + 1, "self,")
        for p in params:
            w.emit(body + 1, f"{p},")
        w.emit(body, ") -> None: ...")
    if cls is msg:
        w.emit(body, "@classmethod")
        w.emit(body, "def decode(")
        w.emit(body + 1, "cls, buf: bytes | bytearray | memoryview, version: int, *, allow_trailing: bool = False")
        w.emit(body, f") -> {name}: ...")
        if issubclass(msg, DataMessage):
            w.emit(body, "@classmethod")
            w.emit(body, f"def decode_versioned(cls, buf: bytes | bytearray | memoryview) -> tuple[int, {name}]: ...")
    assert issubclass(cls, Struct)


def render() -> str:
    """The stub's text, from the classes :mod:`kafkawire.protocol._messages` builds."""
    from kafkawire.protocol import _messages
    from kafkawire.protocol.message import Message

    w = _Writer()
    w.emit(0, f"# Generated by `{COMMAND}` from kafkawire/protocol/messages/*.schema: do not edit.")
    w.emit(0, "# The runtime classes are built from the same schemas in _messages.py. A decoded message has every")
    w.emit(0, "# field: one its version lacks holds the schema default (the comments name the versions carrying it).")
    w.emit(0, "from typing import ClassVar")
    w.emit(0, "from uuid import UUID")
    w.emit(0, "")
    w.emit(0, "from ..columns import RecordColumns")
    w.emit(0, "from ._records import FetchPartitionMixin")
    w.emit(0, "from .message import DataMessage, Request, Response, Struct")
    w.emit(0, "")
    w.emit(0, "__all__ = [")
    for name in _messages.__all__:
        w.emit(1, f'"{name}",')
    w.emit(0, "]")
    w.emit(0, "")
    w.emit(0, "# What Produce's records accept: batch bytes, or columns / values encoded with the request.")
    w.emit(0, "_ProduceRecords = bytes | bytearray | memoryview | RecordColumns | list[bytes | None] | None")
    w.emit(0, "")
    w.emit(0, "API_BY_KEY: dict[int, tuple[type[Request], type[Response]]]")
    messages = [v for v in vars(_messages).values() if isinstance(v, type) and issubclass(v, Message)]
    for msg in messages:
        if msg.__module__ != "kafkawire.protocol":
            continue  # the bases imported into the module
        w.emit(0, "")
        _emit_struct(w, msg, msg, _struct_names(msg), 0, msg.__name__)
    return "\n".join(w.lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--out", type=Path, default=ROOT / "kafkawire" / "protocol", help="directory to write into")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / STUB).write_text(render(), encoding="utf-8")
    print(args.out / STUB)
    return 0


if __name__ == "__main__":
    sys.exit(main())
