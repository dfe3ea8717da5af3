"""Build the message classes of every supported API from the schemas in ``kafkawire/protocol/messages/``."""

from __future__ import annotations

from importlib import resources

from ._records import FetchPartitionMixin, records_to_bytes
from .message import Request, Response, build_message

__all__ = ["API_MODULES", "build_pair", "read_schema_blocks"]

#: API key -> name of its schema file, ``kafkawire/protocol/messages/<name>.schema`` (request, then response).
API_MODULES: dict[int, str] = {
    0: "produce",
    1: "fetch",
    2: "list_offsets",
    3: "metadata",
    8: "offset_commit",
    9: "offset_fetch",
    10: "find_coordinator",
    11: "join_group",
    12: "heartbeat",
    13: "leave_group",
    14: "sync_group",
    15: "describe_groups",
    16: "list_groups",
    17: "sasl_handshake",
    18: "api_versions",
    19: "create_topics",
    20: "delete_topics",
    21: "delete_records",
    22: "init_producer_id",
    23: "offset_for_leader_epoch",
    24: "add_partitions_to_txn",
    25: "add_offsets_to_txn",
    26: "end_txn",
    27: "write_txn_markers",
    28: "txn_offset_commit",
    29: "describe_acls",
    30: "create_acls",
    31: "delete_acls",
    32: "describe_configs",
    35: "describe_log_dirs",
    36: "sasl_authenticate",
    37: "create_partitions",
    42: "delete_groups",
    43: "elect_leaders",
    44: "incremental_alter_configs",
    45: "alter_partition_reassignments",
    46: "list_partition_reassignments",
    47: "offset_delete",
    48: "describe_client_quotas",
    49: "alter_client_quotas",
    50: "describe_user_scram_credentials",
    51: "alter_user_scram_credentials",
    57: "update_features",
    60: "describe_cluster",
    61: "describe_producers",
    65: "describe_transactions",
    66: "list_transactions",
    68: "consumer_group_heartbeat",
    69: "consumer_group_describe",
    75: "describe_topic_partitions",
    76: "share_group_heartbeat",
    77: "share_group_describe",
    78: "share_fetch",
    79: "share_acknowledge",
    90: "describe_share_group_offsets",
    91: "alter_share_group_offsets",
    92: "delete_share_group_offsets",
}

# Behaviour added to particular generated structs, by struct name.
_RESPONSE_MIXINS = {"fetch": {"PartitionData": FetchPartitionMixin}}


def build_pair(module: str) -> tuple[type[Request], type[Response]]:
    """Build (RequestClass, ResponseClass) from ``kafkawire/protocol/messages/<module>.schema``."""
    request_text, response_text = read_schema_pair(module)
    req = build_message(request_text, Request)
    resp = build_message(response_text, Response, _RESPONSE_MIXINS.get(module))
    if req.API_KEY != resp.API_KEY or (req.MIN_VERSION, req.MAX_VERSION) != (resp.MIN_VERSION, resp.MAX_VERSION):
        raise ValueError(f"{module}: request and response schemas disagree on key or versions")
    if module == "produce":
        req._records_encoder = staticmethod(records_to_bytes)
    req.RESPONSE = resp
    resp.REQUEST = req
    return req, resp


def read_schema_pair(module: str) -> tuple[str, str]:
    """The request and the response schema text of ``messages/<module>.schema``.

    A schema file holds two blocks, each starting at an unindented line that names its message (``#`` lines
    are comments): the request, then the response. Schemas are data files, as Kafka's own JSON message specs
    are, so that they read as the wire format and nothing else.
    """
    blocks = read_schema_blocks(module)
    names = [b.split()[0] for b in blocks]
    if len(blocks) != 2 or not names[0].endswith("Request") or not names[1].endswith("Response"):
        raise ValueError(f"{module}.schema: expected a request and a response block, found {names}")
    return blocks[0], blocks[1]


def read_schema_blocks(module: str) -> list[str]:
    """The message blocks of ``messages/<module>.schema``, in file order (comments left out)."""
    text = resources.files(f"{__package__}.messages").joinpath(f"{module}.schema").read_text(encoding="utf-8")
    blocks: list[list[str]] = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            blocks.append([])
        if not blocks:
            raise ValueError(f"{module}.schema: a field line before any message line: {line!r}")
        blocks[-1].append(line)
    return ["\n".join(b) for b in blocks]
