"""Global tables (version 2019.11.21) in the lab server, through DynamoDB's own API: UpdateTable's ReplicaUpdates,
MultiRegionConsistency and GlobalTableWitnessUpdates, DescribeTable's replicas, and writes reaching every replica."""
import http.client
import json
import threading
import time
from urllib.parse import urlsplit

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from helpers import labhttp, tracing
from helpers.explore import explore
from helpers.knobs import get_knobs, set_knobs
from helpers.meter import table_counters
from helpers.tables import dissolve
from helpers.widgets import step_through

TABLE = "p34-global"
KEY = {"KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}],
       "AttributeDefinitions": [{"AttributeName": "PK", "AttributeType": "S"}], "BillingMode": "PAY_PER_REQUEST"}
GLOBAL_MEMBERS = {"GlobalTableVersion", "Replicas", "MultiRegionConsistency", "GlobalTableWitnesses",
                  "GlobalTableSettingsReplicationMode"}


@pytest.fixture
def regions(lab):
    """{Region: the lab's client signed for it}, with TABLE in none of them first and last (embedded server only)."""
    if lab.kind != "embedded":
        pytest.skip("global tables are modelled by the embedded lab server (DynamoDB Local has none)")
    clients = {region: lab.client_in(region) for region in ("us-east-1", "us-east-2", "us-west-2", "eu-west-1")}
    with tracing(False):
        dissolve(TABLE, clients.values())
        clients["us-east-1"].create_table(TableName=TABLE, **KEY)
        yield clients
        dissolve(TABLE, clients.values())


def refusal(call, **arguments):
    """(code, message) of the error DynamoDB answers the call with."""
    with pytest.raises(ClientError) as refused:
        call(TableName=TABLE, **arguments)
    return refused.value.response["Error"]["Code"], refused.value.response["Error"]["Message"]


def add_replica(client, region):
    """UpdateTable adding a replica in `region` (MREC); its TableDescription."""
    return client.update_table(TableName=TABLE, ReplicaUpdates=[{"Create": {"RegionName": region}}])["TableDescription"]


