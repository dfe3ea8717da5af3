"""ACLs (KIP-140): describe, create and delete access control bindings, as Java's ``Admin`` and
``kafka-acls.sh`` do. A binding is a resource pattern (type, name, pattern type) plus an entry
(principal, host, operation, permission); a filter is the same with ``ANY`` / ``None`` as wildcards.
Names are Kafka's enum names (``"TOPIC"``, ``"LITERAL"``, ``"READ"``, ``"ALLOW"``, ...).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..client.cluster.cluster import Cluster
from ..client.net.deadline import Deadline
from ..protocol import CreateAclsRequest, DeleteAclsRequest, DescribeAclsRequest
from ..protocol.errors import raise_broker_error

__all__ = [
    "AclBinding",
    "AclBindingFilter",
    "RESOURCE_TYPES",
    "PATTERN_TYPES",
    "OPERATIONS",
    "PERMISSIONS",
    "describe_acls",
    "create_acls",
    "delete_acls",
]

#: Kafka's ``ResourceType`` codes.
RESOURCE_TYPES = {
    "UNKNOWN": 0,
    "ANY": 1,
    "TOPIC": 2,
    "GROUP": 3,
    "CLUSTER": 4,
    "TRANSACTIONAL_ID": 5,
    "DELEGATION_TOKEN": 6,
    "USER": 7,
}
#: Kafka's ``PatternType`` codes (KIP-290): MATCH (filters only) matches literal, wildcard and prefixed.
PATTERN_TYPES = {"UNKNOWN": 0, "ANY": 1, "MATCH": 2, "LITERAL": 3, "PREFIXED": 4}
#: Kafka's ``AclOperation`` codes.
OPERATIONS = {
    "UNKNOWN": 0,
    "ANY": 1,
    "ALL": 2,
    "READ": 3,
    "WRITE": 4,
    "CREATE": 5,
    "DELETE": 6,
    "ALTER": 7,
    "DESCRIBE": 8,
    "CLUSTER_ACTION": 9,
    "DESCRIBE_CONFIGS": 10,
    "ALTER_CONFIGS": 11,
    "IDEMPOTENT_WRITE": 12,
    "CREATE_TOKENS": 13,
    "DESCRIBE_TOKENS": 14,
    "TWO_PHASE_COMMIT": 15,
}
#: Kafka's ``AclPermissionType`` codes.
PERMISSIONS = {"UNKNOWN": 0, "ANY": 1, "DENY": 2, "ALLOW": 3}


def _code(table: dict[str, int], value: str, what: str, *, wildcard: bool) -> int:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str (a Kafka enum name), not {type(value).__name__}")
    code = table.get(value.upper())
    if code is None or code == 0 or (not wildcard and value.upper() in ("ANY", "MATCH")):
        allowed = [k for k in table if k != "UNKNOWN" and (wildcard or k not in ("ANY", "MATCH"))]
        raise ValueError(f"{what} {value!r} is not one of {', '.join(allowed)}")
    return code


def _name(table: dict[str, int], code: int) -> str:
    return next((k for k, v in table.items() if v == code), f"UNKNOWN({code})")


@dataclass(frozen=True)
class AclBinding:
    """One ACL: ``principal`` (``"User:alice"``) may (``"ALLOW"``) or may not (``"DENY"``) perform
    ``operation`` on the resources matching (``resource_type``, ``name``, ``pattern_type``) from
    ``host`` (``"*"``: any)."""

    resource_type: str
    name: str
    principal: str
    operation: str
    permission: str = "ALLOW"
    host: str = "*"
    pattern_type: str = "LITERAL"

    def codes(self) -> tuple[int, int, int, int]:
        """(resource type, pattern type, operation, permission) codes; a name that is not Kafka's (or a
        wildcard, which a binding cannot hold) raises ``ValueError``, a non-str ``TypeError``."""
        for attr in ("name", "principal", "host"):
            if not isinstance(getattr(self, attr), str):
                raise TypeError(f"AclBinding.{attr} must be a str, not {type(getattr(self, attr)).__name__}")
        return _codes(self, wildcard=False)


@dataclass(frozen=True)
class AclBindingFilter:
    """Which ACLs to describe or delete: ``None`` / ``"ANY"`` match anything; ``pattern_type`` ``"MATCH"``
    also matches the wildcard and prefixed patterns that apply to ``name``. ``AclBindingFilter()``
    matches every ACL."""

    resource_type: str = "ANY"
    name: str | None = None
    pattern_type: str = "ANY"
    principal: str | None = None
    host: str | None = None
    operation: str = "ANY"
    permission: str = "ANY"

    def codes(self) -> tuple[int, int, int, int]:
        """(resource type, pattern type, operation, permission) codes; ``ValueError`` / ``TypeError`` as
        :meth:`AclBinding.codes`."""
        for attr in ("name", "principal", "host"):
            if getattr(self, attr) is not None and not isinstance(getattr(self, attr), str):
                raise TypeError(f"AclBindingFilter.{attr} must be a str or None")
        return _codes(self, wildcard=True)


def _codes(acl: AclBinding | AclBindingFilter, wildcard: bool) -> tuple[int, int, int, int]:
    """(resource type, pattern type, operation, permission) codes of a binding or a filter."""
    tables = (RESOURCE_TYPES, PATTERN_TYPES, OPERATIONS, PERMISSIONS)
    rtype, ptype, op, perm = (
        _code(table, getattr(acl, attr), attr, wildcard=wildcard)
        for table, attr in zip(tables, ("resource_type", "pattern_type", "operation", "permission"))
    )
    return rtype, ptype, op, perm


def _filter_fields(flt: AclBindingFilter, version: int, what: str) -> dict[str, Any]:
    """The fields a DescribeAcls request and a DeleteAcls filter both carry, for ``flt``."""
    rtype, ptype, op, perm = flt.codes()
    pattern = _pattern_for(version, ptype, what)
    return {"resource_type_filter": rtype, "resource_name_filter": flt.name, "pattern_type_filter": pattern,
            "principal_filter": flt.principal, "host_filter": flt.host, "operation": op, "permission_type": perm}


def _binding(resource_type: int, resource_name: str, pattern_type: int, acl: Any) -> AclBinding:
    """An :class:`AclBinding` from the wire: a resource's codes and one ACL entry of a DescribeAcls or
    DeleteAcls answer (both carry ``principal``, ``host``, ``operation`` and ``permission_type``)."""
    return AclBinding(
        _name(RESOURCE_TYPES, resource_type),
        resource_name,
        acl.principal,
        _name(OPERATIONS, acl.operation),
        _name(PERMISSIONS, acl.permission_type),
        acl.host,
        _name(PATTERN_TYPES, pattern_type),
    )


def _pattern_for(version: int, code: int, what: str) -> int:
    # v0 knows only literal patterns (KIP-290 came with v1); a filter for ANY means LITERAL there.
    if version >= 1 or code == PATTERN_TYPES["LITERAL"]:
        return code
    if code == PATTERN_TYPES["ANY"]:
        return PATTERN_TYPES["LITERAL"]
    raise ValueError(f"{what}: the broker speaks only ACL v0, which has no {_name(PATTERN_TYPES, code)} patterns")


def describe_acls(cluster: Cluster, deadline: Deadline, flt: AclBindingFilter) -> list[AclBinding]:
    """See :meth:`kafkawire.admin.Admin.describe_acls`."""
    if not isinstance(flt, AclBindingFilter):
        raise TypeError("describe_acls takes an AclBindingFilter")
    flt.codes()  # bad names fail before anything is sent

    def attempt(d: Deadline) -> list[AclBinding]:
        conn = cluster.any_connection(d)
        version = conn.version_for(DescribeAclsRequest)
        req = DescribeAclsRequest(**_filter_fields(flt, version, "describe ACLs"))
        resp = conn.request(req, version, deadline=d)
        raise_broker_error(resp.error_code, resp.error_message, "describe ACLs")
        return [
            _binding(r.resource_type, r.resource_name, r.pattern_type, a)
            for r in resp.resources
            for a in r.acls
        ]

    return cluster.call(deadline, attempt, what="describe ACLs", topics=[])


def create_acls(cluster: Cluster, deadline: Deadline, bindings: Iterable[AclBinding]) -> None:
    """See :meth:`kafkawire.admin.Admin.create_acls`."""
    todo = list(bindings)
    if not all(isinstance(b, AclBinding) for b in todo):
        raise TypeError("create_acls takes AclBinding objects")
    codes = [b.codes() for b in todo]  # bad names fail before anything is sent

    def attempt(d: Deadline) -> None:
        conn = cluster.any_connection(d)
        version = conn.version_for(CreateAclsRequest)
        creations = [
            CreateAclsRequest.AclCreation(
                resource_type=rtype,
                resource_name=b.name,
                resource_pattern_type=_pattern_for(version, ptype, "create ACLs"),
                principal=b.principal,
                host=b.host,
                operation=op,
                permission_type=perm,
            )
            for b, (rtype, ptype, op, perm) in zip(todo, codes)
        ]
        resp = conn.request(CreateAclsRequest(creations=creations), version, deadline=d)
        for b, r in zip(todo, resp.results):
            raise_broker_error(r.error_code, r.error_message, f"create ACL {b}")

    if todo:
        cluster.call(deadline, attempt, what="create ACLs", topics=[])


def delete_acls(cluster: Cluster, deadline: Deadline, filters: Iterable[AclBindingFilter]) -> list[AclBinding]:
    """See :meth:`kafkawire.admin.Admin.delete_acls`."""
    todo = list(filters)
    if not all(isinstance(f, AclBindingFilter) for f in todo):
        raise TypeError("delete_acls takes AclBindingFilter objects")
    for f in todo:
        f.codes()

    def attempt(d: Deadline) -> list[AclBinding]:
        conn = cluster.any_connection(d)
        version = conn.version_for(DeleteAclsRequest)
        reqs = [DeleteAclsRequest.DeleteAclsFilter(**_filter_fields(f, version, "delete ACLs")) for f in todo]
        resp = conn.request(DeleteAclsRequest(filters=reqs), version, deadline=d)
        deleted = []
        for f, r in zip(todo, resp.filter_results):
            raise_broker_error(r.error_code, r.error_message, f"delete ACLs matching {f}")
            for m in r.matching_acls:
                raise_broker_error(m.error_code, m.error_message, "delete ACL")
                deleted.append(_binding(m.resource_type, m.resource_name, m.pattern_type, m))
        return deleted

    return cluster.call(deadline, attempt, what="delete ACLs", topics=[]) if todo else []
