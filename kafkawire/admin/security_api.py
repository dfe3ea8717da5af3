"""Who may do what: ACLs, client quotas and SCRAM credentials. Part of :class:`kafkawire.admin.Admin`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..client.net.deadline import Deadline
from . import acls as _acls
from . import quotas as _quotas
from . import scram as _scram
from .acls import AclBinding, AclBindingFilter
from .base import AdminBase

__all__ = ["SecurityApi"]


class SecurityApi(AdminBase):
    """Who may do what: ACLs, client quotas and SCRAM credentials."""

    # ---------------------------------------------------------------------------------------- ACLs
    def describe_acls(
        self,
        acl_filter: AclBindingFilter | None = None,
        *,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> list[AclBinding]:
        """The ACLs matching ``acl_filter`` (default: every ACL). A cluster without an authorizer raises
        ``SecurityDisabledError``."""
        return self._run(timeout_ms, deadline, _acls.describe_acls, acl_filter or AclBindingFilter())

    def create_acls(
        self, bindings: Iterable[AclBinding], *, timeout_ms: float | None = None, deadline: Deadline | None = None
    ) -> None:
        """Create ACLs (creating one that exists already changes nothing)."""
        self._run(timeout_ms, deadline, _acls.create_acls, bindings)

    def delete_acls(
        self,
        filters: Iterable[AclBindingFilter],
        *,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> list[AclBinding]:
        """Delete every ACL matching any of ``filters``; returns the ACLs deleted."""
        return self._run(timeout_ms, deadline, _acls.delete_acls, filters)

    # ------------------------------------------------------------------------------ client quotas
    def describe_client_quotas(
        self,
        entity: Mapping[str, str | None] | None = None,
        *,
        strict: bool = False,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> dict[tuple[tuple[str, str | None], ...], dict[str, float]]:
        """Quotas by entity (KIP-546): ``{(("client-id", "etl"),): {"producer_byte_rate": 1024.0}}``.
        ``entity`` (``{"user": "alice"}``, a name None for the default entity) narrows to entities that
        include it (``strict``: exactly it); None: every entity with a quota."""
        return self._run(timeout_ms, deadline, _quotas.describe_client_quotas, entity, strict=strict)

    def alter_client_quotas(
        self,
        changes: Iterable[tuple[Mapping[str, str | None], Mapping[str, float | None]]],
        *,
        validate_only: bool = False,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> None:
        """Set (a number) or remove (None) quotas: ``[({"client-id": "etl"}, {"producer_byte_rate":
        1024})]``; quotas not named keep their values."""
        self._run(timeout_ms, deadline, _quotas.alter_client_quotas, list(changes), validate_only=validate_only)

    # --------------------------------------------------------------------------- SCRAM credentials
    def describe_user_scram_credentials(
        self, users: Iterable[str] | None = None, *, timeout_ms: float | None = None, deadline: Deadline | None = None
    ) -> dict[str, dict[str, int]]:
        """``{user: {mechanism: iterations}}`` for ``users`` (None: every user with a SCRAM credential;
        a named user without one raises ``ResourceNotFoundError``)."""
        return self._run(timeout_ms, deadline, _scram.describe_user_scram_credentials, users)

    def alter_user_scram_credentials(
        self,
        *,
        upsert: Iterable[tuple[str, str, str, int]] = (),
        delete: Iterable[tuple[str, str]] = (),
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> None:
        """Set SCRAM credentials ``(user, "SCRAM-SHA-256" | "SCRAM-SHA-512", password, iterations)`` (the
        password is salted here; only the salt and salted password are sent) and delete
        ``(user, mechanism)`` ones. Kafka takes one alteration per user in a request
        (``DuplicateResourceError`` otherwise)."""
        self._run(timeout_ms, deadline, _scram.alter_user_scram_credentials, upsert=upsert, delete=delete)
