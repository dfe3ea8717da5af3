"""Regenerate ``kafka_python.json``: one deterministic message per (message, version, kafka-python class).

Run from the repository root: ``.venv/bin/python -m tests.protocol.vectors.make_vectors``.
Each message is filled with values derived from field names, passed through kafka-python's decoder
and *encoded by kafka-python*; the vector records those bytes and the values kafkawire must read.
"""

from __future__ import annotations

import base64
import hashlib
import json
import uuid
from pathlib import Path

from kafkawire import protocol
from kafkawire.protocol.schema import Field, StructSchema

from ..kp_compat import comparable, new_codec, old_codec
from ..strategies import jsonable, normalise

_INT_RANGES = {"int8": 2**7, "int16": 2**15, "int32": 2**31, "int64": 2**63, "uint16": 2**16, "uint32": 2**32}


def _seed(name: str, salt: int) -> int:
    return int.from_bytes(hashlib.sha256(f"{name}/{salt}".encode()).digest()[:8], "big")


def _scalar(t: str, name: str, salt: int):
    s = _seed(name, salt)
    if t in _INT_RANGES:
        r = _INT_RANGES[t]
        return s % r if t.startswith("uint") else (s % r) - r // 2
    if t == "bool":
        return bool(s & 1)
    if t == "float64":
        return (s % 10000) / 8.0
    if t == "string":
        return f"{name}-{s % 1000}"
    if t in ("bytes", "records"):
        return f"{name}:{s % 97}".encode()
    if t == "uuid":
        return uuid.UUID(int=s << 64 | s)
    raise AssertionError(t)


def _fill(schema: StructSchema, v: int, classes, salt: int):
    kw = {}
    for f in schema.fields:
        if v in f.versions:
            kw[f.name] = _value(f, v, classes, salt)
    return classes[id(schema)](**kw)


def _value(f: Field, v: int, classes, salt: int):
    if f.is_array:
        if f.struct is not None:
            return [_fill(f.struct, v, classes, salt * 3 + i) for i in range(2)]
        return [_scalar(f.type, f.name, salt * 5 + i) for i in range(2)]
    if f.struct is not None:
        return _fill(f.struct, v, classes, salt + 1)
    return _scalar(f.type, f.name, salt)


def main() -> None:
    out = []
    for req, resp in protocol.API_BY_KEY.values():
        for cls in (req, resp):
            for v in range(cls.MIN_VERSION, cls.MAX_VERSION + 1):
                obj = comparable(_fill(cls.SCHEMA.root, v, cls._classes, 1))
                body = obj.encode_body(v)
                for source, make in (("json", new_codec), ("legacy", old_codec)):
                    codec = make(cls.__name__, v)
                    if codec is None:
                        continue
                    dec, enc = codec
                    theirs = enc(dec(body))
                    out.append(
                        {
                            "message": cls.__name__,
                            "version": v,
                            "source": source,
                            "bytes": base64.b64encode(theirs).decode(),
                            "value": jsonable(normalise(cls.decode(theirs, v))),
                        }
                    )
    path = Path(__file__).with_name("kafka_python.json")
    path.write_text(json.dumps(out, indent=0, sort_keys=True) + "\n")
    print(f"{len(out)} vectors -> {path}")


if __name__ == "__main__":
    main()
