"""The APIs declared for the admin client and KIP-320, on Apache Kafka 4.4 and 3.9, at every version both
sides speak.

The conformance test proves the schemas equal Kafka's specs; this proves them on the wire: the broker
advertises every declared version, and each request (a harmless one: describe, list, validate-only, an
empty change) is accepted and its answer decodes to what the broker's state says.
"""

from __future__ import annotations

import time
import uuid

import pytest

import kafkawire
from kafkawire.protocol import (
    AlterClientQuotasRequest,
    AlterPartitionReassignmentsRequest,
    AlterUserScramCredentialsRequest,
    CreateAclsRequest,
    CreateTopicsRequest,
    DeleteAclsRequest,
    DescribeAclsRequest,
    DescribeClientQuotasRequest,
    DescribeLogDirsRequest,
    DescribeProducersRequest,
    DescribeTopicPartitionsRequest,
    DescribeTransactionsRequest,
    DescribeUserScramCredentialsRequest,
    ElectLeadersRequest,
    FindCoordinatorRequest,
    InitProducerIdRequest,
    ListPartitionReassignmentsRequest,
    ListTransactionsRequest,
    OffsetDeleteRequest,
    OffsetForLeaderEpochRequest,
    ProduceRequest,
    UpdateFeaturesRequest,
    WriteTxnMarkersRequest,
)
from kafkawire.protocol.errors import error_for_code
from kafkawire.protocol.negotiation import negotiate
from kafkawire.testing import LEGACY_KAFKA_VERSION, start_broker

from .test_brokers import Conn, _topic_id

pytestmark = pytest.mark.broker

NEW_APIS = [
    OffsetForLeaderEpochRequest,
    WriteTxnMarkersRequest,
    DescribeAclsRequest,
    CreateAclsRequest,
    DeleteAclsRequest,
    DescribeLogDirsRequest,
    ElectLeadersRequest,
    AlterPartitionReassignmentsRequest,
    ListPartitionReassignmentsRequest,
    OffsetDeleteRequest,
    DescribeClientQuotasRequest,
    AlterClientQuotasRequest,
    DescribeUserScramCredentialsRequest,
    AlterUserScramCredentialsRequest,
    UpdateFeaturesRequest,
    DescribeProducersRequest,
    DescribeTransactionsRequest,
    ListTransactionsRequest,
    DescribeTopicPartitionsRequest,
]


def _name(code: int) -> str:
    return error_for_code(code).__name__ if code else "none"


@pytest.fixture(scope="module", params=["pin", "legacy"])
def setup(request):
    """A connection, the negotiated versions and a 2-partition topic with 3 idempotent records in partition 0,
    on the pinned Kafka (the session's) and on the legacy release (Kafka 3.9, which still serves the versions
    Kafka 4.0 removed)."""
    if request.param == "pin":
        broker = request.getfixturevalue("kafka_broker")
    else:
        broker = start_broker("kafka", version=LEGACY_KAFKA_VERSION)
        request.addfinalizer(broker.stop)
    conn = Conn(broker.bootstrap)
    conn.sock.settimeout(60)  # a loaded 2-core machine: CreateTopics may take longer than Conn's 10 s
    result = negotiate(conn.roundtrip)
    topic = f"admin-apis-{uuid.uuid4().hex[:8]}"
    created = conn.call(
        CreateTopicsRequest(
            topics=[CreateTopicsRequest.CreatableTopic(name=topic, num_partitions=2, replication_factor=1)],
            timeout_ms=10000,
        ),
        result.version_for(CreateTopicsRequest),
    )
    assert created.topics[0].error_code == 0, _name(created.topics[0].error_code)
    topic_id = _topic_id(conn, result, topic)
    # A fresh broker answers COORDINATOR_LOAD_IN_PROGRESS until its producer-id manager is ready.
    init = InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60_000)
    pid = _until_not_retriable(lambda: conn.call(init, result.version_for(InitProducerIdRequest)))
    assert pid.error_code == 0, _name(pid.error_code)
    batch = kafkawire.encode_records(
        [b"a", b"b", b"c"], producer_id=pid.producer_id, producer_epoch=pid.producer_epoch, base_sequence=0
    )
    pv = min(result.version_for(ProduceRequest), 12)  # by name: the topic id path is tested elsewhere
    produce = ProduceRequest(
        acks=-1,
        timeout_ms=10000,
        topic_data=[
            ProduceRequest.TopicProduceData(
                name=topic,
                partition_data=[ProduceRequest.PartitionProduceData(index=0, records=batch)],
            )
        ],
    )

    class _Answer:  # the partition's answer, as _until_not_retriable reads it
        def __init__(self, resp) -> None:
            self.error_code = resp.responses[0].partition_responses[0].error_code

    # A leader that has just been elected may still answer NOT_LEADER_OR_FOLLOWER: retried like a client would.
    produced = _until_not_retriable(lambda: _Answer(conn.call(produce, pv)))
    assert produced.error_code == 0, _name(produced.error_code)
    yield conn, result, topic, topic_id, pid, request.param
    conn.close()


