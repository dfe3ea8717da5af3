"""Helpers of the share group tests: the broker config they need, fresh groups and topics."""

from __future__ import annotations

import itertools
from typing import Any

from kafkawire.admin import Admin, AlterConfigOp
from kafkawire.admin.types import ConfigResource

LOCK_MS = 5_000
DELIVERY_LIMIT = 3
SHARE_BROKER_CONFIG = {
    "group.share.min.record.lock.duration.ms": "1000",
    "group.share.record.lock.duration.ms": str(LOCK_MS),
    "group.share.delivery.count.limit": str(DELIVERY_LIMIT),
}
_names = itertools.count()


def new_group(bootstrap: str, prefix: str = "sg") -> str:
    """A fresh share group that starts at the earliest offset (a new one starts at the latest)."""
    name = f"{prefix}-{next(_names)}"
    with Admin(bootstrap) as admin:
        admin.alter_configs({ConfigResource.group(name): [AlterConfigOp("share.auto.offset.reset", "set", "earliest")]})
    return name


def new_topic(client: Any, partitions: int, prefix: str = "st") -> str:
    name = f"{prefix}-{next(_names)}"
    client.create_topics({name: partitions})
    return name
