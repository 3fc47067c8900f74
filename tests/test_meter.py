"""The lab server's meter over HTTP, and what races and explorations say they cost."""
import json
import urllib.request

import boto3
import pytest

from helpers import fresh_table
from helpers.explore import explore
from helpers.knobs import set_knobs
from helpers.races import race

COUNTER = {"PK": "C", "SK": "C"}


def metrics_answer(endpoint, method="GET"):
    """The JSON answer of one request to /lab/metrics."""
    request = urllib.request.Request(endpoint + "/lab/metrics", method=method)
    with urllib.request.urlopen(request, timeout=5) as answer:
        return json.load(answer)


def test_the_metrics_endpoint_counts_per_table_and_delete_resets_it(standalone_server):
    client = boto3.client("dynamodb", endpoint_url=standalone_server, region_name="us-east-1",
                          aws_access_key_id="lab", aws_secret_access_key="lab")
    client.create_table(TableName="p90-meter", BillingMode="PAY_PER_REQUEST",
                        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}],
                        AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"}])
    client.put_item(TableName="p90-meter", Item={"PK": {"S": "a"}})
    with pytest.raises(client.exceptions.ConditionalCheckFailedException):
        client.put_item(TableName="p90-meter", Item={"PK": {"S": "a"}}, ConditionExpression="attribute_not_exists(PK)")
    client.get_item(TableName="p90-meter", Key={"PK": {"S": "a"}})
    counters = metrics_answer(standalone_server)["tables"]["p90-meter"]
    assert (counters["ConsumedWriteCapacityUnits"], counters["WriteUnitsOnRefusedWrites"],
            counters["ConsumedReadCapacityUnits"], counters["ConditionalCheckFailedRequests"],
            counters["Requests"]) == (2.0, 1.0, 0.5, 1, 3)
    assert metrics_answer(standalone_server, "DELETE") == {"tables": {}} == metrics_answer(standalone_server)


def test_a_partition_limit_must_be_a_positive_number_of_units(lab, knobs_off):
    for wrong in ({"write": 0}, {"writes": 5}, {"read": "many"}, 7):
        with pytest.raises(ValueError, match="partition_limits must be an object"):
            set_knobs(lab, quiet=True, partition_limits=wrong)
    assert set_knobs(lab, quiet=True, partition_limits={"read": 5})["partition_limits"] == {"read": 5.0}


def test_a_race_says_what_its_clients_cost(lab, knobs_off):
    table = fresh_table("p24-atomic-counters", lab)
    added = race("add", threads=4, operations=20, table=table)
    assert (added.cost.write_units, added.cost["WriteUnitsOnRefusedWrites"]) == (20, 0)
    checked = race("optimistic", threads=4, operations=20, table=table)
    assert checked.cost.write_units == len(checked.log)
    assert checked.cost["WriteUnitsOnRefusedWrites"] == checked.retries


def test_each_explored_order_says_what_its_requests_cost(lab, knobs_off):
    table = fresh_table("p24-atomic-counters", lab)

    def reset():
        table.put_item(Item={**COUNTER, "n": 0, "v": 0})

    def version_checked():
        item = table.get_item(Key=COUNTER, ConsistentRead=True)["Item"]
        try:
            table.put_item(Item={**COUNTER, "n": item["n"] + 1, "v": item["v"] + 1}, ConditionExpression="v = :v",
                           ExpressionAttributeValues={":v": item["v"]})
        except table.meta.client.exceptions.ConditionalCheckFailedException:
            return "refused"

    orders = explore({"a": version_checked, "b": version_checked}, reset, lambda results: True)
    assert (orders["write units"] == 2).all()
    interleaved = orders["steps"].map(lambda steps: steps[1].endswith("GetItem"))
    assert (orders.loc[interleaved, "on refused writes"] == 1).all() and interleaved.sum() == 2
    assert (orders.loc[~interleaved, "on refused writes"] == 0).all()


def test_an_explored_order_counts_the_write_whose_response_was_lost_and_its_retry(lab, knobs_off):
    table = fresh_table("p24-atomic-counters", lab)

    def reset():
        table.put_item(Item={**COUNTER, "n": 0})

    def add_one():
        table.update_item(Key=COUNTER, UpdateExpression="ADD n :one", ExpressionAttributeValues={":one": 1})

    orders = explore({"a": add_one}, reset, lambda results: True, faults=("lost_response",))
    cost = dict(zip(orders["schedule"], orders["write units"]))
    assert cost == {("a",): 1, ("a!lost", "a"): 2}, "the lost answer's write was applied, then again by the retry"
