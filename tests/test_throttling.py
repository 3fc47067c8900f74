"""The partition_limits knob throttles a hot partition key value as DynamoDB does, the SDK retries for real, and
a counter sharded across partition key values (the Developer Guide's write sharding) is never throttled."""
import threading

import pytest
from botocore.exceptions import ClientError

from helpers import fresh_table
from helpers.knobs import set_knobs
from helpers.meter import metered

TABLE = "p24-atomic-counters"
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
