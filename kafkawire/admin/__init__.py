"""Cluster administration: topics, configs, partitions, records and consumer groups.

::

    from kafkawire.admin import Admin, AlterConfigOp

    with Admin("localhost:9092") as admin:
        admin.describe_cluster()                          # cluster id, controller, brokers
        admin.describe_topics(["clicks"])                 # partitions, leaders, replicas, ISR, topic id
        admin.describe_configs(["clicks"])                # {ConfigResource: {name: ConfigEntry}}
        admin.alter_configs({"clicks": [AlterConfigOp("retention.ms", "set", "3600000")]})
        admin.create_partitions({"clicks": 12})           # grow to 12 partitions
        admin.delete_records({("clicks", 0): 1000})       # drop everything before offset 1000
        admin.list_groups()
        admin.describe_groups(["etl"])                    # members with their decoded assignments
        admin.list_consumer_group_offsets("etl")          # committed, log end offset and lag
        admin.reset_consumer_group_offsets("etl", ["clicks"], to="earliest")

:class:`Admin` wraps a :class:`kafkawire.client.Client` (its own, built from ``bootstrap_servers`` and
``client_options``, or one passed as ``client=``, which it then does not close). Every method is one
blocking call with one deadline: ``timeout_ms=`` (default the client's ``retry_timeout_ms``) bounds it,
retries included; errors a broker marks retriable are retried until then, others are raised at once as
:mod:`kafkawire.protocol.errors` classes. The work is done by :mod:`.topics` and :mod:`.groups`; the result
types are in :mod:`.types`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from ..client import Client
from ..client.errors import GroupNotInactiveError
from ..client.net.deadline import Deadline
from ..client.types import NewTopic
from ..protocol.errors import BrokerError

if TYPE_CHECKING:
    from ..client.cluster.cluster import Cluster
from . import acls as _acls
from . import features as _features
from . import groups as _groups
from . import log_dirs as _log_dirs
from . import partitions as _partitions
from . import quotas as _quotas
from . import scram as _scram
from . import share_groups as _share
from . import topics as _topics
from . import transactions as _transactions
from .acls import AclBinding, AclBindingFilter
from .features import FeatureMetadata
from .log_dirs import LogDirDescription, ReplicaInfo
from .partitions import PartitionInfo, Reassignment, TopicPartitionsDescription
from .share_groups import ShareGroupDescription, ShareGroupOffset, ShareMemberDescription
from .transactions import ProducerState, TransactionDescription, TransactionListing
from .types import (
    AlterConfigOp,
    BrokerDescription,
    ClusterDescription,
    ConfigEntry,
    ConfigResource,
    ConfigSynonym,
    GroupDescription,
    GroupListing,
    GroupOffset,
    MemberDescription,
    PartitionDescription,
    TopicDescription,
)

__all__ = [
    "AclBinding",
    "AclBindingFilter",
    "Admin",
    "AlterConfigOp",
    "BrokerDescription",
    "ClusterDescription",
    "ConfigEntry",
    "ConfigResource",
    "ConfigSynonym",
    "FeatureMetadata",
    "GroupDescription",
    "GroupListing",
    "GroupNotInactiveError",
    "GroupOffset",
    "LogDirDescription",
    "MemberDescription",
    "PartitionDescription",
    "PartitionInfo",
    "ProducerState",
    "Reassignment",
    "ReplicaInfo",
    "ShareGroupDescription",
    "ShareGroupOffset",
    "ShareMemberDescription",
    "TopicDescription",
    "TopicPartitionsDescription",
    "TransactionDescription",
    "TransactionListing",
]


_P = ParamSpec("_P")
_T = TypeVar("_T")


class Admin:
    """Administration of one cluster. ``Admin("host:9092", **client_options)`` or ``Admin(client=c)``.

    Thread-safe (calls are serialised on the client's lock). Use as a context manager or call :meth:`close`.
    """

    def __init__(
        self, bootstrap_servers: str | Sequence[str] | None = None, *, client: Client | None = None, **options: Any
    ) -> None:
        if (client is None) == (bootstrap_servers is None):
            raise ValueError("give bootstrap_servers (and client options) or client=, not both")
        if client is not None and options:
            raise ValueError(f"client options {sorted(options)} given with client=")
        self._owns_client = client is None
        #: The client whose connections and retry policy the calls use.
        self.client: Client = client if client is not None else Client(bootstrap_servers, **options)  # type: ignore[arg-type]

    def close(self) -> None:
        """Close the client (unless it was passed in as ``client=``)."""
        if self._owns_client:
            self.client.close()

    def __enter__(self) -> Admin:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(
        self,
        timeout_ms: float | None,
        deadline: Deadline | None,
        fn: Callable[Concatenate[Cluster, Deadline, _P], _T],
        *args: _P.args,
        **kwargs: _P.kwargs,
    ) -> _T:
        d = self.client.deadline(timeout_ms, deadline)
        cluster = self.client.cluster
        with cluster.lock:
            return fn(cluster, d, *args, **kwargs)

    # ------------------------------------------------------------------------------------- cluster
    def describe_cluster(
        self, *, timeout_ms: float | None = None, deadline: Deadline | None = None
    ) -> ClusterDescription:
        """The cluster id, the controller's node id and every broker (host, port, rack, fenced)."""
        return self._run(timeout_ms, deadline, _topics.describe_cluster)

    # -------------------------------------------------------------------------------------- topics
    def create_topics(self, topics: Iterable[str | NewTopic] | Mapping[str, int], **kwargs: Any) -> None:
        """:meth:`kafkawire.client.Client.create_topics`."""
        self.client.create_topics(topics, **kwargs)

    def delete_topics(self, names: Iterable[str], **kwargs: Any) -> None:
        """:meth:`kafkawire.client.Client.delete_topics`."""
        self.client.delete_topics(names, **kwargs)

    def describe_topics(
        self, names: Iterable[str] | None = None, *, timeout_ms: float | None = None, deadline: Deadline | None = None
    ) -> dict[str, TopicDescription]:
        """``{name: TopicDescription}``: topic id, partitions with leader, leader epoch, replicas, ISR and
        offline replicas. ``names`` None: every topic but the internal ones. A topic that does not exist
        raises ``UnknownTopicOrPartitionError``."""
        return self._run(timeout_ms, deadline, _topics.describe_topics, names)

    def create_partitions(
        self,
        counts: Mapping[str, int],
        *,
        validate_only: bool = False,
        wait: bool = True,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> None:
        """Grow topics to ``{topic: total partition count}`` (a count not above the current one raises
        ``InvalidPartitionsError``). With ``wait``, returns once the new partitions have leaders."""
        self._run(timeout_ms, deadline, _topics.create_partitions, counts, validate_only=validate_only, wait=wait)

    def delete_records(
        self,
        before: Mapping[tuple[str, int], int],
        *,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> dict[tuple[str, int], int]:
        """Delete the records before ``{(topic, partition): offset}`` (-1: the high watermark, i.e. every
        record); returns each partition's new low watermark (its first kept offset)."""
        return self._run(timeout_ms, deadline, _topics.delete_records, before)

    # ------------------------------------------------------------------------------------- configs
    def describe_configs(
        self,
        resources: Iterable[ConfigResource | str],
        *,
        names: Iterable[str] | None = None,
        synonyms: bool = False,
        documentation: bool = False,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> dict[ConfigResource, dict[str, ConfigEntry]]:
        """Configs of topics (plain names) or :class:`ConfigResource` s (``ConfigResource.broker(1)``, ...):
        every config, or only ``names``; each with its value, source and flags (and ``synonyms``, the
        values it would take from lower-precedence sources, when asked)."""
        return self._run(
            timeout_ms,
            deadline,
            _topics.describe_configs,
            resources,
            names=names,
            synonyms=synonyms,
            documentation=documentation,
        )

    def alter_configs(
        self,
        changes: Mapping[ConfigResource | str, Iterable[AlterConfigOp]],
        *,
        validate_only: bool = False,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> None:
        """Change configs incrementally (KIP-339): ``{resource: [AlterConfigOp(name, op, value), ...]}``
        with ``op`` ``"set"``, ``"delete"`` (back to the default), ``"append"`` or ``"subtract"`` (list
        configs). Configs not named keep their values."""
        self._run(timeout_ms, deadline, _topics.alter_configs, changes, validate_only=validate_only)

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

    # --------------------------------------------------------------------- producers and transactions
    def describe_producers(
        self,
        partitions: Iterable[tuple[str, int]],
        *,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> dict[tuple[str, int], list[ProducerState]]:
        """``{(topic, partition): [ProducerState]}``: the idempotent and transactional producers each
        partition's leader tracks, with the start offset of their open transaction (KIP-664)."""
        return self._run(timeout_ms, deadline, _transactions.describe_producers, partitions)

    def list_transactions(
        self,
        *,
        states: Iterable[str] | None = None,
        producer_ids: Iterable[int] | None = None,
        duration_ms: int | None = None,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> list[TransactionListing]:
        """Every transactional id the coordinators know, optionally only in ``states`` (``"Ongoing"``, ...),
        of ``producer_ids``, or open longer than ``duration_ms`` (KIP-994, brokers with ListTransactions
        v1). An unknown state raises ``ValueError``."""
        return self._run(
            timeout_ms,
            deadline,
            _transactions.list_transactions,
            states=states,
            producer_ids=producer_ids,
            duration_ms=duration_ms,
        )

    def describe_transactions(
        self, transactional_ids: Iterable[str], *, timeout_ms: float | None = None, deadline: Deadline | None = None
    ) -> dict[str, TransactionDescription]:
        """``{transactional_id: TransactionDescription}`` from each id's coordinator (an unknown id raises
        ``TransactionalIdNotFoundError``)."""
        return self._run(timeout_ms, deadline, _transactions.describe_transactions, transactional_ids)

    def abort_transaction(
        self,
        topic: str,
        partition: int,
        start_offset: int,
        *,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> ProducerState:
        """Abort the open transaction that starts at ``start_offset`` of ``topic``/``partition`` (a hanging
        one: see :mod:`kafkawire.admin.transactions`), as ``kafka-transactions.sh abort`` does; returns the
        producer whose transaction it was. ``ValueError`` when no open transaction starts there."""
        return self._run(timeout_ms, deadline, _transactions.abort_transaction, topic, partition, start_offset)

    # ---------------------------------------------------------------- partitions and their leaders
    def describe_topic_partitions(
        self,
        topics: Iterable[str],
        *,
        page_size: int = 2000,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> dict[str, TopicPartitionsDescription]:
        """``{topic: TopicPartitionsDescription}`` from DescribeTopicPartitions (KIP-966): leader and epoch,
        replicas, ISR, eligible leader replicas (ELR) and last known ELR per partition, read in pages of
        ``page_size`` partitions. A topic that does not exist raises ``UnknownTopicOrPartitionError``."""
        return self._run(timeout_ms, deadline, _partitions.describe_topic_partitions, topics, page_size=page_size)

    def elect_leaders(
        self,
        partitions: Iterable[tuple[str, int]] | None = None,
        *,
        election: str = "preferred",
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> dict[tuple[str, int], BrokerError | None]:
        """Elect leaders (KIP-460): ``"preferred"`` (the first replica, when in sync) or ``"unclean"`` (any
        live replica, possibly losing records) for ``partitions`` (None: every partition that needs one).
        Returns each partition's outcome: None (elected) or its error (``ElectionNotNeededError``: the
        leader is already the one the election would pick)."""
        return self._run(timeout_ms, deadline, _partitions.elect_leaders, partitions, election)

    def list_partition_reassignments(
        self,
        partitions: Iterable[tuple[str, int]] | None = None,
        *,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> dict[tuple[str, int], Reassignment]:
        """The ongoing replica reassignments (KIP-455), of ``partitions`` or all."""
        return self._run(timeout_ms, deadline, _partitions.list_partition_reassignments, partitions)

    def alter_partition_reassignments(
        self,
        targets: Mapping[tuple[str, int], Sequence[int] | None],
        *,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> dict[tuple[str, int], BrokerError | None]:
        """Start reassigning ``{(topic, partition): [broker ids]}`` (the first is the preferred leader), or
        cancel the ongoing reassignment of a partition mapped to None. Returns each partition's outcome:
        None (accepted) or its error (``NoReassignmentInProgressError``, ``InvalidReplicaAssignmentError``)."""
        return self._run(timeout_ms, deadline, _partitions.alter_partition_reassignments, targets)

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

    # ------------------------------------------------------------------------------------ log dirs
    def describe_log_dirs(
        self,
        brokers: Iterable[int] | None = None,
        *,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> dict[int, dict[str, LogDirDescription]]:
        """``{broker id: {path: LogDirDescription}}`` for ``brokers`` (None: every broker): each log
        directory's health, capacity and replicas with their size and lag."""
        return self._run(timeout_ms, deadline, _log_dirs.describe_log_dirs, brokers)

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

    # ------------------------------------------------------------------------------------ features
    def describe_features(
        self, *, timeout_ms: float | None = None, deadline: Deadline | None = None
    ) -> FeatureMetadata:
        """The finalized feature levels (``metadata.version``, ``transaction.version``, ...), their epoch,
        and the level ranges the answering broker supports (KIP-584)."""
        return self._run(timeout_ms, deadline, _features.describe_features)

    def update_features(
        self,
        levels: Mapping[str, int],
        *,
        upgrade_type: str = "upgrade",
        validate_only: bool = False,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> None:
        """Finalize ``{feature: level}`` (0 disables a feature). ``upgrade_type``: ``"upgrade"``,
        ``"safe_downgrade"`` or ``"unsafe_downgrade"`` (KIP-778); ``validate_only``: let the controller
        check, change nothing."""
        self._run(
            timeout_ms,
            deadline,
            _features.update_features,
            levels,
            upgrade_type=upgrade_type,
            validate_only=validate_only,
        )