def test_a_replica_is_created_in_the_other_region_with_the_tables_key_stream_and_items(regions):
    us, eu = regions["us-east-1"], regions["eu-west-1"]
    us.put_item(TableName=TABLE, Item={"PK": "before", "n": 1})
    answer = add_replica(us, "eu-west-1")
    assert answer["TableStatus"] == "UPDATING"
    assert answer["GlobalTableVersion"] == "2019.11.21"
    assert [(r["RegionName"], r["ReplicaStatus"]) for r in answer["Replicas"]] == [("eu-west-1", "CREATING")]
    replica = eu.describe_table(TableName=TABLE)["Table"]
    assert replica["KeySchema"] == KEY["KeySchema"] and replica["TableStatus"] == "ACTIVE"
    assert replica["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
    assert ":eu-west-1:" in replica["TableArn"]
    assert eu.get_item(TableName=TABLE, Key={"PK": "before"})["Item"] == {"PK": "before", "n": 1}


def test_each_replica_describes_the_other_regions_never_itself(regions):
    us, eu = regions["us-east-1"], regions["eu-west-1"]
    add_replica(us, "eu-west-1")
    for client, other in ((us, "eu-west-1"), (eu, "us-east-1")):
        table = client.describe_table(TableName=TABLE)["Table"]
        assert table["GlobalTableVersion"] == "2019.11.21"
        assert table["GlobalTableSettingsReplicationMode"] == "ENABLED_WITH_OVERRIDES"
        assert [(r["RegionName"], r["ReplicaStatus"]) for r in table["Replicas"]] == [(other, "ACTIVE")]
        assert "MultiRegionConsistency" not in table and "GlobalTableWitnesses" not in table


def test_a_write_to_one_replica_reaches_the_others(regions):
    us, eu, west = regions["us-east-1"], regions["eu-west-1"], regions["us-west-2"]
    add_replica(us, "eu-west-1")
    add_replica(us, "us-west-2")
    eu.put_item(TableName=TABLE, Item={"PK": "put", "n": 1})
    west.update_item(TableName=TABLE, Key={"PK": "put"}, UpdateExpression="ADD n :one",
                     ExpressionAttributeValues={":one": 1})
    us.transact_write_items(TransactItems=[{"Put": {"TableName": TABLE, "Item": {"PK": "tx"}}},
                                           {"Delete": {"TableName": TABLE, "Key": {"PK": "gone"}}}])
    eu.batch_write_item(RequestItems={TABLE: [{"PutRequest": {"Item": {"PK": "batch"}}}]})
    west.execute_statement(Statement=f"INSERT INTO \"{TABLE}\" VALUE {{'PK': 'partiql'}}")
    for client in (us, eu, west):
        items = client.scan(TableName=TABLE, ConsistentRead=True)["Items"]
        assert sorted((item["PK"], item.get("n")) for item in items) == [
            ("batch", None), ("partiql", None), ("put", 2), ("tx", None)]
    us.delete_item(TableName=TABLE, Key={"PK": "put"})
    assert "Item" not in eu.get_item(TableName=TABLE, Key={"PK": "put"}, ConsistentRead=True)


def test_a_refused_write_reaches_no_replica(regions):
    us, eu = regions["us-east-1"], regions["eu-west-1"]
    add_replica(us, "eu-west-1")
    us.put_item(TableName=TABLE, Item={"PK": "seat", "version": 1})
    with pytest.raises(us.exceptions.ConditionalCheckFailedException):
        us.put_item(TableName=TABLE, Item={"PK": "seat", "version": 5}, ConditionExpression="version = :v",
                    ExpressionAttributeValues={":v": 4})
    assert eu.get_item(TableName=TABLE, Key={"PK": "seat"})["Item"]["version"] == 1


def test_deleting_the_last_replica_leaves_a_table_in_one_region(regions):
    us, eu = regions["us-east-1"], regions["eu-west-1"]
    add_replica(us, "eu-west-1")
    answer = us.update_table(TableName=TABLE, ReplicaUpdates=[{"Delete": {"RegionName": "eu-west-1"}}])
    assert [(r["RegionName"], r["ReplicaStatus"]) for r in answer["TableDescription"]["Replicas"]] == [
        ("eu-west-1", "DELETING")]
    assert TABLE not in eu.list_tables()["TableNames"]
    assert not GLOBAL_MEMBERS & set(us.describe_table(TableName=TABLE)["Table"])
    us.put_item(TableName=TABLE, Item={"PK": "after"})
    assert TABLE not in eu.list_tables()["TableNames"]


def test_deleting_a_replica_table_in_its_region_takes_it_out_of_the_global_table(regions):
    us, eu, west = regions["us-east-1"], regions["eu-west-1"], regions["us-west-2"]
    add_replica(us, "eu-west-1")
    add_replica(us, "us-west-2")
    eu.delete_table(TableName=TABLE)
    assert [r["RegionName"] for r in us.describe_table(TableName=TABLE)["Table"]["Replicas"]] == ["us-west-2"]
    west.put_item(TableName=TABLE, Item={"PK": "still"})
    assert us.get_item(TableName=TABLE, Key={"PK": "still"})["Item"] == {"PK": "still"}


@pytest.mark.parametrize("arguments, message", [
    ({"ReplicaUpdates": [{"Create": {"RegionName": "us-east-1"}}]},
     "Cannot add or delete the local region through ReplicaUpdates. Use CreateTable, DeleteTable, or UpdateTable as "
     "required."),
    ({"ReplicaUpdates": [{"Delete": {"RegionName": "ca-central-1"}}]},
     "Update global table operation failed because one or more replicas were not part of the global table. Please "
     "retry the request without these replicas: [ca-central-1]."),
    ({"ReplicaUpdates": [{"Create": {"RegionName": "eu-west-2"}}, {"Create": {"RegionName": "eu-west-3"}}]},
     "Update table operation with more than one create or delete replica actions not allowed"),
    ({"ReplicaUpdates": [{"Create": {"RegionName": "eu-west-2"}}, {"Delete": {"RegionName": "eu-west-1"}}]},
     "Update table operation with more than one type of replica actions not allowed."),
    ({"ReplicaUpdates": [{"Create": {"RegionName": "eu-west-2"}}], "DeletionProtectionEnabled": True},
     "Requests that modify replicas or witnesses must not also modify other fields"),
    ({"ReplicaUpdates": [{"Create": {"RegionName": "us-west-2"}}],
      "GlobalTableWitnessUpdates": [{"Create": {"RegionName": "us-east-2"}}]},
     "MultiRegionConsistency must be set as STRONG when GlobalTableWitnessUpdates parameter is present."),
    ({"MultiRegionConsistency": "STRONG"},
     "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, GlobalSecondaryIndexUpdates, "
     "SSESpecification, ReplicaUpdates, MultiAccountReplicaReady, ReplicaTransitRoleArn, DeletionProtectionEnabled, "
     "OnDemandThroughput, WarmThroughput or TableClass is required"),
    ({"ReplicaUpdates": [{"Create": {"RegionName": "us-west-2"}}], "MultiRegionConsistency": "STRONG"},
     "Unsupported replica count for global tables with MultiRegionConsistency set to STRONG."),
    ({"ReplicaUpdates": [{"Create": {"RegionName": "us-west-1"}}], "MultiRegionConsistency": "STRONG",
      "GlobalTableWitnessUpdates": [{"Create": {"RegionName": "us-east-2"}}]},
     "Unsupported Region(s) specified for global tables with MultiRegionConsistency set to STRONG: [us-west-1]."),
    ({"ReplicaUpdates": [{"Create": {"RegionName": "us-west-2"}}], "MultiRegionConsistency": "STRONG",
      "GlobalTableWitnessUpdates": [{"Create": {"RegionName": "us-east-1"}}]},
     "Cannot add a witness in the same region as an existing replica when creating a global table with "
     "MultiRegionConsistency set to STRONG."),
    ({"ReplicaUpdates": [{"Create": {"RegionName": "us-west-2"}}], "MultiRegionConsistency": "STRONG",
      "GlobalTableWitnessUpdates": [{"Create": {"RegionName": "us-west-2"}}]},
     "Cannot target multiple regions with the same action"),
])
def test_replica_updates_dynamodb_refuses_are_refused_in_its_words(regions, arguments, message):
    assert refusal(regions["us-east-1"].update_table, **arguments) == ("ValidationException", message)
    assert not GLOBAL_MEMBERS & set(regions["us-east-1"].describe_table(TableName=TABLE)["Table"])


def test_a_replica_is_not_created_twice_nor_over_a_table_of_that_region(regions):
    us, west = regions["us-east-1"], regions["us-west-2"]
    add_replica(us, "eu-west-1")
    words = f"Failed to create a the new replica of table with name: '{TABLE}' because one or more replicas " \
            "already existed as tables."
    assert refusal(us.update_table, ReplicaUpdates=[{"Create": {"RegionName": "eu-west-1"}}])[1] == words
    west.create_table(TableName=TABLE, **KEY)
    assert refusal(us.update_table, ReplicaUpdates=[{"Create": {"RegionName": "us-west-2"}}])[1] == words
    west.delete_table(TableName=TABLE)


def strong(regions):
    """TABLE made an MRSC global table: replica us-west-2, witness us-east-2; the UpdateTable answer."""
    return regions["us-east-1"].update_table(
        TableName=TABLE, MultiRegionConsistency="STRONG", ReplicaUpdates=[{"Create": {"RegionName": "us-west-2"}}],
        GlobalTableWitnessUpdates=[{"Create": {"RegionName": "us-east-2"}}])["TableDescription"]


def test_an_mrsc_table_is_described_with_its_mode_and_witness_in_each_replica_region(regions):
    answer = strong(regions)
    assert answer["MultiRegionConsistency"] == "STRONG" and answer["TableStatus"] == "UPDATING"
    for client, other in ((regions["us-east-1"], "us-west-2"), (regions["us-west-2"], "us-east-1")):
        table = client.describe_table(TableName=TABLE)["Table"]
        assert table["MultiRegionConsistency"] == "STRONG"
        assert table["GlobalTableWitnesses"] == [{"RegionName": "us-east-2", "WitnessStatus": "ACTIVE"}]
        assert [r["RegionName"] for r in table["Replicas"]] == [other]
    assert TABLE not in regions["us-east-2"].list_tables()["TableNames"]


def test_a_strongly_consistent_read_in_another_region_of_an_mrsc_table_sees_the_write(regions):
    strong(regions)
    regions["us-west-2"].put_item(TableName=TABLE, Item={"PK": "seat", "holder": "bob"})
    read = regions["us-east-1"].get_item(TableName=TABLE, Key={"PK": "seat"}, ConsistentRead=True)
    assert read["Item"] == {"PK": "seat", "holder": "bob"}


def test_an_mrsc_table_refuses_transactions_ttl_and_changes_to_its_regions(regions):
    strong(regions)
    us = regions["us-east-1"]
    transaction_words = ("is not supported on table p34-global: MRSC global tables do not support transaction "
                         "operations")
    with pytest.raises(ClientError, match=f"TransactWriteItems {transaction_words}"):
        us.transact_write_items(TransactItems=[{"Put": {"TableName": TABLE, "Item": {"PK": "x"}}}])
    with pytest.raises(ClientError, match=f"TransactGetItems {transaction_words}"):
        regions["us-west-2"].transact_get_items(TransactItems=[{"Get": {"TableName": TABLE, "Key": {"PK": "x"}}}])
    with pytest.raises(ClientError, match=f"ExecuteTransaction {transaction_words}"):
        us.execute_transaction(TransactStatements=[{"Statement": f"INSERT INTO \"{TABLE}\" VALUE {{'PK': 'x'}}"}])
    assert "Item" not in us.get_item(TableName=TABLE, Key={"PK": "x"})
    with pytest.raises(ClientError, match="do not support TTL"):
        us.update_time_to_live(TableName=TABLE, TimeToLiveSpecification={"Enabled": True, "AttributeName": "ttl"})
    assert refusal(us.update_table, ReplicaUpdates=[{"Create": {"RegionName": "eu-west-1"}}])[1] == \
        "Cannot add replicas to a global table with strong MultiRegionConsistency"
    assert refusal(us.update_table, ReplicaUpdates=[{"Delete": {"RegionName": "us-west-2"}}])[1] == \
        "Update table delete operation does not include all witnesses."
    assert refusal(us.delete_table) == ("ValidationException", "Deletion of only one table replica is not supported "
                                                               "for global tables with MultiRegionConsistency set to "
                                                               "STRONG.")


def raw_client(lab, region):
    """A plain boto3 DynamoDB client for `region` at the lab server's endpoint: none of the lab's helpers."""
    return boto3.client("dynamodb", endpoint_url=lab.endpoint, region_name=region, aws_access_key_id="lab",
                        aws_secret_access_key="lab")


@pytest.mark.parametrize("replica, witness", [("eu-west-1", "us-east-2"), ("us-west-2", "eu-west-1")])
def test_over_raw_boto3_an_mrsc_table_across_the_us_and_eu_region_sets_is_refused(lab, regions, replica, witness):
    us = raw_client(lab, "us-east-1")
    code, message = refusal(us.update_table, MultiRegionConsistency="STRONG",
                            ReplicaUpdates=[{"Create": {"RegionName": replica}}],
                            GlobalTableWitnessUpdates=[{"Create": {"RegionName": witness}}])
    assert code == "ValidationException"
    assert message.startswith("The Regions of a global table with MultiRegionConsistency set to STRONG must all be in "
                              "one Region set")
    assert f"these are in US and EU: [us-east-1, {replica}, {witness}]" in message
    assert TABLE not in raw_client(lab, replica).list_tables()["TableNames"]
    assert not GLOBAL_MEMBERS & set(us.describe_table(TableName=TABLE)["Table"])


def test_over_raw_boto3_an_mrsc_table_of_three_eu_regions_is_made(lab, regions):
    eu = raw_client(lab, "eu-west-1")
    eu.create_table(TableName=TABLE, **KEY)
    try:
        answer = eu.update_table(TableName=TABLE, MultiRegionConsistency="STRONG",
                                 ReplicaUpdates=[{"Create": {"RegionName": "eu-central-1"}}],
                                 GlobalTableWitnessUpdates=[{"Create": {"RegionName": "eu-west-2"}}])["TableDescription"]
        assert answer["MultiRegionConsistency"] == "STRONG"
    finally:
        with tracing(False):
            dissolve(TABLE, [eu, raw_client(lab, "eu-central-1")])


def test_an_mrsc_tables_mode_is_set_once(regions):
    strong(regions)
    us = regions["us-east-1"]
    assert refusal(us.update_table, MultiRegionConsistency="EVENTUAL",
                   ReplicaUpdates=[{"Create": {"RegionName": "eu-west-1"}}])[1] == \
        "MultiRegionConsistency parameter is unsupported on existing global table"
    assert refusal(us.update_table, MultiRegionConsistency="STRONG",
                   ReplicaUpdates=[{"Delete": {"RegionName": "us-west-2"}}])[1] == \
        "Only Replica Create actions are supported when MultiRegionConsistency parameter is provided."
    assert regions["us-west-2"].describe_table(TableName=TABLE)["Table"]["MultiRegionConsistency"] == "STRONG"


def test_an_mrsc_table_is_made_only_from_an_empty_table(regions):
    regions["us-east-1"].put_item(TableName=TABLE, Item={"PK": "early"})
    code, message = refusal(regions["us-east-1"].update_table, MultiRegionConsistency="STRONG",
                            ReplicaUpdates=[{"Create": {"RegionName": "us-west-2"}},
                                            {"Create": {"RegionName": "us-east-2"}}])
    assert code == "ValidationException" and "created from an empty table" in message
    assert TABLE not in regions["us-west-2"].list_tables()["TableNames"]


def test_an_mrsc_table_of_three_replicas_is_dissolved_whole(regions):
    us = regions["us-east-1"]
    us.update_table(TableName=TABLE, MultiRegionConsistency="STRONG",
                    ReplicaUpdates=[{"Create": {"RegionName": "us-west-2"}}, {"Create": {"RegionName": "us-east-2"}}])
    assert refusal(us.update_table, ReplicaUpdates=[{"Delete": {"RegionName": "us-west-2"}}])[1] == \
        "Deletion of only one table replica is not supported for global tables with MultiRegionConsistency set to " \
        "STRONG."
    us.update_table(TableName=TABLE, ReplicaUpdates=[{"Delete": {"RegionName": "us-west-2"}},
                                                     {"Delete": {"RegionName": "us-east-2"}}])
    assert not GLOBAL_MEMBERS & set(us.describe_table(TableName=TABLE)["Table"])
    us.transact_write_items(TransactItems=[{"Put": {"TableName": TABLE, "Item": {"PK": "x"}}}])


def test_a_table_of_the_same_name_in_a_region_of_no_replica_stays_a_table_of_its_own(regions):
    us, eu, west = regions["us-east-1"], regions["eu-west-1"], regions["us-west-2"]
    add_replica(us, "eu-west-1")
    west.create_table(TableName=TABLE, **KEY)
    west.put_item(TableName=TABLE, Item={"PK": "west only"})
    assert not GLOBAL_MEMBERS & set(west.describe_table(TableName=TABLE)["Table"])
    assert "Item" not in us.get_item(TableName=TABLE, Key={"PK": "west only"})
    eu.put_item(TableName=TABLE, Item={"PK": "global"})
    assert "Item" not in west.get_item(TableName=TABLE, Key={"PK": "global"})
    west.delete_table(TableName=TABLE)
    assert [r["RegionName"] for r in us.describe_table(TableName=TABLE)["Table"]["Replicas"]] == ["eu-west-1"]


@pytest.fixture
def lagging(regions, lab, knobs_off):
    """(us-east-1's client, eu-west-1's) of an MREC global table holding seat version 1 in both, knobs off."""
    us, eu = regions["us-east-1"], regions["eu-west-1"]
    add_replica(us, "eu-west-1")
    us.put_item(TableName=TABLE, Item={"PK": "seat", "version": 1})
    return us, eu


def book(client, holder):
    """23's version-checked write: take the seat at version 1, making it version 2."""
    client.put_item(TableName=TABLE, Item={"PK": "seat", "version": 2, "holder": holder},
                    ConditionExpression="version = :v", ExpressionAttributeValues={":v": 1})


def booked(client, holder):
    """book(), told "OK" or "refused"."""
    try:
        book(client, holder)
    except client.exceptions.ConditionalCheckFailedException:
        return "refused"
    return "OK"


def booking_race(alice_client, bob_client, seeded):
    """alice and bob each book() the seat with their client, explored: (the orders, the set of (alice told, bob told,
    the holder in alice's Region, in bob's)), each order starting from the seat at version 1 written by `seeded`."""
    def reset():
        for client in seeded:
            client.put_item(TableName=TABLE, Item={"PK": "seat", "version": 1})

    ended = []
    with tracing(False):
        orders = explore({"alice": lambda: booked(alice_client, "alice"), "bob": lambda: booked(bob_client, "bob")},
                         reset, lambda results: ended.append((results["alice"], results["bob"],
                                                              seat(alice_client)["holder"],
                                                              seat(bob_client)["holder"])) or True)
    return orders, set(ended)


def seat(client):
    """The seat as the client's Region holds it, read strongly consistently."""
    return client.get_item(TableName=TABLE, Key={"PK": "seat"}, ConsistentRead=True).get("Item")


def test_with_replication_lag_two_version_checked_writes_in_two_regions_both_succeed_and_one_is_lost(lab, lagging):
    us, eu = lagging
    set_knobs(lab, quiet=True, replication_lag=10)
    book(us, "alice")
    book(eu, "bob")
    assert (seat(us)["holder"], seat(eu)["holder"]) == ("alice", "bob")
    set_knobs(lab, quiet=True, replication_lag=0)
    assert (seat(us)["holder"], seat(eu)["holder"]) == ("bob", "bob")


def test_without_replication_lag_the_second_version_checked_write_is_refused(lagging):
    us, eu = lagging
    book(us, "alice")
    with pytest.raises(eu.exceptions.ConditionalCheckFailedException):
        book(eu, "bob")
    assert (seat(us)["holder"], seat(eu)["holder"]) == ("alice", "alice")


def test_with_replication_lag_a_strongly_consistent_read_in_another_region_misses_a_recent_write(lab, lagging):
    us, eu = lagging
    set_knobs(lab, quiet=True, replication_lag=10)
    us.put_item(TableName=TABLE, Item={"PK": "new"})
    assert "Item" not in eu.get_item(TableName=TABLE, Key={"PK": "new"}, ConsistentRead=True)
    set_knobs(lab, quiet=True, replication_lag=0)
    assert eu.get_item(TableName=TABLE, Key={"PK": "new"}, ConsistentRead=True)["Item"] == {"PK": "new"}


def test_with_replication_lag_the_later_write_wins_in_every_region_a_delete_too(lab, lagging):
    us, eu = lagging
    set_knobs(lab, quiet=True, replication_lag=10)
    eu.put_item(TableName=TABLE, Item={"PK": "seat", "version": 7})
    us.delete_item(TableName=TABLE, Key={"PK": "seat"})
    eu.put_item(TableName=TABLE, Item={"PK": "other", "by": "eu"})
    us.put_item(TableName=TABLE, Item={"PK": "other", "by": "us"})
    set_knobs(lab, quiet=True, replication_lag=0)
    assert (seat(us), seat(eu)) == (None, None)
    assert [client.get_item(TableName=TABLE, Key={"PK": "other"})["Item"]["by"] for client in (us, eu)] == ["us", "us"]


def test_with_replication_lag_an_mrsc_write_returns_once_replicated_and_any_regions_strong_read_sees_it(
        lab, regions, knobs_off):
    strong(regions)
    set_knobs(lab, quiet=True, replication_lag=0.2)
    regions["us-west-2"].put_item(TableName=TABLE, Item={"PK": "seat", "holder": "bob"})
    read = regions["us-east-1"].get_item(TableName=TABLE, Key={"PK": "seat"}, ConsistentRead=True)
    assert read["Item"] == {"PK": "seat", "holder": "bob"}


def test_the_banner_names_replication_only_while_the_server_holds_a_global_table(lab, regions, knobs_off):
    stronger = "writes reach every Region's replica before they return"
    assert stronger not in lab.banner
    add_replica(regions["us-east-1"], "eu-west-1")
    assert stronger in lab.banner
    set_knobs(lab, quiet=True, replication_lag=[0.1, 1])
    assert stronger not in lab.banner and "replication_lag 0.1-1 s" in lab.banner


def test_a_replication_lag_out_of_range_is_refused(lab, knobs_off):
    with pytest.raises(ValueError, match="replication_lag must be a number of seconds from 0 to 10"):
        set_knobs(lab, quiet=True, replication_lag=-1)
    assert get_knobs(lab)["replication_lag"] is None


def test_a_table_named_by_its_arn_gets_its_replica_and_its_writes_reach_it(regions):
    us, eu = regions["us-east-1"], regions["eu-west-1"]
    arn = us.describe_table(TableName=TABLE)["Table"]["TableArn"]
    answer = us.update_table(TableName=arn, ReplicaUpdates=[{"Create": {"RegionName": "eu-west-1"}}])
    assert [r["RegionName"] for r in answer["TableDescription"]["Replicas"]] == ["eu-west-1"]
    us.put_item(TableName=arn, Item={"PK": "by arn"})
    assert eu.get_item(TableName=TABLE, Key={"PK": "by arn"})["Item"] == {"PK": "by arn"}


def test_a_replicated_write_is_recorded_in_the_replicas_stream(lab, regions):
    us, eu = regions["us-east-1"], regions["eu-west-1"]
    add_replica(us, "eu-west-1")
    us.put_item(TableName=TABLE, Item={"PK": "streamed", "n": 1})
    arn = eu.describe_table(TableName=TABLE)["Table"]["LatestStreamArn"]
    streams = boto3.client("dynamodbstreams", region_name="eu-west-1", endpoint_url=lab.endpoint,
                           aws_access_key_id="lab", aws_secret_access_key="lab")
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="TRIM_HORIZON")
    records = streams.get_records(ShardIterator=iterator["ShardIterator"])["Records"]
    assert [(record["eventName"], record["dynamodb"]["NewImage"]) for record in records] == [
        ("INSERT", {"PK": {"S": "streamed"}, "n": {"N": "1"}})]


