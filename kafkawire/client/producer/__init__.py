"""Writing: :mod:`.producer` (the buffering :class:`~kafkawire.client.Producer` and its background sender),
:mod:`.produce` (one Produce round over every leader, idempotent sequence numbers), :mod:`.partitioner`
(the Java client's murmur2 partitioner), :mod:`.transaction` (transactions, KIP-98 and KIP-890) and
:mod:`.delivery` (per-record delivery futures).

Public names are imported from :mod:`kafkawire.client`; this package imports none of its modules itself,
so the :class:`~kafkawire.client.Client` can use :mod:`.produce` without loading the producer.
"""
