"""Registered Protobuf schemas as descriptors, in either form a registry holds them.

A registry holds a Protobuf schema as a base64 serialized ``FileDescriptorProto`` (what confluent-kafka's
``ProtobufSerializer`` registers, and what Confluent's registry answers when asked ``?format=serialized``) or
as ``.proto`` text (what Java's ``KafkaProtobufSerializer`` registers, and what Apicurio answers whatever it
is asked). Both are accepted: the schema and each of its references (imports, fetched from the registry
depth first) is decoded if it is base64 of a ``FileDescriptorProto``, else compiled as ``.proto`` text.

``.proto`` text is compiled by protoc as ``grpcio-tools`` ships it (the ``protobuf`` extra): protoc is the
language's reference parser, so a schema a registry accepted compiles here as it did there, and
``grpcio-tools`` bundles the well-known types' ``.proto`` files (``google/protobuf/timestamp.proto``...).
References are written to a temporary include directory (text) or handed over as a descriptor set
(``--descriptor_set_in``), so protoc resolves the imports by the names the references carry. protoc runs as
a child process (``python -m grpc_tools.protoc``), not in-process: a hostile schema that crashes or hangs the
compiler costs the child, not the decoding process, and the registry's timeout bounds it.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import subprocess
import sys
import tempfile
from typing import Any

from .._optional import require
from ..errors import KafkaWireError
from .registered import visit_references
from .registry import RegisteredSchema, SchemaRegistry

__all__ = ["SERIALIZED", "ProtobufSchema", "ProtobufSchemaError", "file_proto"]

#: The ``format`` kafkawire asks a registry for Protobuf schemas in (Confluent's registry: base64 descriptors).
SERIALIZED = "serialized"
_MAIN = "schema.proto"
_MAX_PROTOC_OUTPUT = 64 << 20


class ProtobufSchemaError(KafkaWireError, ValueError):
    """A Protobuf schema kafkawire cannot use (a broken descriptor, ``.proto`` text protoc refuses, an unknown
    message), naming the registry and the schema id it came from."""


def file_proto(text: str) -> Any:
    """``text`` as a ``FileDescriptorProto`` when it is base64 of one; None when it is not (``.proto`` text:
    it has spaces, semicolons or braces, none of which strict base64 allows)."""
    from google.protobuf import descriptor_pb2
    from google.protobuf.message import DecodeError

    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    fdp = descriptor_pb2.FileDescriptorProto()
    try:
        fdp.ParseFromString(raw)
    except DecodeError:
        return None
    return fdp


def _protoc_include() -> str:
    """The directory of the well-known types' ``.proto`` files that ``grpcio-tools`` bundles."""
    tools = require("grpc_tools", "compiling .proto text (kafkawire.serde.decode_protobuf)", extra="protobuf")
    return os.path.join(os.path.dirname(str(tools.__file__)), "_proto")


def compile_proto(name: str, text: str, deps: dict[str, str], timeout: float) -> list[Any]:
    """Compile ``.proto`` ``text`` (file ``name``) with protoc; its ``FileDescriptorProto`` and those of its
    imports, dependencies first. ``deps`` are the texts (either form) of the files it may import, by name.
    A refusal is a ValueError with protoc's message."""
    from google.protobuf import descriptor_pb2

    include = _protoc_include()
    with tempfile.TemporaryDirectory(prefix="kafkawire-protoc-") as tmp:
        src = os.path.join(tmp, "src")
        os.mkdir(src)
        given = descriptor_pb2.FileDescriptorSet()
        for dep_name, dep_text in [*deps.items(), (name, text)]:
            fdp = file_proto(dep_text) if dep_name != name else None
            if fdp is not None:
                fdp.name = dep_name
                given.file.append(fdp)
                continue
            path = os.path.normpath(os.path.join(src, dep_name))
            if os.path.isabs(dep_name) or not path.startswith(src + os.sep):
                raise ValueError(f"file name {dep_name!r} leaves the include directory")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(dep_text)
        out = os.path.join(tmp, "out.pb")
        cmd = [sys.executable, "-m", "grpc_tools.protoc", f"--proto_path={src}", f"--proto_path={include}",
               f"--descriptor_set_out={out}", "--include_imports"]
        if given.file:
            given_path = os.path.join(tmp, "given.pb")
            with open(given_path, "wb") as f:
                f.write(given.SerializeToString())
            cmd.append(f"--descriptor_set_in={given_path}")
        cmd.append(name)
        try:
            done = subprocess.run(cmd, cwd=tmp, capture_output=True, timeout=max(timeout, 1.0), check=False)
        except subprocess.TimeoutExpired:
            raise ValueError(f"protoc did not finish within {timeout:g}s") from None
        if done.returncode != 0 or not os.path.exists(out):
            text_out = (done.stderr or done.stdout).decode("utf-8", "replace").replace(src + os.sep, "")
            # protoc's own log lines (absl's banner, W/I lines) are not the refusal
            msg = "\n".join(ln for ln in text_out.splitlines()
                            if ln.strip() and not re.match(r"(WARNING: All log messages|[WI]\d{4} )", ln))
            raise ValueError(f"protoc refused it: {msg[:2000] or f'exit status {done.returncode}'}")
        if os.path.getsize(out) > _MAX_PROTOC_OUTPUT:
            raise ValueError("protoc's descriptor set is larger than 64 MiB")
        result = descriptor_pb2.FileDescriptorSet()
        with open(out, "rb") as f:
            result.ParseFromString(f.read())
    return list(result.file)