def test_explored_each_replicated_write_arrives_as_a_move_and_two_version_checked_writes_can_both_succeed(lagging):
    us, eu = lagging

    orders, ended = booking_race(us, eu, (us, eu))
    assert ended == {("OK", "refused", "alice", "alice"), ("refused", "OK", "bob", "bob"),
                          ("OK", "OK", "bob", "bob"), ("OK", "OK", "alice", "alice")}  # both told OK: one is lost
    moved = {move.partition("#")[0] for schedule in orders["schedule"] for move in schedule if "#" in move}
    assert moved == {"eu-west-1", "us-east-1"}  # each write reaches the other Region (unread streams: no moves)
    assert any(step.startswith("eu-west-1: p34-global {PK: 'seat'} as written in us-east-1 arrives in eu-west-1")
               for steps in orders["steps"] for step in steps)


def test_the_step_through_panels_verdict_waits_for_every_arrival_and_says_how_many_are_left(lagging):
    us, eu = lagging

    def nobody_lost(results):
        """Everyone told OK holds the seat in both Regions."""
        told = {name for name, answer in results.items() if answer == "OK"}
        return all(told <= {seat(client).get("holder")} for client in (us, eu))

    panel = step_through({"alice": lambda: booked(us, "alice"), "bob": lambda: booked(eu, "bob")},
                         reset=lambda: [client.put_item(TableName=TABLE, Item={"PK": "seat", "version": 1})
                                        for client in (us, eu)], check=nobody_lost)
    panel.step("alice")
    panel.step("bob")  # both wrote version 2, each in its own Region, before either write arrived
    assert panel.verdict == ("every client done: alice → 'OK', bob → 'OK' · 2 arrivals in another Region and 2 stream "
                             "records still to play: press them for the verdict")
    assert panel.judged()[0] is None and "#555" in panel.verdict_view.value  # grey, neither holds nor BROKEN
    for move in [move for move in panel.move_buttons if move.startswith("stream#")]:
        panel.step(move)
    panel.step(next(move for move in panel.move_buttons if move.startswith("eu-west-1#")))
    assert panel.verdict.endswith("· 1 arrival in another Region still to play: press it for the verdict")
    while panel.move_buttons:  # the arrival in us-east-1, then the record it puts in that replica's stream
        assert panel.judged()[0] is None
        panel.step(next(iter(panel.move_buttons)))
    assert panel.verdict == "all done: alice → 'OK', bob → 'OK' · the invariant is BROKEN"


