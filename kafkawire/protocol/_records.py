"""The glue between the protocol layer and the record codec.

Fetch partitions hold their ``records`` as a zero-copy ``memoryview``; the mixin below decodes them into
:class:`kafkawire.RecordColumns` on request. Produce requests accept ready batch bytes, or columns /
values that are encoded with :func:`kafkawire.encode_records` at encode time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..columns import RecordColumns

__all__ = ["FetchPartitionMixin", "records_to_bytes"]


class FetchPartitionMixin:
    """Adds record decoding to a Fetch response partition (``FetchResponse.PartitionData``)."""

    __slots__ = ("_columns",)
    _columns: RecordColumns

    def records_columns(
        self,
        *,
        verify_crc: bool = True,
        fetch_offset: int | None = None,
        isolation: str = "read_uncommitted",
    ) -> RecordColumns:
        """Decode this partition's ``records`` into :class:`kafkawire.RecordColumns`.

        With ``isolation="read_committed"`` the partition's ``aborted_transactions`` are passed on, so
        batches of aborted transactions are dropped. ``fetch_offset`` drops records below it (compressed
        legacy wrappers and whole batches can start before the offset asked for).
        """
        from ..records import decode_records

        data = self.records  # type: ignore[attr-defined]
        return decode_records(
            b"" if data is None else data,
            verify_crc=verify_crc,
            fetch_offset=fetch_offset,
            isolation=isolation,
            aborted_transactions=self.aborted_transactions if isolation == "read_committed" else None,  # type: ignore[attr-defined]
        )

    @property
    def columns(self) -> RecordColumns:
        """``records_columns()`` with default arguments, decoded on first access and cached."""
        try:
            return self._columns
        except AttributeError:
            self._columns = self.records_columns()
            return self._columns


def records_to_bytes(value: Any) -> Any:
    """Turn a Produce ``records`` value into batch bytes (bytes-like values pass through untouched)."""
    if value is None or isinstance(value, (bytes, bytearray, memoryview)):
        return value
    from ..columns import RecordColumns
    from ..records import encode_records

    if isinstance(value, RecordColumns):
        n = len(value)
        headers = None
        if len(value.header_offsets) and int(value.header_offsets[-1]) > 0:
            headers = [value.headers_of(i) for i in range(n)]
        return encode_records(value.value, value.key, timestamps=value.timestamp, headers=headers)
    return encode_records(value)
