"""The partition_limits knob throttles a hot partition key value as DynamoDB does, the SDK retries for real, and
a counter sharded across partition key values (the Developer Guide's write sharding) is never throttled."""
import threading
import time

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from helpers import fresh_table
from helpers.backend import DUMMY_CREDENTIALS
from helpers.knobs import set_knobs
from helpers.meter import metered, reset_metrics, table_counters

TABLE = "p24-atomic-counters"
INDEXED = "p28-gsi-consistency"  # keyed by PK and SK, with GSI1 on GSI1PK and GSI1SK projecting every attribute
THREADS, WRITES = 4, 10
LIMIT = 20  # write units per partition key value per second


def add_one(client, pk):
    """ADD 1 to the counter at `pk`: (applied, retries the SDK made, throttled answers it got)."""
    try:
        answer = client.update_item(TableName=TABLE, Key={"PK": pk, "SK": "COUNT"}, UpdateExpression="ADD n :one",
                                    ExpressionAttributeValues={":one": 1})
    except ClientError as refused:
        assert refused.response["Error"]["Code"] == "ThrottlingException"
        retries = refused.response["ResponseMetadata"]["RetryAttempts"]
        return False, retries, retries + 1
    retries = answer["ResponseMetadata"]["RetryAttempts"]
    return True, retries, retries