def test_explored_on_mrsc_a_write_meeting_another_regions_write_in_flight_is_retried_never_lost(regions, lab,
                                                                                                knobs_off):
    strong(regions)
    us, west = regions["us-east-1"], regions["us-west-2"]

    orders, ended = booking_race(us, west, (us,))
    assert ended == {("OK", "refused", "alice", "alice"), ("refused", "OK", "bob", "bob")}  # never both OK
    answered = {(step, answer) for row in orders.itertuples() for step, answer in zip(row.steps, row.answers)}
    assert ("bob: PutItem", "ReplicatedWriteConflictException") in answered  # alice's in flight: bob's SDK retries
    acknowledged = "alice: PutItem of {PK: 'seat'} replicated from us-east-1 to another Region: acknowledged"
    assert (acknowledged, "OK") in answered
    assert not any("#" in move for schedule in orders["schedule"] for move in schedule)  # nothing arrives later


def test_explored_on_mrsc_a_strong_read_in_any_region_sees_the_write_once_acknowledged_never_before(regions, lab,
                                                                                                    knobs_off):
    strong(regions)
    us, west = regions["us-east-1"], regions["us-west-2"]

    def reset():
        us.put_item(TableName=TABLE, Item={"PK": "seat", "version": 1})

    seen = []
    with tracing(False):
        explore({"alice": lambda: us.put_item(TableName=TABLE, Item={"PK": "seat", "version": 2}),
                 "bob": lambda: seat(west)["version"]}, reset,
                lambda results: seen.append(results["bob"]) or True)
    assert sorted(set(seen)) == [1, 2]


