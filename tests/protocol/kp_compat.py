"""Adapters to kafka-python 3.x's two protocol implementations (used by tests and the vector maker).

kafka-python ships JSON-schema classes (``kafka.protocol.consumer.fetch.FetchRequest`` ...) and, under
``kafka.protocol.old``, its older hand-written per-version classes. Both are used as independent
encoders/decoders to check byte-for-byte agreement.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

_NEW_MODULES = {
    "Produce": "producer.produce",
    "Fetch": "consumer.fetch",
    "ListOffsets": "consumer.offsets",
    "Metadata": "metadata.metadata",
    "OffsetCommit": "consumer.group",
    "OffsetFetch": "consumer.group",
    "FindCoordinator": "metadata.find_coordinator",
    "JoinGroup": "consumer.group",
    "Heartbeat": "consumer.group",
    "LeaveGroup": "consumer.group",
    "SyncGroup": "consumer.group",
    "DescribeGroups": "admin.groups",
    "ListGroups": "admin.groups",
    "SaslHandshake": "sasl",
    "ApiVersions": "metadata.api_versions",
    "CreateTopics": "admin.topics",
    "DeleteTopics": "admin.topics",
    "DeleteRecords": "admin.topics",
    "InitProducerId": "producer.transaction",
    "AddPartitionsToTxn": "producer.transaction",
    "AddOffsetsToTxn": "producer.transaction",
    "EndTxn": "producer.transaction",
    "TxnOffsetCommit": "producer.transaction",
    "DescribeConfigs": "admin.configs",
    "SaslAuthenticate": "sasl",
    "CreatePartitions": "admin.topics",
    "DeleteGroups": "admin.groups",
    "IncrementalAlterConfigs": "admin.configs",
    "DescribeCluster": "admin.cluster",
}
_OLD_MODULES = {
    "Produce": "produce",
    "Fetch": "fetch",
    "ListOffsets": "list_offsets",
    "Metadata": "metadata",
    "OffsetCommit": "commit",
    "OffsetFetch": "commit",
    "FindCoordinator": "find_coordinator",
    "JoinGroup": "group",
    "Heartbeat": "group",
    "LeaveGroup": "group",
    "SyncGroup": "group",
    "DescribeGroups": "admin",
    "ListGroups": "admin",
    "SaslHandshake": "sasl_handshake",
    "ApiVersions": "api_versions",
    "CreateTopics": "admin",
    "DeleteTopics": "admin",
    "DeleteRecords": "admin",
    "InitProducerId": "init_producer_id",
    "AddPartitionsToTxn": "add_partitions_to_txn",
    "AddOffsetsToTxn": "add_offsets_to_txn",
    "EndTxn": "end_txn",
    "TxnOffsetCommit": "txn_offset_commit",
    "DescribeConfigs": "admin",
    "SaslAuthenticate": "sasl_authenticate",
    "CreatePartitions": "admin",
    "DeleteGroups": "admin",
    "IncrementalAlterConfigs": "admin",
    "DescribeCluster": "admin",
}

# (decode(bytes) -> obj, encode(obj) -> bytes)
Codec = tuple[Callable[[bytes], Any], Callable[[Any], bytes]]


def _api(name: str) -> str:
    return name[: -len("Request")] if name.endswith("Request") else name[: -len("Response")]


def new_codec(name: str, version: int) -> Codec | None:
    """kafka-python's JSON-schema class for message ``name`` at ``version``, if it implements it."""
    module = _NEW_MODULES.get(_api(name))
    if module is None:  # an API kafka-python does not implement
        return None
    mod = importlib.import_module("kafka.protocol." + module)
    cls = getattr(mod, name)
    lo, hi = cls.valid_versions
    if not lo <= version <= hi:
        return None

    def dec(b: bytes) -> Any:
        return cls.decode(b, version=version)

    def enc(obj: Any) -> bytes:
        # Objects from decode() lack these slots; encode() reads them.
        for attr in ("_header", "_min_version", "_max_version"):
            try:
                object.__getattribute__(obj, attr)
            except AttributeError:
                setattr(obj, attr, None)
        return bytes(obj.encode(version=version))

    return dec, enc


def old_codec(name: str, version: int) -> Codec | None:
    """kafka-python's hand-written ``kafka.protocol.old`` class for ``name`` v``version``, if any."""
    module = _OLD_MODULES.get(_api(name))
    if module is None:
        return None
    mod = importlib.import_module("kafka.protocol.old." + module)
    versions = getattr(mod, name, None)
    if versions is None or version >= len(versions):
        return None
    cls = versions[version]
    return (lambda b: cls.decode(b)), (lambda obj: bytes(obj.encode()))


def comparable(obj: Any) -> Any:
    """Adjust a message so kafka-python reads it at the version it was encoded for.

    kafka-python decodes any ApiVersions response with a non-zero error code as v0, the KIP-511 rule
    for UNSUPPORTED_VERSION answers; kafkawire applies that rule in its negotiation instead. So the
    comparison uses error code 0 there.
    """
    if type(obj).__name__ == "ApiVersionsResponse":
        obj.error_code = 0
    return obj
