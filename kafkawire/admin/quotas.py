"""Client quotas (KIP-546): the byte-rate, request-rate and connection quotas set for users, client ids
and IPs, described and altered as Java's ``Admin.describeClientQuotas`` / ``alterClientQuotas`` and
``kafka-configs.sh --entity-type users|clients|ips`` do.

An entity is a dict of entity type to name: ``{"user": "alice"}``, ``{"client-id": "etl"}``,
``{"user": "alice", "client-id": "etl"}``; a name ``None`` is the type's default entity."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..client.cluster.cluster import Cluster
from ..client.net.deadline import Deadline
from ..protocol import AlterClientQuotasRequest, DescribeClientQuotasRequest
from ..protocol.errors import raise_broker_error

__all__ = ["ENTITY_TYPES", "Entity", "describe_client_quotas", "alter_client_quotas"]

ENTITY_TYPES = ("user", "client-id", "ip")
#: An entity: entity type -> name (None: the default entity of that type), as a sorted tuple of pairs.
Entity = tuple[tuple[str, "str | None"], ...]


def _entity(spec: Mapping[str, str | None]) -> Entity:
    if not isinstance(spec, Mapping) or not spec:
        raise TypeError("an entity is a non-empty {entity type: name or None} mapping")
    for k, v in spec.items():
        if k not in ENTITY_TYPES:
            raise ValueError(f"entity type must be one of {ENTITY_TYPES}, not {k!r}")
        if v is not None and not isinstance(v, str):
            raise TypeError("entity names are str (or None for the default entity)")
    return tuple(sorted(spec.items()))


def describe_client_quotas(
    cluster: Cluster,
    deadline: Deadline,
    entity: Mapping[str, str | None] | None = None,
    *,
    strict: bool = False,
) -> dict[Entity, dict[str, float]]:
    """See :meth:`kafkawire.admin.Admin.describe_client_quotas`."""
    components = []
    if entity is not None:
        for etype, name in _entity(entity):
            # match_type 0: exactly this name, 1: the default entity (KIP-546)
            components.append(
                DescribeClientQuotasRequest.ComponentData(entity_type=etype, match_type=0 if name else 1, match=name)
            )

    def attempt(d: Deadline) -> dict[Entity, dict[str, float]]:
        conn = cluster.any_connection(d)
        req = DescribeClientQuotasRequest(components=components, strict=strict)
        resp = conn.request(req, conn.version_for(DescribeClientQuotasRequest), deadline=d)
        raise_broker_error(resp.error_code, resp.error_message, "describe client quotas")
        return {
            tuple(sorted((e.entity_type, e.entity_name) for e in entry.entity)): {v.key: v.value for v in entry.values}
            for entry in resp.entries or ()
        }

    return cluster.call(deadline, attempt, what="describe client quotas", topics=[])


def alter_client_quotas(
    cluster: Cluster,
    deadline: Deadline,
    changes: list[tuple[Mapping[str, str | None], Mapping[str, float | None]]],
    *,
    validate_only: bool = False,
) -> None:
    """See :meth:`kafkawire.admin.Admin.alter_client_quotas`."""
    entries: list[Any] = []
    for entity, quotas in changes:
        if not isinstance(quotas, Mapping):
            raise TypeError("quotas are {name: value, or None to remove it}")
        ops = []
        for key, value in quotas.items():
            if value is not None and (not isinstance(value, (int, float)) or isinstance(value, bool)):
                raise TypeError(f"quota {key!r} must be a number or None")
            ops.append(
                AlterClientQuotasRequest.OpData(key=key, value=float(value or 0.0), remove=value is None)
            )
        entries.append(
            AlterClientQuotasRequest.EntryData(
                entity=[
                    AlterClientQuotasRequest.EntityData(entity_type=t, entity_name=n) for t, n in _entity(entity)
                ],
                ops=ops,
            )
        )

    def attempt(d: Deadline) -> None:
        conn = cluster.any_connection(d)
        req = AlterClientQuotasRequest(entries=entries, validate_only=validate_only)
        resp = conn.request(req, conn.version_for(AlterClientQuotasRequest), deadline=d)
        for e in resp.entries:
            who = ", ".join(f"{x.entity_type}={x.entity_name}" for x in e.entity)
            raise_broker_error(e.error_code, e.error_message, f"alter the quotas of {who}")

    if entries:
        cluster.call(deadline, attempt, what="alter client quotas", topics=[])
