"""Writing: :mod:`.producer` (the public :class:`~kafkawire.client.Producer`, a thin facade over the
next two), :mod:`.accumulator` (records buffered per topic until a buffer is full or has lingered, the Java
client's ``RecordAccumulator``), :mod:`.sender` (writes the buffers one at a time, in order, and its
background thread, the Java client's ``Sender``), :mod:`.outcomes` (a write's results as completed delivery
futures and handed-back records), :mod:`.settings` (the settings the three share), :mod:`.produce` (one
produce call: batches per partition, up to ``max_in_flight`` requests per broker, idempotent sequence
numbers, retries until the deadline), :mod:`.partitioner` (the Java client's murmur2 partitioner),
:mod:`.transaction` (transactions, KIP-98 and KIP-890) and :mod:`.delivery` (per-record delivery futures).

Public names are imported from :mod:`kafkawire.client`; this package imports none of its modules itself,
so the :class:`~kafkawire.client.Client` can use :mod:`.produce` without loading the producer.
"""
