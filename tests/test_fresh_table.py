"""fresh_table before every order a checker explores costs one request where dropping and creating the table would leave
the same table: the lab server empties it in place (helpers/labserver/model/fresh.py). Anything more than its items
changed, or asked for otherwise, and the table is dropped and made again, as before."""
import json

import boto3
import pytest

from helpers import fresh_table, labhttp
from helpers.backend import LAB_TAG
from helpers.knobs import set_knobs
from helpers.tables import emptied, table_definitions

TABLE = "p24-atomic-counters"
INDEXED = "p28-gsi-consistency"
KEY = {"PK": "POST#hello-world", "SK": "STATS"}

pytestmark = pytest.mark.usefixtures("knobs_off")


def arguments(name):
    """CreateTable's arguments as fresh_table sends them for the lab's table `name`."""
    return {"TableName": name, "BillingMode": "PAY_PER_REQUEST", "Tags": [LAB_TAG], **table_definitions()[name]}


def described(lab, name):
    """What DescribeTable says of a table, less what differs between two tables made alike (its creation time)."""
    description = lab.client.describe_table(TableName=name)["Table"]
    return {key: value for key, value in description.items() if key != "CreationDateTime"}


def test_a_table_only_its_items_changed_is_emptied_in_place_as_if_made_again(lab):
    made = fresh_table(INDEXED, lab)
    index = table_definitions()[INDEXED]["GlobalSecondaryIndexes"][0]["IndexName"]
    fresh = described(lab, INDEXED)
    made.put_item(Item={"PK": "a", "SK": "b", "GSI1PK": "g", "GSI1SK": "1"})
    assert emptied(lab, arguments(INDEXED))
    assert made.scan(ConsistentRead=True)["Items"] == []
    assert made.query(IndexName=index, KeyConditionExpression="GSI1PK = :g",
                      ExpressionAttributeValues={":g": "g"})["Items"] == []
    assert described(lab, INDEXED) == fresh


@pytest.mark.parametrize("change", ["ttl", "tags", "knob", "other arguments"])
def test_a_table_changed_otherwise_or_asked_for_otherwise_is_dropped_and_made_again(lab, change):
    made = fresh_table(TABLE, lab)
    arn = lab.client.describe_table(TableName=TABLE)["Table"]["TableArn"]
    asked = arguments(TABLE)
    if change == "ttl":
        lab.client.update_time_to_live(TableName=TABLE, TimeToLiveSpecification={"Enabled": True, "AttributeName": "t"})
    elif change == "tags":
        lab.client.tag_resource(ResourceArn=arn, Tags=[{"Key": "extra", "Value": "1"}])
    elif change == "knob":
        set_knobs(lab, quiet=True, latency=[0, 0.001])
    else:
        asked["Tags"] = [LAB_TAG, {"Key": "extra", "Value": "1"}]
    made.put_item(Item={**KEY, "views": 1})
    assert not emptied(lab, asked)
    set_knobs(lab, quiet=True, latency=None)
    fresh_table(TABLE, lab)
    assert made.scan(ConsistentRead=True)["Items"] == []
    assert lab.client.describe_time_to_live(TableName=TABLE)["TimeToLiveDescription"]["TimeToLiveStatus"] == "DISABLED"
    assert lab.client.list_tags_of_resource(ResourceArn=arn)["Tags"] == [LAB_TAG]
    assert emptied(lab, arguments(TABLE))  # made again by CreateTable: the next fresh table is emptied in place


def test_a_table_of_the_same_name_in_another_region_is_never_emptied(lab):
    fresh_table(TABLE, lab)
    other = boto3.client("dynamodb", endpoint_url=lab.endpoint, region_name="eu-west-1", aws_access_key_id="lab",
                         aws_secret_access_key="lab")
    other.create_table(**arguments(TABLE))
    try:
        assert not emptied(lab, arguments(TABLE))
        assert not emptied(lab, {**arguments(TABLE), "TableName": "p99-no-such-table"})
    finally:
        other.delete_table(TableName=TABLE)


def test_the_tables_endpoint_says_what_it_takes(lab):
    status, answer = labhttp.request(lab.endpoint + "/lab/tables", "POST", b"{}", {})
    assert status == 400 and "empty" in json.loads(answer)["message"]