def test_the_meter_counts_each_write_once_more_in_each_other_replica_and_none_for_a_witness(lab, regions, knobs_off):
    us = regions["us-east-1"]
    add_replica(us, "eu-west-1")
    add_replica(us, "us-west-2")
    before = table_counters(lab, TABLE)
    us.put_item(TableName=TABLE, Item={"PK": "big", "text": "x" * 1500})  # 2 KB units
    us.delete_item(TableName=TABLE, Key={"PK": "big"})
    after = table_counters(lab, TABLE)
    assert after["ReplicatedWriteUnits"] - before["ReplicatedWriteUnits"] == 2 * (2 + 1)


def test_an_mrsc_write_is_counted_in_the_other_replica_not_the_witness(lab, regions, knobs_off):
    strong(regions)
    before = table_counters(lab, TABLE)["ReplicatedWriteUnits"]
    regions["us-east-1"].put_item(TableName=TABLE, Item={"PK": "seat"})
    assert table_counters(lab, TABLE)["ReplicatedWriteUnits"] - before == 1


def raw(endpoint, region, operation, body, **headers):
    """(status, headers, parsed body) of one DynamoDB request sent as raw HTTP, signed (in name) for `region`, its
    header names in lower case as some SDKs send them."""
    parts = urlsplit(endpoint)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=5)
    try:
        connection.request("POST", "/", json.dumps(body).encode(), {
            "x-amz-target": f"DynamoDB_20120810.{operation}", "content-type": "application/x-amz-json-1.0",
            "authorization": f"AWS4-HMAC-SHA256 Credential=lab/20260101/{region}/dynamodb/aws4_request, "
                             "SignedHeaders=host, Signature=0", **headers})
        response = connection.getresponse()
        return response.status, {name.lower(): value for name, value in response.getheaders()}, json.loads(
            response.read() or b"{}")
    finally:
        connection.close()