def _until_not_retriable(call):
    """``call()`` again while it answers a retriable error (the group coordinator's partition of
    __consumer_offsets is created and loaded on first use), for up to 60 s."""
    deadline = time.monotonic() + 60
    while True:
        resp = call()
        if resp.error_code == 0 or not error_for_code(resp.error_code).retriable or time.monotonic() > deadline:
            return resp
        time.sleep(0.2)


def _coordinator_answer(resp, version):
    return resp.coordinators[0] if version >= 4 else resp


def _versions(result, req) -> range:
    lo, hi = result.broker[req.API_KEY]
    return range(max(lo, req.MIN_VERSION), min(hi, req.MAX_VERSION) + 1)


@pytest.mark.parametrize("req", NEW_APIS, ids=lambda r: r.__name__)
def test_broker_serves_every_declared_version(setup, req):
    _conn, result, *_, release = setup
    assert req.API_KEY in result.broker, f"Kafka does not advertise {req.__name__}"
    lo, hi = result.broker[req.API_KEY]
    assert req.MIN_VERSION == 0
    if release == "pin":  # declared up to Kafka 4.4's newest stable version
        assert hi == req.MAX_VERSION
    else:  # and from v0: Kafka 3.9 serves every version 4.0 removed, all of them declared
        assert lo == 0 and hi <= req.MAX_VERSION


def test_offset_for_leader_epoch_gives_the_end_of_the_epoch(setup):
    conn, result, topic, *_ = setup
    for v in _versions(result, OffsetForLeaderEpochRequest):
        OT = OffsetForLeaderEpochRequest.OffsetForLeaderTopic
        OP = OffsetForLeaderEpochRequest.OffsetForLeaderPartition
        req = OffsetForLeaderEpochRequest(
            replica_id=-1,
            topics=[OT(topic=topic, partitions=[OP(partition=0, leader_epoch=0), OP(partition=1, leader_epoch=0)])],
        )
        resp = conn.call(req, v)
        parts = {p.partition: p for p in resp.topics[0].partitions}
        assert [_name(p.error_code) for p in parts.values()] == ["none", "none"], v
        # Epoch 0 is the current one: its end is the log end offset (3 records in p0, none in p1).
        epoch = 0 if v >= 1 else -1  # v0 answers no epoch (the field's default)
        assert (parts[0].leader_epoch, parts[0].end_offset) == (epoch, 3), v
        assert (parts[1].leader_epoch, parts[1].end_offset) == (epoch, 0), v
        # From v2, a current_leader_epoch newer than the leader's is refused (KIP-320: the client is ahead;
        # older versions cannot carry it and the ignorable field is dropped).
        req.topics[0].partitions = [OP(partition=0, leader_epoch=0, current_leader_epoch=7)]
        want = "UnknownLeaderEpochError" if v >= 2 else "none"
        assert _name(conn.call(req, v).topics[0].partitions[0].error_code) == want, v


