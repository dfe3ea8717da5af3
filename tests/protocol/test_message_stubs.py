"""``kafkawire/protocol/_messages.pyi`` (the message classes' types, for mypy) matches the schemas it was generated
from, and the types it gives are what the decoder really stores.

The runtime builds the classes from ``messages/*.schema`` at import; the stub is generated from those classes by
``scripts/gen_message_stubs.py`` and checked in. A schema change without regenerating fails here, naming the command.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from kafkawire.protocol import API_BY_KEY, FetchResponse
from kafkawire.protocol.consumer_protocol import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
    StickyAssignorUserData,
)
from kafkawire.protocol.message import Message, Struct
from kafkawire.protocol.schema import StructSchema

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gen_message_stubs.py"
STUB = ROOT / "kafkawire" / "protocol" / "_messages.pyi"

sys.path.insert(0, str(SCRIPT.parent))
import gen_message_stubs  # noqa: E402

MESSAGES: list[type[Message]] = [c for pair in API_BY_KEY.values() for c in pair] + [
    ConsumerProtocolSubscription,
    ConsumerProtocolAssignment,
    StickyAssignorUserData,
]


def test_checked_in_stub_matches_the_schemas(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    fresh = (tmp_path / "_messages.pyi").read_text(encoding="utf-8")
    assert fresh == STUB.read_text(encoding="utf-8"), (
        f"{STUB.relative_to(ROOT)} is out of date with kafkawire/protocol/messages/*.schema: "
        f"run `{gen_message_stubs.COMMAND}` and commit the result"
    )


def test_stub_names_every_message_and_nested_struct() -> None:
    text = STUB.read_text(encoding="utf-8")
    for msg in MESSAGES:
        assert f"\nclass {msg.__name__}(" in text, msg.__name__
        for attr, v in vars(msg).items():
            if isinstance(v, type) and issubclass(v, Struct) and not issubclass(v, Message):
                assert f"    class {attr}(" in text, f"{msg.__name__}.{attr}"


def _allowed(type_text: str, msg: type[Message]) -> tuple[type, ...]:
    """The runtime classes a stub type such as ``list[FetchResponse.PartitionData] | None`` admits at top level."""
    out: list[type] = []
    for part in type_text.split(" | "):
        part = part.strip()
        if part.startswith("list["):
            out.append(list)
        elif part == "None":
            out.append(type(None))
        elif part == "_ProduceRecords":
            out.extend([bytes, memoryview, type(None)])
        elif "." in part:
            owner, _, nested = part.partition(".")
            assert owner == msg.__name__, part
            out.append(getattr(msg, nested))
        else:
            out.append({"int": int, "float": float, "bool": bool, "str": str, "bytes": bytes, "UUID": uuid.UUID,
                        "memoryview": memoryview}[part])
    return tuple(out)


def _check(obj: Struct, msg: type[Message], where: str) -> int:
    """Every field of a decoded ``obj`` is set and of a class its stub type admits; nested structs too."""
    names = gen_message_stubs._struct_names(msg)
    checked = 0
    for f in type(obj).STRUCT_SCHEMA.fields:
        value = getattr(obj, f.name)  # AttributeError here: the decoder left a field unset
        allowed = _allowed(gen_message_stubs._field_type(f, msg, names), msg)
        assert isinstance(value, allowed) and not (isinstance(value, bool) and bool not in allowed), (
            f"{where}.{f.name} = {value!r} is not {allowed}"
        )
        checked += 1
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, Struct):
                checked += _check(item, msg, f"{where}.{f.name}")
    return checked


@pytest.mark.parametrize("msg", MESSAGES, ids=lambda m: m.__name__)
def test_decoded_fields_have_the_stub_types(msg: type[Message]) -> None:
    """Each version's decoder sets every field (the version's own or the default of one it lacks) to a value of
    the type the stub gives: one element in every array, so that nested structs are decoded and checked too."""

    def filled(st: StructSchema, version: int) -> Struct:
        kwargs: dict[str, object] = {}
        for f in st.fields:
            if f.struct is not None and version in f.versions:
                nested = filled(f.struct, version)
                kwargs[f.name] = [nested] if f.is_array else nested
            elif f.type == "records" and version in f.versions:
                kwargs[f.name] = b""  # its default is null, which not every version can carry
        return msg._classes[id(st)](**kwargs)

    for version in range(msg.MIN_VERSION, msg.MAX_VERSION + 1):
        body = filled(msg.SCHEMA.root, version).encode_body(version)  # type: ignore[attr-defined]
        decoded = msg.decode(body, version)
        assert _check(decoded, msg, f"{msg.__name__} v{version}") >= len(msg.FIELDS)


def test_records_decode_as_a_zero_copy_memoryview() -> None:
    part = FetchResponse.PartitionData(partition_index=0, records=b"\x00" * 0)
    body = FetchResponse(responses=[FetchResponse.FetchableTopicResponse(topic="t", partitions=[part])]).encode_body(4)
    decoded = FetchResponse.decode(body, 4).responses[0].partitions[0]
    assert isinstance(decoded.records, memoryview)