def test_over_raw_http_an_mrsc_write_held_in_flight_refuses_another_regions_write_with_409_until_acknowledged(
        lab, regions, knobs_off):
    strong(regions)
    seat = {"TableName": TABLE, "Key": {"PK": {"S": "seat"}}, "ConsistentRead": True}
    consistency = lab.endpoint + "/lab/consistency"
    labhttp.request(consistency, "POST", json.dumps({"mode": "explore"}).encode())
    try:
        status, headers, _ = raw(lab.endpoint, "us-east-1", "PutItem", {
            "TableName": TABLE, "Item": {"PK": {"S": "seat"}, "holder": {"S": "alice"}}},
            **{"x-lab-hold-transaction": "1"})
        ongoing = json.loads(headers["x-lab-transaction"])
        assert status == 200 and ongoing["replicating"] == "us-east-1"
        assert "Item" not in raw(lab.endpoint, "us-west-2", "GetItem", seat)[2]  # in flight: no Region sees it yet
        status, _, refusal = raw(lab.endpoint, "us-west-2", "PutItem", {
            "TableName": TABLE, "Item": {"PK": {"S": "seat"}, "holder": {"S": "bob"}}})
        assert (status, refusal["__type"].rpartition("#")[2], refusal["message"]) == (
            409, "ReplicatedWriteConflictException",
            "The request was rejected because one or more items in the request are being modified by a request in "
            "another Region.")
        labhttp.request(consistency, "POST", json.dumps({"reveal": [ongoing["id"], 0]}).encode())
        assert raw(lab.endpoint, "us-west-2", "GetItem", seat)[2]["Item"]["holder"] == {"S": "alice"}
        assert raw(lab.endpoint, "us-west-2", "PutItem", {
            "TableName": TABLE, "Item": {"PK": {"S": "seat"}, "holder": {"S": "bob"}}})[0] == 200
    finally:
        labhttp.request(consistency, "POST", json.dumps({"mode": "sampled"}).encode())