def test_describe_topic_partitions_lists_leaders_and_replicas(setup):
    conn, result, topic, topic_id, *_ = setup
    for v in _versions(result, DescribeTopicPartitionsRequest):
        req = DescribeTopicPartitionsRequest(topics=[DescribeTopicPartitionsRequest.TopicRequest(name=topic)])
        t = conn.call(req, v).topics[0]
        assert (t.error_code, t.name, t.topic_id, t.is_internal) == (0, topic, topic_id, False)
        assert sorted(p.partition_index for p in t.partitions) == [0, 1]
        for p in t.partitions:
            assert p.replica_nodes == p.isr_nodes == [p.leader_id] and p.leader_epoch >= 0
        # A cursor pages through partitions: a limit of 1 answers one partition and the cursor of the next.
        paged = conn.call(DescribeTopicPartitionsRequest(topics=req.topics, response_partition_limit=1), v)
        assert [p.partition_index for p in paged.topics[0].partitions] == [0]
        assert (paged.next_cursor.topic_name, paged.next_cursor.partition_index) == (topic, 1)


def test_describe_producers_shows_the_idempotent_producer(setup):
    conn, result, topic, _, pid, _ = setup
    for v in _versions(result, DescribeProducersRequest):
        req = DescribeProducersRequest(
            topics=[DescribeProducersRequest.TopicRequest(name=topic, partition_indexes=[0])]
        )
        p = conn.call(req, v).topics[0].partitions[0]
        assert p.error_code == 0
        [state] = p.active_producers
        assert (state.producer_id, state.producer_epoch, state.last_sequence) == (
            pid.producer_id,
            pid.producer_epoch,
            2,
        )
        assert state.current_txn_start_offset == -1  # idempotent, not transactional


def test_transactions_list_describe_and_markers(setup):
    conn, result, *_ = setup
    for v in _versions(result, ListTransactionsRequest):
        resp = conn.call(ListTransactionsRequest(), v)
        assert resp.error_code == 0 and resp.unknown_state_filters == []
        resp = conn.call(ListTransactionsRequest(state_filters=["NoSuchState"]), v)
        assert resp.unknown_state_filters == ["NoSuchState"]
    for v in _versions(result, DescribeTransactionsRequest):
        resp = conn.call(DescribeTransactionsRequest(transactional_ids=["no-such-txn"]), v)
        [state] = resp.transaction_states
        # Asked of a broker that is not its coordinator, or one that does not know it: never "none".
        assert state.transactional_id == "no-such-txn" and state.error_code != 0
    for v in _versions(result, WriteTxnMarkersRequest):
        assert conn.call(WriteTxnMarkersRequest(markers=[]), v).markers == []


def test_acls_without_an_authorizer_answer_security_disabled(setup):
    conn, result, *_ = setup
    for v in _versions(result, DescribeAclsRequest):
        # resource type, operation, permission 1 = ANY; pattern 1 = ANY from v1 (v0 knows only 3 = LITERAL)
        pattern = 1 if v >= 1 else 3
        req = DescribeAclsRequest(resource_type_filter=1, pattern_type_filter=pattern, operation=1, permission_type=1)
        assert _name(conn.call(req, v).error_code) == "SecurityDisabledError"
    for v in _versions(result, CreateAclsRequest):
        creation = CreateAclsRequest.AclCreation(
            resource_type=2, resource_name="t", principal="User:a", host="*", operation=3, permission_type=3
        )
        [res] = conn.call(CreateAclsRequest(creations=[creation]), v).results
        assert _name(res.error_code) == "SecurityDisabledError"
    for v in _versions(result, DeleteAclsRequest):
        f = DeleteAclsRequest.DeleteAclsFilter(
            resource_type_filter=1, pattern_type_filter=1 if v >= 1 else 3, operation=1, permission_type=1
        )
        [res] = conn.call(DeleteAclsRequest(filters=[f]), v).filter_results
        assert _name(res.error_code) == "SecurityDisabledError"


