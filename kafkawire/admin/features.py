"""Cluster features (KIP-584): the feature levels the cluster has finalized and the ranges its brokers
support, and changing the finalized levels (UpdateFeatures), as Java's ``Admin.describeFeatures`` /
``updateFeatures`` and ``kafka-features.sh`` do. ``metadata.version``, ``transaction.version`` (KIP-890),
``group.version`` (KIP-848), ``kraft.version`` ... are features."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .. import __version__
from ..client.cluster.cluster import Cluster
from ..client.net.deadline import Deadline
from ..protocol import ApiVersionsRequest, UpdateFeaturesRequest
from ..protocol.errors import raise_broker_error

__all__ = ["FeatureMetadata", "UPGRADE_TYPES", "describe_features", "update_features"]

#: How a level may change (UpdateFeatures v1+, KIP-778): a downgrade must say whether metadata may be lost.
UPGRADE_TYPES = {"upgrade": 1, "safe_downgrade": 2, "unsafe_downgrade": 3}


@dataclass(frozen=True)
class FeatureMetadata:
    """``finalized``: feature -> finalized level; ``supported``: feature -> (min, max) level the answering
    broker supports; ``epoch``: the epoch of the finalized levels (-1 unknown)."""

    finalized: dict[str, int] = field(default_factory=dict)
    supported: dict[str, tuple[int, int]] = field(default_factory=dict)
    epoch: int = -1


def describe_features(cluster: Cluster, deadline: Deadline) -> FeatureMetadata:
    """See :meth:`kafkawire.admin.Admin.describe_features`: a fresh ApiVersions exchange (v3+) with one
    broker (the levels a connection negotiated earlier may be outdated)."""

    def attempt(d: Deadline) -> FeatureMetadata:
        conn = cluster.any_connection(d)
        version = conn.version_for(ApiVersionsRequest, 3)
        req = ApiVersionsRequest(client_software_name="kafkawire", client_software_version=__version__)
        resp = conn.request(req, version, deadline=d)
        raise_broker_error(resp.error_code, None, "describe features")
        return FeatureMetadata(
            {f.name: f.max_version_level for f in resp.finalized_features},
            {f.name: (f.min_version, f.max_version) for f in resp.supported_features},
            resp.finalized_features_epoch,
        )

    return cluster.call(deadline, attempt, what="describe features", topics=[])


def update_features(
    cluster: Cluster,
    deadline: Deadline,
    levels: Mapping[str, int],
    *,
    upgrade_type: str = "upgrade",
    validate_only: bool = False,
) -> None:
    """See :meth:`kafkawire.admin.Admin.update_features`."""
    if not isinstance(levels, Mapping) or not all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) for k, v in levels.items()
    ):
        raise TypeError("update_features takes {feature name: level (int)}")
    if upgrade_type not in UPGRADE_TYPES:
        raise ValueError(f"upgrade_type must be one of {sorted(UPGRADE_TYPES)}, not {upgrade_type!r}")
    if not levels:
        return

    def attempt(d: Deadline) -> None:
        conn = cluster.controller_connection(d)
        version = conn.version_for(UpdateFeaturesRequest, 1 if validate_only or upgrade_type != "upgrade" else 0)
        updates = [
            UpdateFeaturesRequest.FeatureUpdateKey(
                feature=name,
                max_version_level=level,
                # v0 has only a flag: any downgrade (Kafka treats it as a safe one); v1+ the upgrade type
                allow_downgrade=version == 0 and upgrade_type != "upgrade",
                upgrade_type=UPGRADE_TYPES[upgrade_type] if version >= 1 else 1,
            )
            for name, level in levels.items()
        ]
        req = UpdateFeaturesRequest(
            timeout_ms=d.request_timeout_ms(cluster.request_timeout_ms),
            feature_updates=updates,
            validate_only=validate_only,
        )
        resp = conn.request(req, version, deadline=d)
        raise_broker_error(resp.error_code, resp.error_message, "update features")
        for r in resp.results:  # per-feature results only up to v1
            raise_broker_error(r.error_code, r.error_message, f"update feature {r.feature!r}")

    cluster.call(deadline, attempt, what="update features", topics=[])