def test_explored_a_replicas_stream_is_explored_record_by_record_once_a_client_reads_it(lab, lagging):
    us, eu = lagging
    arn = eu.describe_table(TableName=TABLE)["Table"]["LatestStreamArn"]
    streams = boto3.client("dynamodbstreams", region_name="eu-west-1", endpoint_url=lab.endpoint,
                           aws_access_key_id="lab", aws_secret_access_key="lab")

    def records():
        shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
        iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="TRIM_HORIZON")
        return tuple(record["dynamodb"]["Keys"]["PK"]["S"]
                     for record in streams.get_records(ShardIterator=iterator["ShardIterator"])["Records"])

    def write_both():
        us.put_item(TableName=TABLE, Item={"PK": "A"})
        us.put_item(TableName=TABLE, Item={"PK": "B"})

    def neither():
        for key in ("A", "B"):
            us.delete_item(TableName=TABLE, Key={"PK": key})

    seen = []
    with tracing(False):
        unread = explore({"alice": write_both}, neither, lambda results: True)
        read = explore({"alice": write_both, "bob": records}, neither,
                       lambda results: seen.append(results["bob"][-2:]) or True)
    assert not any(move.startswith("stream#") for schedule in unread["schedule"] for move in schedule)
    assert any(move.startswith("stream#") for schedule in read["schedule"] for move in schedule)
    assert {("A", "B"), ("B", "A")} <= set(seen)  # the items reach eu-west-1, and its stream, in either order
    assert len(seen) == len(read)  # the check ran once per behaviour explored, none for the run that started over


