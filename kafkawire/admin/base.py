"""What every part of :class:`kafkawire.admin.Admin` stands on: the client it wraps and the one way a call runs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from ..client import Client
from ..client.net.deadline import Deadline

if TYPE_CHECKING:
    from ..client.cluster.cluster import Cluster

__all__ = ["AdminBase"]

_P = ParamSpec("_P")
_T = TypeVar("_T")
_Self = TypeVar("_Self", bound="AdminBase")


class AdminBase:
    """The client an :class:`~kafkawire.admin.Admin` uses, closing, and :meth:`_run`: one admin function over
    the client's cluster under one deadline, on the client's lock."""

    def __init__(
        self, bootstrap_servers: str | Sequence[str] | None = None, *, client: Client | None = None, **options: Any
    ) -> None:
        if (client is None) == (bootstrap_servers is None):
            raise ValueError("give bootstrap_servers (and client options) or client=, not both")
        if client is not None and options:
            raise ValueError(f"client options {sorted(options)} given with client=")
        self._owns_client = client is None
        #: The client whose connections and retry policy the calls use.
        self.client: Client = client if client is not None else Client(bootstrap_servers, **options)  # type: ignore[arg-type]

    def close(self) -> None:
        """Close the client (unless it was passed in as ``client=``)."""
        if self._owns_client:
            self.client.close()

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(
        self,
        timeout_ms: float | None,
        deadline: Deadline | None,
        fn: Callable[Concatenate[Cluster, Deadline, _P], _T],
        *args: _P.args,
        **kwargs: _P.kwargs,
    ) -> _T:
        d = self.client.deadline(timeout_ms, deadline)
        cluster = self.client.cluster
        with cluster.held(d, getattr(fn, "__name__", "admin call")):
            return fn(cluster, d, *args, **kwargs)