def hammer(client, keys):
    """THREADS threads, each adding WRITES times, spread over `keys` in turn: [(applied, retries, throttled)]."""
    outcomes, barrier = [], threading.Barrier(THREADS)

    def work(worker):
        barrier.wait()
        for write in range(WRITES):
            outcomes.append(add_one(client, keys[(worker * WRITES + write) % len(keys)]))

    workers = [threading.Thread(target=work, args=(worker,)) for worker in range(THREADS)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return outcomes


def counted(lab, keys):
    """The sum of the counters at `keys`."""
    return sum(int(lab.client.get_item(TableName=TABLE, Key={"PK": pk, "SK": "COUNT"}, ConsistentRead=True)
                   .get("Item", {}).get("n", 0)) for pk in keys)


@pytest.fixture
def limited(lab, knobs_off):
    """A fresh counters table, with every partition key value limited to LIMIT write units a second."""
    fresh_table(TABLE, lab)
    set_knobs(lab, quiet=True, partition_limits={"write": LIMIT})


def test_a_hot_key_is_throttled_and_every_throttle_is_an_sdk_retry_or_an_error(lab, limited):
    with metered(lab, TABLE) as cost:
        outcomes = hammer(lab.client, ["hot"])
    applied = sum(done for done, _, _ in outcomes)
    assert cost["ThrottledRequests"] > 0
    assert cost["ThrottledRequests"] == sum(throttled for _, _, throttled in outcomes)
    assert sum(retries for _, retries, _ in outcomes) > 0
    assert counted(lab, ["hot"]) == applied
    assert cost["ConsumedWriteCapacityUnits"] == applied


def test_a_sharded_counter_is_not_throttled(lab, limited):
    shards = [f"counter#{shard}" for shard in range(8)]
    with metered(lab, TABLE) as cost:
        outcomes = hammer(lab.client, shards)
    assert cost["ThrottledRequests"] == 0
    assert all(done and retries == 0 for done, retries, _ in outcomes)
    assert counted(lab, shards) == THREADS * WRITES


BIG = "x" * (40 * 1024 - 64)  # with its key, an item of just under 40 KB: 40 write units, 10 consistent read units
HOT = {"PK": {"S": "hot"}, "SK": {"S": "big"}}


@pytest.fixture
def once(lab):
    """A client of the lab that never retries, so that each throttled answer shows."""
    return boto3.client("dynamodb", endpoint_url=lab.endpoint, config=Config(retries={"total_max_attempts": 1}),
                        **DUMMY_CREDENTIALS)


def limit(lab, table=TABLE, **units):
    """A fresh `table` (the counters table unless named) and meter, with each partition key value limited to `units`
    ({"read": n, "write": n})."""
    fresh_table(table, lab)
    reset_metrics(lab)
    set_knobs(lab, quiet=True, partition_limits=units)


def put(client, pk, sk, **attributes):
    """A PutRequest of BatchWriteItem for the item at (pk, sk)."""
    item = {"PK": {"S": pk}, "SK": {"S": sk}, **{name: {"S": value} for name, value in attributes.items()}}
    return {"PutRequest": {"Item": item}}


def throttled_code(call):
    """The error code and ThrottlingReasons' reasons of a call the lab throttles."""
    with pytest.raises(ClientError) as refused:
        call()
    answer = refused.value.response
    return answer["Error"]["Code"], [reason["reason"] for reason in answer["throttlingReasons"]]


def throttled_resources(call):
    """The error code and ThrottlingReasons' (reason, resource) pairs of a call the lab throttles."""
    with pytest.raises(ClientError) as refused:
        call()
    return refused.value.response["Error"]["Code"], [(reason["reason"], reason["resource"])
                                                     for reason in refused.value.response["throttlingReasons"]]


def indexed(pk, gsi_pk, **attributes):
    """An item of the indexed table at (pk, "item") whose GSI1 entry is in the partition `gsi_pk`."""
    return {"PK": {"S": pk}, "SK": {"S": "item"}, "GSI1PK": {"S": gsi_pk}, "GSI1SK": {"S": "1"},
            **{name: {"S": value} for name, value in attributes.items()}}


def test_writes_to_an_exhausted_index_partition_are_throttled_by_the_index_whatever_their_table_key(
        lab, knobs_off, once):
    limit(lab, INDEXED, write=2)
    once.put_item(TableName=INDEXED, Item=indexed("big", "hot", blob=BIG))  # 40 units in GSI1's partition "hot"
    once.put_item(TableName=INDEXED, Item=indexed("moving", "cold"))
    index_arn = once.describe_table(TableName=INDEXED)["Table"]["TableArn"] + "/index/GSI1"
    with metered(lab, INDEXED) as cost:
        put = throttled_resources(lambda: once.put_item(TableName=INDEXED, Item=indexed("new", "hot")))
        moved = throttled_resources(lambda: once.update_item(
            TableName=INDEXED, Key={"PK": {"S": "moving"}, "SK": {"S": "item"}}, UpdateExpression="SET GSI1PK = :hot",
            ExpressionAttributeValues={":hot": {"S": "hot"}}))
        once.put_item(TableName=INDEXED, Item=indexed("new", "warm"))
    assert put == moved == ("ThrottlingException", [("IndexWriteKeyRangeThroughputExceeded", index_arn)])
    assert (cost["ThrottledRequests"], cost["WriteThrottleEvents"]) == (2, 2)
    assert (cost["ConsumedWriteCapacityUnits"], cost["IndexWriteCapacityUnits"]) == (1, 1)  # the warm put alone


def test_a_batch_write_leaves_unprocessed_the_items_of_an_exhausted_index_partition(lab, knobs_off, once):
    limit(lab, INDEXED, write=2)
    once.put_item(TableName=INDEXED, Item=indexed("big", "hot", blob=BIG))
    hot = [{"PutRequest": {"Item": indexed(f"hot-{n}", "hot")}} for n in range(3)]
    spread = [{"PutRequest": {"Item": indexed(f"spread-{n}", f"g{n}")}} for n in range(3)]
    answer = once.batch_write_item(RequestItems={INDEXED: hot + spread})
    stored = once.scan(TableName=INDEXED, ConsistentRead=True)["Items"]
    assert answer["UnprocessedItems"] == {INDEXED: hot}
    assert sorted(item["PK"]["S"] for item in stored) == ["big", "spread-0", "spread-1", "spread-2"]
    assert table_counters(lab, INDEXED)["WriteThrottleEvents"] == 3


def test_a_query_on_a_hot_key_is_refused_and_consumes_nothing(lab, knobs_off, once):
    limit(lab, read=1)
    once.put_item(TableName=TABLE, Item={**HOT, "blob": {"S": BIG}})
    with metered(lab, TABLE) as cost:
        read = once.query(TableName=TABLE, KeyConditionExpression="PK = :pk", ConsistentRead=True,
                          ExpressionAttributeValues={":pk": {"S": "hot"}})
        refused = throttled_code(lambda: once.query(TableName=TABLE, KeyConditionExpression="#p = :pk",
                                                    ExpressionAttributeNames={"#p": "PK"},
                                                    ExpressionAttributeValues={":pk": {"S": "hot"}}))
        cold = once.query(TableName=TABLE, KeyConditionExpression="PK = :pk",
                          ExpressionAttributeValues={":pk": {"S": "cold"}})
    assert len(read["Items"]) == 1 and cold["Items"] == []
    assert refused == ("ThrottlingException", ["TableReadKeyRangeThroughputExceeded"])
    assert (cost["ConsumedReadCapacityUnits"], cost["ThrottledRequests"]) == (10 + 0.5, 1)
    assert table_counters(lab, TABLE)["ReadThrottleEvents"] == 1


def test_a_scan_is_refused_while_a_partition_it_reads_is_exhausted(lab, knobs_off, once):
    limit(lab, read=1)
    once.put_item(TableName=TABLE, Item={**HOT, "blob": {"S": BIG}})
    once.scan(TableName=TABLE, ConsistentRead=True)
    assert throttled_code(lambda: once.scan(TableName=TABLE)) == (
        "ThrottlingException", ["TableReadKeyRangeThroughputExceeded"])
    assert once.get_item(TableName=TABLE, Key={"PK": {"S": "cold"}, "SK": {"S": "a"}}).get("Item") is None


def test_a_batch_write_leaves_a_hot_partitions_items_unprocessed_and_writes_the_rest(lab, knobs_off, once):
    limit(lab, write=3)
    hot = [put(once, "hot", f"item-{n}") for n in range(5)]
    cold = [put(once, f"cold-{n}", "item") for n in range(3)]
    with metered(lab, TABLE) as cost:
        answer = once.batch_write_item(RequestItems={TABLE: hot + cold})
    assert answer["UnprocessedItems"] == {TABLE: hot[3:]}
    stored = once.scan(TableName=TABLE, ConsistentRead=True)["Items"]
    assert sorted(item["PK"]["S"] + "/" + item["SK"]["S"] for item in stored) == sorted(
        request["PutRequest"]["Item"]["PK"]["S"] + "/" + request["PutRequest"]["Item"]["SK"]["S"]
        for request in hot[:3] + cold)
    assert (cost["ConsumedWriteCapacityUnits"], cost["ThrottledRequests"]) == (6, 0)
    assert table_counters(lab, TABLE)["WriteThrottleEvents"] == 2


def resend(client, pending):
    """One BatchWriteItem of the `pending` requests: those left unprocessed (all of them when it was refused)."""
    try:
        return client.batch_write_item(RequestItems=pending)["UnprocessedItems"]
    except client.exceptions.ThrottlingException:
        return pending


def test_a_learner_resends_unprocessed_items_until_every_one_is_written(lab, knobs_off, once):
    limit(lab, write=5)
    pending, rounds = {TABLE: [put(once, "hot", f"item-{n}") for n in range(12)]}, 0
    while pending and rounds < 200:
        pending, rounds = resend(once, pending), rounds + 1
        time.sleep(0.05 if pending else 0)
    assert pending == {} and rounds > 1
    assert len(once.scan(TableName=TABLE, ConsistentRead=True)["Items"]) == 12


def test_a_batch_none_of_whose_items_can_be_processed_is_refused(lab, knobs_off, once):
    limit(lab, write=1)
    once.put_item(TableName=TABLE, Item={**HOT, "blob": {"S": BIG}})
    with metered(lab, TABLE) as cost:
        refused = throttled_code(lambda: once.batch_write_item(
            RequestItems={TABLE: [put(once, "hot", f"item-{n}") for n in range(3)]}))
    assert refused == ("ThrottlingException", ["TableWriteKeyRangeThroughputExceeded"])
    assert (cost["ConsumedWriteCapacityUnits"], cost["ThrottledRequests"], cost["Requests"]) == (0, 1, 0)
    assert table_counters(lab, TABLE)["WriteThrottleEvents"] == 3


def test_a_batch_get_answers_a_hot_partitions_keys_in_unprocessed_keys(lab, knobs_off, once):
    limit(lab, read=1)
    once.put_item(TableName=TABLE, Item={**HOT, "blob": {"S": BIG}})
    once.put_item(TableName=TABLE, Item={"PK": {"S": "cold"}, "SK": {"S": "a"}})
    later = {"PK": {"S": "hot"}, "SK": {"S": "small"}}
    answer = once.batch_get_item(RequestItems={TABLE: {
        "Keys": [HOT, later, {"PK": {"S": "cold"}, "SK": {"S": "a"}}], "ConsistentRead": True}})
    assert answer["UnprocessedKeys"] == {TABLE: {"Keys": [later], "ConsistentRead": True}}
    assert sorted(item["PK"]["S"] for item in answer["Responses"][TABLE]) == ["cold", "hot"]
    counters = table_counters(lab, TABLE)
    assert (counters["ReadThrottleEvents"], counters["ThrottledRequests"]) == (1, 0)


def test_partiql_statements_are_throttled_by_the_partition_they_name(lab, knobs_off, once):
    limit(lab, read=1)
    once.put_item(TableName=TABLE, Item={**HOT, "blob": {"S": BIG}})
    once.put_item(TableName=TABLE, Item={"PK": {"S": "cold"}, "SK": {"S": "a"}})
    once.execute_statement(Statement=f"SELECT * FROM \"{TABLE}\" WHERE PK = 'hot'", ConsistentRead=True)
    assert throttled_code(lambda: once.execute_statement(
        Statement=f"SELECT * FROM \"{TABLE}\" WHERE PK = 'hot' AND SK = 'big'"))[0] == "ThrottlingException"
    answer = once.batch_execute_statement(Statements=[
        {"Statement": f"SELECT * FROM \"{TABLE}\" WHERE PK = 'cold' AND SK = 'a'"},
        {"Statement": f"SELECT * FROM \"{TABLE}\" WHERE PK = 'hot' AND SK = 'big'"}])["Responses"]
    assert answer[0]["Item"]["PK"] == {"S": "cold"}
    assert answer[1]["Error"]["Code"] == "ThrottlingError" and answer[1]["TableName"] == TABLE


def test_a_sharded_counters_keys_are_spared_in_batches(lab, knobs_off, once):
    limit(lab, read=1, write=1)
    shards = [f"counter#{shard}" for shard in range(8)]
    written = once.batch_write_item(RequestItems={TABLE: [put(once, pk, "COUNT", n="1") for pk in shards]})
    read = once.batch_get_item(RequestItems={TABLE: {"Keys": [{"PK": {"S": pk}, "SK": {"S": "COUNT"}}
                                                              for pk in shards], "ConsistentRead": True}})
    assert written["UnprocessedItems"] == {} and read["UnprocessedKeys"] == {}
    assert len(read["Responses"][TABLE]) == 8
    assert table_counters(lab, TABLE)["ThrottledRequests"] == 0


def test_with_the_knob_off_nothing_is_throttled(lab, knobs_off, once):
    fresh_table(TABLE, lab)
    reset_metrics(lab)
    for _ in range(3):
        once.put_item(TableName=TABLE, Item={**HOT, "blob": {"S": BIG}})
        assert once.batch_write_item(
            RequestItems={TABLE: [put(once, "hot", f"item-{n}") for n in range(25)]})["UnprocessedItems"] == {}
        once.query(TableName=TABLE, KeyConditionExpression="PK = :pk", ExpressionAttributeValues={":pk": {"S": "hot"}})
        once.scan(TableName=TABLE)
    counters = table_counters(lab, TABLE)
    assert (counters["ThrottledRequests"], counters["WriteThrottleEvents"], counters["ReadThrottleEvents"]) == (0, 0, 0)