def test_with_replication_lag_an_mrsc_write_is_in_flight_and_another_regions_write_to_its_item_meets_409(
        lab, regions, knobs_off):
    strong(regions)
    us, west = regions["us-east-1"], regions["us-west-2"]
    impatient = boto3.client("dynamodb", region_name="us-west-2", endpoint_url=lab.endpoint, aws_access_key_id="lab",
                             aws_secret_access_key="lab", config=Config(retries={"total_max_attempts": 1}))
    set_knobs(lab, quiet=True, replication_lag=[1, 1])
    writer = threading.Thread(target=lambda: us.put_item(TableName=TABLE, Item={"PK": "seat", "holder": "alice"}))
    writer.start()
    time.sleep(0.3)
    with pytest.raises(ClientError) as refused:
        impatient.put_item(TableName=TABLE, Item={"PK": {"S": "seat"}, "holder": {"S": "bob"}})
    seen_in_flight = [client.get_item(TableName=TABLE, Key={"PK": "seat"}, ConsistentRead=True).get("Item")
                      for client in (us, west)]
    writer.join()
    assert (refused.value.response["Error"]["Code"], refused.value.response["ResponseMetadata"]["HTTPStatusCode"]) == (
        "ReplicatedWriteConflictException", 409)
    assert seen_in_flight == [None, None]  # not acknowledged yet: no Region's strong read shows it
    assert [seat(client)["holder"] for client in (us, west)] == ["alice", "alice"]


def test_with_replication_lag_two_regions_racing_for_one_seat_on_mrsc_never_both_get_it(lab, regions, knobs_off):
    strong(regions)
    clients = {"alice": regions["us-east-1"], "bob": regions["us-west-2"]}
    set_knobs(lab, quiet=True, replication_lag=[0.2, 0.2])
    told = {}

    def take(name):
        try:
            clients[name].put_item(TableName=TABLE, Item={"PK": "seat", "holder": name},
                                   ConditionExpression="attribute_not_exists(holder)")
            told[name] = "OK"
        except ClientError as error:
            told[name] = error.response["Error"]["Code"]

    for _ in range(5):
        regions["us-east-1"].delete_item(TableName=TABLE, Key={"PK": "seat"})
        racers = [threading.Thread(target=take, args=(name,)) for name in clients]
        for racer in racers:
            racer.start()
        for racer in racers:
            racer.join()
        holders = {seat(client)["holder"] for client in clients.values()}
        assert list(told.values()).count("OK") == 1 and holders == {next(n for n, a in told.items() if a == "OK")}
        assert set(told.values()) <= {"OK", "ConditionalCheckFailedException", "ReplicatedWriteConflictException"}