def test_quotas_and_scram_describe_and_validate(setup):
    conn, result, *_ = setup
    entity = AlterClientQuotasRequest.EntityData(entity_type="client-id", entity_name="kw-quota-test")
    op = AlterClientQuotasRequest.OpData(key="producer_byte_rate", value=1024.0)
    for v in _versions(result, AlterClientQuotasRequest):
        req = AlterClientQuotasRequest(
            entries=[AlterClientQuotasRequest.EntryData(entity=[entity], ops=[op])], validate_only=True
        )
        [entry] = conn.call(req, v).entries
        assert entry.error_code == 0 and entry.entity[0].entity_name == "kw-quota-test"
    for v in _versions(result, DescribeClientQuotasRequest):
        comp = DescribeClientQuotasRequest.ComponentData(entity_type="client-id", match_type=0, match="kw-quota-test")
        resp = conn.call(DescribeClientQuotasRequest(components=[comp]), v)
        assert resp.error_code == 0 and resp.entries == []  # validate_only stored nothing
    for v in _versions(result, DescribeUserScramCredentialsRequest):
        resp = conn.call(DescribeUserScramCredentialsRequest(users=None), v)
        assert resp.error_code == 0 and resp.results == []
    for v in _versions(result, AlterUserScramCredentialsRequest):
        assert conn.call(AlterUserScramCredentialsRequest(), v).results == []


def test_reassignments_elections_log_dirs_offset_delete_features(setup):
    conn, result, topic, *_ = setup
    for v in _versions(result, ListPartitionReassignmentsRequest):
        resp = conn.call(ListPartitionReassignmentsRequest(topics=None), v)
        assert resp.error_code == 0 and resp.topics == []
    for v in _versions(result, AlterPartitionReassignmentsRequest):
        resp = conn.call(AlterPartitionReassignmentsRequest(), v)
        assert resp.error_code == 0 and resp.responses == []
    for v in _versions(result, ElectLeadersRequest):
        tp = ElectLeadersRequest.TopicPartitions(topic=topic, partitions=[0])
        resp = conn.call(ElectLeadersRequest(topic_partitions=[tp]), v)
        [part] = resp.replica_election_results[0].partition_result
        assert _name(part.error_code) == "ElectionNotNeededError"  # the preferred leader leads already
    for v in _versions(result, DescribeLogDirsRequest):
        resp = conn.call(DescribeLogDirsRequest(topics=None), v)
        [d] = resp.results
        sizes = {
            (t.name, p.partition_index): p.partition_size for t in d.topics if t.name == topic for p in t.partitions
        }
        assert d.error_code == 0 and sizes.keys() == {(topic, 0), (topic, 1)} and sizes[(topic, 0)] > 0
        if v >= 4:
            assert d.total_bytes > 0 and 0 <= d.usable_bytes <= d.total_bytes
    # The group coordinator exists once __consumer_offsets does: FindCoordinator creates it, as a client would.
    fv = result.version_for(FindCoordinatorRequest)
    found = (
        FindCoordinatorRequest(coordinator_keys=["no-such-group"])
        if fv >= 4
        else FindCoordinatorRequest(key="no-such-group")
    )
    _until_not_retriable(lambda: _coordinator_answer(conn.call(found, fv), fv))
    t = OffsetDeleteRequest.OffsetDeleteRequestTopic(
        name=topic, partitions=[OffsetDeleteRequest.OffsetDeleteRequestPartition(partition_index=0)]
    )
    delete = OffsetDeleteRequest(group_id="no-such-group", topics=[t])
    for v in _versions(result, OffsetDeleteRequest):
        resp = _until_not_retriable(lambda v=v: conn.call(delete, v))
        assert _name(resp.error_code) == "GroupIdNotFoundError"
    for v in _versions(result, UpdateFeaturesRequest):
        # No update at all: accepted and nothing changes (an update is the admin tests' business).
        assert conn.call(UpdateFeaturesRequest(), v).error_code == 0
