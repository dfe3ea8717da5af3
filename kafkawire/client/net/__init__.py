"""Talking to one broker: :mod:`.connection` (a socket with framing, correlation ids, pipelining, TLS and
SASL), :mod:`.sasl` (PLAIN, SCRAM and OAUTHBEARER tokens), :mod:`.oauth` (OAUTHBEARER token providers,
KIP-768), :mod:`.keystores` (Java key and trust stores read without a JDK), :mod:`.deadline` (the one
deadline a blocking call passes down) and :mod:`.metrics` (traffic counters).

Nothing here knows about topics, groups or retries; :mod:`kafkawire.client.cluster` is built on it.
The package imports none of its modules itself, so importing one does not load the others.
"""
