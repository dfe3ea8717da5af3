"""Consumer group membership: :mod:`.classic` (the JoinGroup/SyncGroup/Heartbeat member of the classic
protocol), :mod:`.kip848` (the ConsumerGroupHeartbeat member of the KIP-848 protocol), :mod:`.rebalance`
(what a classic member offers in JoinGroup and the leader's SyncGroup assignments), :mod:`.payloads`
(the consumer protocol's Subscription and Assignment payloads, range and round-robin assignment) and
:mod:`.assignors` (sticky and cooperative-sticky assignment, KIP-54 / KIP-429).

Used by :class:`~kafkawire.client.Consumer`; public names are imported from :mod:`kafkawire.client`.
"""
