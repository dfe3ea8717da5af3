"""Consumer groups and share groups (KIP-932): listing, describing, deleting, and their offsets. Part of
:class:`kafkawire.admin.Admin`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..client.net.deadline import Deadline
from . import groups as _groups
from . import share_groups as _share
from .base import AdminBase
from .share_groups import ShareGroupDescription, ShareGroupOffset
from .types import (
    GroupDescription,
    GroupListing,
    GroupOffset,
)

__all__ = ["GroupsApi"]


class GroupsApi(AdminBase):
    """Consumer groups and share groups (KIP-932): listing, describing, deleting, and their offsets."""

    # -------------------------------------------------------------------------------------- groups
    def list_groups(
        self,
        *,
        states: Iterable[str] | None = None,
        types: Iterable[str] | None = None,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> list[GroupListing]:
        """Every group of the cluster (asking each broker), optionally only those in ``states``
        (``"Empty"``, ``"Stable"``, ...) or of ``types`` (``"classic"``, ``"consumer"``, KIP-848)."""
        return self._run(timeout_ms, deadline, _groups.list_groups, states=states, types=types)

    def describe_groups(
        self, groups: Iterable[str], *, timeout_ms: float | None = None, deadline: Deadline | None = None
    ) -> dict[str, GroupDescription]:
        """``{group: GroupDescription}``: state, assignor and members with their decoded assignments.
        A group that does not exist raises ``GroupIdNotFoundError`` (Kafka 4) or is reported ``Dead``."""
        return self._run(timeout_ms, deadline, _groups.describe_groups, list(groups))

    def delete_groups(
        self,
        groups: Iterable[str],
        *,
        missing_ok: bool = False,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> None:
        """Delete groups with no active member and their committed offsets (``GroupNotEmptyError`` for an
        active one; ``GroupIdNotFoundError`` for a missing one unless ``missing_ok``)."""
        self._run(timeout_ms, deadline, _groups.delete_groups, list(groups), missing_ok=missing_ok)

    def list_consumer_group_offsets(
        self,
        group: str,
        partitions: Iterable[tuple[str, int]] | None = None,
        *,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> dict[tuple[str, int], GroupOffset]:
        """``{(topic, partition): GroupOffset}``: committed offset, log end offset and lag, for every
        partition the group has committed (or for ``partitions``; -1 / lag None where nothing is)."""
        return self._run(timeout_ms, deadline, _groups.list_group_offsets, group, partitions)

    def alter_consumer_group_offsets(
        self,
        group: str,
        offsets: Mapping[tuple[str, int], int],
        *,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> None:
        """Set ``group``'s committed offsets (the group must have no active member: the coordinator
        refuses a commit from outside a live generation)."""
        self._run(timeout_ms, deadline, _groups.alter_group_offsets, group, offsets)

    def reset_consumer_group_offsets(
        self,
        group: str,
        topics: Iterable[str | tuple[str, int]] | None = None,
        *,
        to: str | int | None = None,
        to_timestamp: int | None = None,
        shift_by: int | None = None,
        dry_run: bool = False,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> dict[tuple[str, int], int]:
        """Reset an inactive group's offsets as ``kafka-consumer-groups.sh --reset-offsets`` does and
        return the new ones. ``topics``: names (all their partitions) and/or ``(topic, partition)``
        pairs; None: every partition the group has committed. Exactly one of ``to="earliest"`` /
        ``"latest"`` / an offset, ``to_timestamp`` (ms: the first offset at or after it, else the end)
        or ``shift_by`` (from the committed offset). Offsets outside the log go to its nearer end.
        ``dry_run``: compute only. Raises :class:`GroupNotInactiveError` when the group has members."""
        return self._run(
            timeout_ms,
            deadline,
            _groups.reset_group_offsets,
            group,
            topics,
            to=to,
            to_timestamp=to_timestamp,
            shift_by=shift_by,
            dry_run=dry_run,
        )

    # ---------------------------------------------------------------------------- group offsets
    def delete_consumer_group_offsets(
        self,
        group: str,
        partitions: Iterable[tuple[str, int]],
        *,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> None:
        """Delete ``group``'s committed offsets of ``partitions`` (KIP-496). Refused with
        ``GroupSubscribedToTopicError`` for a topic an active member of the group consumes."""
        self._run(timeout_ms, deadline, _groups.delete_group_offsets, group, partitions)

    # -------------------------------------------------------------------------- share groups (KIP-932)
    def list_share_groups(
        self, *, states: Iterable[str] | None = None, timeout_ms: float | None = None, deadline: Deadline | None = None
    ) -> list[GroupListing]:
        """Every share group of the cluster (ListGroups of type ``share``), optionally only those in ``states``."""
        return self._run(timeout_ms, deadline, _share.list_share_groups, states=states)

    def describe_share_groups(
        self, groups: Iterable[str], *, timeout_ms: float | None = None, deadline: Deadline | None = None
    ) -> dict[str, ShareGroupDescription]:
        """``{group: ShareGroupDescription}``: state, epochs, assignor, members with their assignments."""
        return self._run(timeout_ms, deadline, _share.describe_share_groups, list(groups))

    def list_share_group_offsets(
        self, group: str, topics: Iterable[str] | None = None, *, timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> dict[tuple[str, int], ShareGroupOffset]:
        """A share group's start offset (and lag) per partition: of ``topics``, or every partition it has state for."""
        return self._run(timeout_ms, deadline, _share.list_share_group_offsets, group, topics)

    def alter_share_group_offsets(
        self, group: str, offsets: Mapping[tuple[str, int], int], *, timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> None:
        """Set the start offsets of a share group with no members (NON_EMPTY_GROUP otherwise)."""
        self._run(timeout_ms, deadline, _share.alter_share_group_offsets, group, offsets)

    def reset_share_group_offsets(
        self, group: str, topics: Iterable[str], *, to: str | int = "earliest", to_timestamp: int | None = None,
        dry_run: bool = False, timeout_ms: float | None = None, deadline: Deadline | None = None,
    ) -> dict[tuple[str, int], int]:
        """Move an inactive share group's start offsets of ``topics`` to ``"earliest"``, ``"latest"``, an offset
        (outside the log: its nearer end) or the first record at ``to_timestamp`` (ms); the plan, applied
        unless ``dry_run`` (Kafka's ``kafka-share-groups.sh --reset-offsets``)."""
        return self._run(
            timeout_ms, deadline, _share.reset_share_group_offsets, group, topics, to=to, to_timestamp=to_timestamp,
            dry_run=dry_run,
        )

    def delete_share_group_offsets(
        self, group: str, topics: Iterable[str], *, timeout_ms: float | None = None, deadline: Deadline | None = None
    ) -> None:
        """Delete an inactive share group's state for whole ``topics``."""
        self._run(timeout_ms, deadline, _share.delete_share_group_offsets, group, topics)
