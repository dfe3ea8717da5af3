"""Type stubs of kafkawire/_recview.pyx: the same interface as its pure twin, kafkawire/_pure/recview.py."""

from kafkawire._pure.recview import RecordCursor as RecordCursor
from kafkawire._pure.recview import RecordView as RecordView
from kafkawire._pure.recview import iter_records as iter_records

__all__ = ["RecordView", "RecordCursor", "iter_records"]