class ProtobufSchema:
    """One registered Protobuf schema: its descriptor pool (its references and the well-known types it
    imports loaded first) and its file."""

    def __init__(self, registry: SchemaRegistry, rs: RegisteredSchema) -> None:
        require("google.protobuf", "kafkawire.serde.decode_protobuf", extra="protobuf")
        from google.protobuf import descriptor_pool

        self.where = f"schema registry {registry.urls[0]} (schema id {rs.schema_id})"
        if rs.schema_type != "PROTOBUF":
            raise ProtobufSchemaError(f"{self.where}: a {rs.schema_type} schema, not Protobuf")
        self.pool = descriptor_pool.DescriptorPool()
        self._added: set[str] = set()
        self._timeout = registry.timeout
        texts: dict[str, str] = {}

        def load_ref(ref: Any, sub: RegisteredSchema, depth: int) -> None:
            if ref.name not in texts:
                texts[ref.name] = sub.schema
                self._load(ref.name, sub.schema, texts)

        visit_references(registry, rs.references, load_ref, ProtobufSchemaError, format=SERIALIZED)
        main = _MAIN if _MAIN not in texts else f"kafkawire-schema-{rs.schema_id}.proto"
        self.file = self.pool.FindFileByName(self._load(main, rs.schema, texts))
        self.classes: dict[Any, Any] = {}

    def _load(self, name: str, text: str, texts: dict[str, str]) -> str:
        """Add file ``name`` (either form) to the pool; the name it has there."""
        fdp = file_proto(text)
        if fdp is not None:
            fdp.name = fdp.name if name == _MAIN and fdp.name else name
            self._add(fdp)
            return str(fdp.name)
        try:
            protos = compile_proto(name, text, {k: v for k, v in texts.items() if k != name}, self._timeout)
        except ValueError as e:
            raise ProtobufSchemaError(f"{self.where}: {name} is neither a base64 FileDescriptorProto nor .proto "
                                      f"text protoc compiles: {e}") from None
        for p in protos:
            self._add(p)
        return name

    def _add(self, fdp: Any) -> None:
        from google.protobuf import descriptor_pb2, descriptor_pool

        if fdp.name in self._added:
            return
        for dep in fdp.dependency:
            if dep in self._added:
                continue
            try:  # well-known types (google/protobuf/*.proto) come with the runtime
                known = descriptor_pool.Default().FindFileByName(dep)
            except KeyError:
                continue
            proto = descriptor_pb2.FileDescriptorProto()
            known.CopyToProto(proto)
            self._add(proto)
        try:
            self.pool.Add(fdp)
        except Exception as e:  # the runtime raises TypeError, KeyError or its own errors
            raise ProtobufSchemaError(f"{self.where}: descriptor {fdp.name!r} does not load: {e}") from None
        self._added.add(fdp.name)

    def named(self, name: str) -> tuple[Any, list[int]]:
        """The message called ``name`` (full or short name) and its message indexes."""
        def walk(types: list[Any], path: list[int]) -> Any:
            for i, d in enumerate(types):
                if name in (d.full_name, d.name):
                    return d, path + [i]
                found = walk(list(d.nested_types), path + [i])
                if found is not None:
                    return found
            return None

        found: tuple[Any, list[int]] | None = walk(list(self.file.message_types_by_name.values()), [])
        if found is None:
            raise ProtobufSchemaError(f"{self.where}: no message {name!r} in {self.file.name}")
        return found

    def only(self) -> tuple[Any, list[int]]:
        """The file's one top-level message (a file with several needs ``message=``)."""
        tops = list(self.file.message_types_by_name.values())
        if len(tops) != 1:
            raise ProtobufSchemaError(f"{self.where}: {self.file.name} has {len(tops)} top-level messages: say "
                                      "which (message=)")
        return tops[0], [0]

    def message(self, indexes: list[int]) -> Any:
        """The message that Confluent message ``indexes`` name (a ValueError when they name none)."""
        types = list(self.file.message_types_by_name.values())
        desc = None
        for depth, i in enumerate(indexes):
            if not 0 <= i < len(types):
                raise ValueError(f"message index {i} at depth {depth} is out of range ({len(types)} messages)")
            desc = types[i]
            types = list(desc.nested_types)
        if desc is None:
            raise ValueError("no message index")
        return desc

    def message_class(self, desc: Any) -> Any:
        cls = self.classes.get(desc)
        if cls is None:
            from google.protobuf import message_factory

            cls = self.classes[desc] = message_factory.GetMessageClass(desc)
        return cls
