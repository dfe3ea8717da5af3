"""ACLs (``Admin.describe_acls/create_acls/delete_acls`` and ``kafkawire acls``) against Apache Kafka with
its StandardAuthorizer, side by side with ``kafka-acls.sh``: what one creates, the other lists and deletes."""

from __future__ import annotations

import json
import re

import pytest

from kafkawire.admin import AclBinding, AclBindingFilter, Admin
from kafkawire.cli.main import main
from kafkawire.protocol.errors import SecurityDisabledError
from kafkawire.testing import start_broker

from .kafka_tools import ACL_COMMAND, run_tool

pytestmark = pytest.mark.broker

# PLAINTEXT clients are User:ANONYMOUS: a super user here, so the tools and kafkawire may do anything, and
# ACLs for other principals are only data to describe and delete.
AUTHORIZER = {
    "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "super.users": "User:ANONYMOUS",
    "allow.everyone.if.no.acl.found": "true",
}


@pytest.fixture(scope="module")
def secured():
    broker = start_broker("kafka", config=AUTHORIZER)
    yield broker
    broker.stop()


@pytest.fixture
def admin(secured):
    with Admin(secured.bootstrap, retry_timeout_ms=30_000) as a:
        yield a
        a.delete_acls([AclBindingFilter()])  # every test starts from no ACL


_RESOURCE = re.compile(r"resourceType=(\w+), name=(.*), patternType=(\w+)\)`")
_ENTRY = re.compile(r"\(principal=(.*), host=(.*), operation=(\w+), permissionType=(\w+)\)")


def tool_acls(bootstrap: str, *args: str) -> set[AclBinding]:
    """``kafka-acls --list``: every ACL the tool shows, as AclBindings."""
    out = run_tool(ACL_COMMAND, "--bootstrap-server", bootstrap, "--list", *args)
    found, resource = set(), None
    for line in out.splitlines():
        if m := _RESOURCE.search(line):
            resource = m.groups()
        elif (m := _ENTRY.search(line)) and resource is not None:
            principal, host, op, perm = m.groups()
            found.add(AclBinding(resource[0], resource[1], principal, op, perm, host, resource[2]))
    return found


def test_acls_created_by_kafkawire_are_what_kafka_acls_lists_and_the_reverse(admin, secured):
    b = secured.bootstrap
    mine = {
        AclBinding("TOPIC", "orders", "User:alice", "READ"),
        AclBinding("TOPIC", "orders-", "User:alice", "WRITE", pattern_type="PREFIXED"),
        AclBinding("GROUP", "etl", "User:bob", "READ", "DENY", host="10.0.0.1"),
        AclBinding("CLUSTER", "kafka-cluster", "User:ops", "DESCRIBE_CONFIGS"),
        AclBinding("TRANSACTIONAL_ID", "*", "User:bob", "WRITE"),
    }
    admin.create_acls(mine)
    assert set(admin.describe_acls()) == mine == tool_acls(b)
    # Filters as the tool's: one resource (pattern ANY), one principal.
    orders = AclBindingFilter(resource_type="TOPIC", name="orders")
    assert set(admin.describe_acls(orders)) == tool_acls(b, "--topic", "orders") == {
        AclBinding("TOPIC", "orders", "User:alice", "READ")
    }
    # MATCH: the ACLs that apply to topic orders-eu (the prefixed one), as --resource-pattern-type match.
    applying = AclBindingFilter(resource_type="TOPIC", name="orders-eu", pattern_type="MATCH")
    matching = tool_acls(b, "--topic", "orders-eu", "--resource-pattern-type", "match")
    assert set(admin.describe_acls(applying)) == matching
    assert {a.name for a in admin.describe_acls(applying)} == {"orders-"}
    bob = AclBindingFilter(principal="User:bob")
    assert set(admin.describe_acls(bob)) == tool_acls(b, "--principal", "User:bob")
    assert len(admin.describe_acls(bob)) == 2

    # The tool adds, kafkawire sees and deletes; kafkawire deletes, the tool no longer lists.
    run_tool(ACL_COMMAND, "--bootstrap-server", b, "--add", "--allow-principal", "User:carol",
             "--operation", "Describe", "--operation", "Alter", "--topic", "payments")  # fmt: skip
    carol = AclBindingFilter(principal="User:carol")
    assert {(a.name, a.operation) for a in admin.describe_acls(carol)} == {
        ("payments", "DESCRIBE"),
        ("payments", "ALTER"),
    }
    deleted = admin.delete_acls([carol, AclBindingFilter(resource_type="GROUP")])
    assert {(a.principal, a.operation) for a in deleted} == {("User:carol", "DESCRIBE"), ("User:carol", "ALTER"),
                                                           ("User:bob", "READ")}  # fmt: skip
    assert tool_acls(b) == mine - {AclBinding("GROUP", "etl", "User:bob", "READ", "DENY", host="10.0.0.1")}
    assert admin.delete_acls([carol]) == []  # nothing left to match


def test_wrong_arguments_and_a_cluster_without_an_authorizer(admin, kafka_broker):
    with pytest.raises(ValueError, match="operation"):
        admin.create_acls([AclBinding("TOPIC", "t", "User:a", "READ_ALL")])
    with pytest.raises(ValueError, match="pattern_type"):
        admin.create_acls([AclBinding("TOPIC", "t", "User:a", "READ", pattern_type="ANY")])
    with pytest.raises(TypeError):
        admin.describe_acls("TOPIC")  # type: ignore[arg-type]
    with Admin(kafka_broker.bootstrap) as plain, pytest.raises(SecurityDisabledError):
        plain.describe_acls()


def test_kafkawire_acls_command(admin, secured, capsys):
    b = secured.bootstrap

    def cli(*argv: str) -> str:
        code = main([*argv, "--bootstrap", b, "--timeout", "20"])
        out, err = capsys.readouterr()
        assert code == 0, err
        return out

    cli("acls", "create", "--topic", "clicks", "--allow-principal", "User:dan", "--deny-principal", "User:eve",
        "--operation", "read", "--operation", "describe")  # fmt: skip
    cli("acls", "create", "--group", "etl-", "--resource-pattern-type", "prefixed",
        "--allow-principal", "User:dan", "--operation", "READ")  # fmt: skip
    shown = json.loads(cli("acls", "list", "--json"))
    as_bindings = {
        AclBinding(r["resource_type"], r["name"], r["principal"], r["operation"], r["permission"], r["host"],
                   r["pattern_type"]) for r in shown
    }  # fmt: skip
    assert as_bindings == tool_acls(b) and len(as_bindings) == 5
    table = cli("acls", "list", "--topic", "clicks", "--principal", "User:eve")
    assert "DENY" in table and "User:dan" not in table
    out = cli("acls", "delete", "--principal", "User:eve", "--json")
    assert {(r["principal"], r["operation"]) for r in json.loads(out)} == {
        ("User:eve", "READ"),
        ("User:eve", "DESCRIBE"),
    }
    assert {a.principal for a in tool_acls(b)} == {"User:dan"}
    assert main(["acls", "create", "--topic", "t", "--operation", "READ", "--bootstrap", b]) != 0  # no principal
    assert "principal" in capsys.readouterr().err
