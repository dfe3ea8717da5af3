"""The classic consumer group protocol's payloads as message classes, built like every request from
``messages/consumer_protocol.schema``: what a member sends in JoinGroup (its subscription), what the
leader hands out through SyncGroup (each member's assignment), and the sticky assignors' user data.

Subscriptions and assignments travel as an int16 version and a body
(:meth:`~kafkawire.protocol.message.DataMessage.encode_versioned`); the sticky user data has no version
prefix (its version is told by its length: v1 appends the generation).
"""

from __future__ import annotations

from typing import Any

from ._registry import read_schema_blocks
from .message import DataMessage, build_message

__all__ = ["ConsumerProtocolSubscription", "ConsumerProtocolAssignment", "StickyAssignorUserData"]

_BLOCKS = {block.split()[0]: block for block in read_schema_blocks("consumer_protocol")}

ConsumerProtocolSubscription: Any = build_message(_BLOCKS["ConsumerProtocolSubscription"], DataMessage)
ConsumerProtocolAssignment: Any = build_message(_BLOCKS["ConsumerProtocolAssignment"], DataMessage)
StickyAssignorUserData: Any = build_message(_BLOCKS["StickyAssignorUserData"], DataMessage)
