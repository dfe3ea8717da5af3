"""The broker error table is the single source of the exception classes, and the client's retry
loop follows its ``retriable`` column."""

from __future__ import annotations

import ast
import pickle
from pathlib import Path

import pytest

from kafkawire.client.cluster.retry import is_retriable
from kafkawire.protocol import errors as perr


def test_every_row_makes_a_class_with_its_columns():
    assert len(perr.TABLE) == len(perr.ERRORS) == 134
    for code, name, class_name, retriable, text in perr.TABLE:
        cls = getattr(perr, class_name)
        assert perr.error_for_code(code) is cls
        assert (cls.code, cls.name, cls.retriable, cls.text) == (code, name, retriable, text)
        assert issubclass(cls, perr.BrokerError) and class_name in perr.__all__
        assert is_retriable(cls()) is retriable
        assert str(cls()) == f"[Error {code}] {name}: {text}"


def test_a_message_replaces_the_description_and_survives_pickling():
    err = perr.UnknownTopicOrPartitionError("topic 't'")
    assert str(err) == "[Error 3] UNKNOWN_TOPIC_OR_PARTITION: topic 't'"
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is perr.UnknownTopicOrPartitionError and str(back) == str(err)


def test_kafka_retriable_column_matches_kafka_for_the_errors_the_client_meets():
    # RetriableException subclasses in Kafka's clients (a sample the client's behaviour rests on).
    retriable = {2, 3, 5, 6, 7, 13, 14, 15, 16, 19, 20, 56, 74, 75, 100}
    final = {1, 10, 22, 25, 29, 36, 45, 47, 59, 87}
    for code in retriable:
        assert perr.error_for_code(code).retriable, code
    for code in final:
        assert not perr.error_for_code(code).retriable, code


def test_an_unknown_code_is_kept():
    cls = perr.error_for_code(999)
    assert cls is not None and cls.code == 999 and issubclass(cls, perr.UnknownBrokerError)
    with pytest.raises(perr.UnknownBrokerError, match="999"):
        perr.raise_for_code(999)


def test_the_type_checking_names_match_the_table():
    # errors.py spells the generated class names out for type checkers; they must follow the table.
    tree = ast.parse(Path(perr.__file__).read_text())
    [block] = [n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING"]
    declared = [n.name for n in block.body if isinstance(n, ast.ClassDef)]
    assert declared == [row[2] for row in perr.TABLE]
