"""Reading: :mod:`.consumer` (the group :class:`~kafkawire.client.Consumer`), :mod:`.fetch` (one Fetch
round over every leader, as columns), :mod:`.fetch_session` (incremental fetch sessions, KIP-227),
:mod:`.offsets` (ListOffsets, OffsetCommit, OffsetFetch), :mod:`.ranges` (reading an exact offset range,
for the CLI and Spark) and :mod:`.listeners` (rebalance listeners).

Public names are imported from :mod:`kafkawire.client`; this package imports none of its modules itself,
so the :class:`~kafkawire.client.Client` can use :mod:`.fetch` and :mod:`.offsets` without loading the
consumer.
"""
