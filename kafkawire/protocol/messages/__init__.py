"""Schemas of every API kafkawire speaks: one ``<api>.schema`` data file per API, its request then its response.

The notation is described in :mod:`kafkawire.protocol.schema`. Field facts (names, types, versions,
nullable and flexible versions, tags, defaults, ignorable) follow Apache Kafka's JSON message specs,
including the versions Kafka 4.0 removed (KIP-896), which older brokers still speak. Names are the
snake_case forms of Kafka's field names; struct names are Kafka's.
"""
