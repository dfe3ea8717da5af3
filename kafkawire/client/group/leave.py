"""A member's goodbye to its group's coordinator, for every kind of member (classic LeaveGroup, a KIP-848
or share group heartbeat with a leaving epoch): sent once, its answer logged, never raised.

Leaving is a courtesy that lets the others take the member's partitions at once instead of after the
session timeout, which expires anyway; a coordinator's bad answer to a goodbye is no reason to fail a
clean shutdown, so nothing here is retried either.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...protocol import LeaveGroupResponse
from ...protocol.errors import broker_error
from ..net.deadline import Deadline

if TYPE_CHECKING:
    from ..client import Client

__all__ = ["say_goodbye"]


def say_goodbye(
    client: Client,
    group_id: str,
    request_for: Callable[[Any], tuple[Any, int]],
    deadline: Deadline,
    *,
    what: str,
    log: logging.Logger,
    refresh: bool = False,
) -> None:
    """Send ``request_for(conn)`` (the request and its version) to ``group_id``'s coordinator (looked up
    again first with ``refresh``) and log the answer; ``what`` names the goodbye in the log."""
    try:
        with client.cluster.held(deadline, what):
            conn = client.coordinator(group_id, refresh=refresh, deadline=deadline)
            request, version = request_for(conn)
            response = conn.request(request, version, deadline=deadline)
        # LeaveGroup's answer has no error_message; the leaving heartbeats' answers have one.
        message = None if isinstance(response, LeaveGroupResponse) else response.error_message
        err = broker_error(response.error_code, message, what)
        if err is not None:
            log.info("%s: the coordinator answered with %s", what, err)
    except Exception as e:
        log.warning("%s failed (the session will expire): %s", what, e)
