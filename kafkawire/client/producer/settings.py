"""The settings a :class:`~kafkawire.client.producer.producer.Producer` shares with its accumulator and
sender: one object, so that assigning ``producer.linger_ms`` (or any other) takes effect at once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar, overload

__all__ = ["ProducerSettings", "Setting"]

T = TypeVar("T")


@dataclass(slots=True)
class ProducerSettings:
    """What decides when a buffer is written (``batch_records``, ``batch_bytes``, ``linger_ms``), how
    (``compression``, ``acks``, ``delivery_timeout_ms``) and how much ``send()`` may buffer before it blocks
    (``buffer_memory`` bytes, for at most ``max_block_ms``); see :class:`~kafkawire.client.Producer`."""

    batch_records: int
    batch_bytes: int
    linger_ms: float
    compression: str | None
    acks: int
    delivery_timeout_ms: float | None
    buffer_memory: int = 32 << 20
    max_block_ms: float = 60_000.0


class Setting(Generic[T]):
    """A producer attribute that reads and writes the same-named field of the owner's ``settings``."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Setting[T]: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return getattr(obj.settings, self.name)

    def __set__(self, obj: Any, value: T) -> None:
        setattr(obj.settings, self.name, value)
        changed = getattr(obj, "_settings_changed", None)
        if changed is not None:  # the producer's send() keeps the limits it checks per record (issue 32)
            changed()
