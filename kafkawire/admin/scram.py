"""SCRAM credentials (KIP-554): which users have SCRAM-SHA-256/512 credentials, and setting or deleting
them, as Java's ``Admin.describeUserScramCredentials`` / ``alterUserScramCredentials`` and
``kafka-configs.sh --entity-type users --alter --add-config 'SCRAM-SHA-256=[...]'`` do.

The password never travels: the client salts it (PBKDF2 with the mechanism's HMAC, RFC 5802's
``Hi()``) and sends the salt and the salted password."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable

from ..client.cluster.cluster import Cluster
from ..client.net.deadline import Deadline
from ..protocol import AlterUserScramCredentialsRequest, DescribeUserScramCredentialsRequest
from ..protocol.errors import raise_broker_error

__all__ = ["MECHANISMS", "describe_user_scram_credentials", "alter_user_scram_credentials"]

#: Kafka's ``ScramMechanism`` codes, and the hash each uses.
MECHANISMS = {"SCRAM-SHA-256": (1, "sha256"), "SCRAM-SHA-512": (2, "sha512")}
_NAMES = {code: name for name, (code, _) in MECHANISMS.items()}
MIN_ITERATIONS = 4096  # Kafka refuses fewer (and more than 16384)


def describe_user_scram_credentials(
    cluster: Cluster, deadline: Deadline, users: Iterable[str] | None = None
) -> dict[str, dict[str, int]]:
    """See :meth:`kafkawire.admin.Admin.describe_user_scram_credentials`."""
    wanted = None if users is None else list(users)
    if wanted is not None and not all(isinstance(u, str) for u in wanted):
        raise TypeError("user names are str")

    def attempt(d: Deadline) -> dict[str, dict[str, int]]:
        conn = cluster.any_connection(d)
        req = DescribeUserScramCredentialsRequest(
            users=None if wanted is None else [DescribeUserScramCredentialsRequest.UserName(name=u) for u in wanted]
        )
        resp = conn.request(req, conn.version_for(DescribeUserScramCredentialsRequest), deadline=d)
        raise_broker_error(resp.error_code, resp.error_message, "describe SCRAM credentials")
        out = {}
        for r in resp.results:
            raise_broker_error(r.error_code, r.error_message, f"describe the SCRAM credentials of {r.user!r}")
            out[r.user] = {_NAMES.get(c.mechanism, f"UNKNOWN({c.mechanism})"): c.iterations for c in r.credential_infos}
        return out

    return cluster.call(deadline, attempt, what="describe SCRAM credentials", topics=[])


def alter_user_scram_credentials(
    cluster: Cluster,
    deadline: Deadline,
    *,
    upsert: Iterable[tuple[str, str, str, int]] = (),
    delete: Iterable[tuple[str, str]] = (),
) -> None:
    """See :meth:`kafkawire.admin.Admin.alter_user_scram_credentials`."""
    upsertions, deletions = [], []
    for user, mechanism, password, iterations in upsert:
        if not all(isinstance(x, str) for x in (user, mechanism, password)) or not isinstance(iterations, int):
            raise TypeError("upsert takes (user, mechanism, password, iterations) tuples")
        if mechanism not in MECHANISMS:
            raise ValueError(f"mechanism must be one of {sorted(MECHANISMS)}, not {mechanism!r}")
        code, digest = MECHANISMS[mechanism]
        salt = os.urandom(32)
        salted = hashlib.pbkdf2_hmac(digest, password.encode("utf-8"), salt, iterations)
        upsertions.append(
            AlterUserScramCredentialsRequest.ScramCredentialUpsertion(
                name=user, mechanism=code, iterations=iterations, salt=salt, salted_password=salted
            )
        )
    for user, mechanism in delete:
        if mechanism not in MECHANISMS:
            raise ValueError(f"mechanism must be one of {sorted(MECHANISMS)}, not {mechanism!r}")
        deletions.append(
            AlterUserScramCredentialsRequest.ScramCredentialDeletion(name=user, mechanism=MECHANISMS[mechanism][0])
        )

    def attempt(d: Deadline) -> None:
        conn = cluster.any_connection(d)
        req = AlterUserScramCredentialsRequest(deletions=deletions, upsertions=upsertions)
        resp = conn.request(req, conn.version_for(AlterUserScramCredentialsRequest), deadline=d)
        for r in resp.results:
            raise_broker_error(r.error_code, r.error_message, f"alter the SCRAM credentials of {r.user!r}")

    if upsertions or deletions:
        cluster.call(deadline, attempt, what="alter SCRAM credentials", topics=[])
