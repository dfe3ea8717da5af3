"""The classic consumer group protocol's payloads as message classes, built like every request from
``messages/consumer_protocol.schema``: what a member sends in JoinGroup (its subscription), what the
leader hands out through SyncGroup (each member's assignment), and the sticky assignors' user data.

Subscriptions and assignments travel as an int16 version and a body
(:meth:`~kafkawire.protocol.message.DataMessage.encode_versioned`); the sticky user data has no version
prefix (its version is told by its length: v1 appends the generation).
"""

from __future__ import annotations

from ._messages import ConsumerProtocolAssignment, ConsumerProtocolSubscription, StickyAssignorUserData

__all__ = ["ConsumerProtocolSubscription", "ConsumerProtocolAssignment", "StickyAssignorUserData"]
