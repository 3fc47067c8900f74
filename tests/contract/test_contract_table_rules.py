"""Table names, local secondary indexes, UpdateTable, UpdateTimeToLive and ListTables, as DynamoDB answers them (the
Developer Guide's naming rules and Local secondary indexes; words from nubo-db/dynamodb-conformance's captures and
dynalite's tests)."""
import pytest

from helpers.backend import LAB_TAG

LONG_NAME = "a" * 256
BROKEN = "Value '{}' at 'tableName' failed to satisfy constraint: Member must {}"
NAME_ERRORS = {
    "ab": "1 validation error detected: " + BROKEN.format("ab", "have length greater than or equal to 3"),
    LONG_NAME: "1 validation error detected: " + BROKEN.format(LONG_NAME, "have length less than or equal to 255"),
    "bad table!@#": "1 validation error detected: " + BROKEN.format(
        "bad table!@#", "satisfy regular expression pattern: [a-zA-Z0-9_.-]+"),
    "a;": "2 validation errors detected: " + BROKEN.format("a;", "satisfy regular expression pattern: [a-zA-Z0-9_.-]+")
          + "; " + BROKEN.format("a;", "have length greater than or equal to 3"),
}
KEYS = [{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}]
DEFINITIONS = [{"AttributeName": name, "AttributeType": "S"} for name in ("PK", "SK", "other", "lsiSK")]
NO_RANGE_KEY = ("One or more parameter values were invalid: Table KeySchema does not have a range key, which is "
                "required when specifying a LocalSecondaryIndex")
OTHER_HASH_KEY = ("One or more parameter values were invalid: Index KeySchema does not have the same leading hash key "
                  "as table KeySchema for index: lsi1. index hash key: other, table hash key: PK")
SAME_CAPACITY = ("The provisioned throughput for the table will not change. The requested value equals the current "
                 "value. Current ReadCapacityUnits provisioned for the table: 5. Requested ReadCapacityUnits: 5. "
                 "Current WriteCapacityUnits provisioned for the table: 5. Requested WriteCapacityUnits: 5. Refer to "
                 "the Amazon DynamoDB Developer Guide for current limits and how to request higher limits.")
CAPACITY_ON_DEMAND = ("One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can "
                      "be specified when BillingMode is PAY_PER_REQUEST")
TOO_LITTLE = ("1 validation error detected: Value '0' at 'provisionedThroughput.readCapacityUnits' failed to satisfy "
              "constraint: Member must have value greater than or equal to 1")


def dropped(call, name):
    """Delete the table `name` if it exists."""
    call("DeleteTable", {"TableName": name})


@pytest.fixture
def provisioned(call):
    """A table of 5 read and 5 write capacity units, dropped after the test."""
    name = "p90-contract-provisioned"
    dropped(call, name)
    call("CreateTable", {"TableName": name, "KeySchema": KEYS[:1], "AttributeDefinitions": DEFINITIONS[:1],
                         "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
                         "Tags": [LAB_TAG]})
    yield name
    dropped(call, name)


@pytest.mark.parametrize("name", sorted(NAME_ERRORS), ids=["short and odd", "short", "odd", "long"])
def test_create_table_refuses_a_name_dynamodb_refuses(call, name):
    answer = call("CreateTable", {"TableName": name, "KeySchema": KEYS[:1], "AttributeDefinitions": DEFINITIONS[:1],
                                  "BillingMode": "PAY_PER_REQUEST"})
    dropped(call, name)
    assert answer == ("ValidationException", NAME_ERRORS[name])


@pytest.mark.parametrize("name", sorted(NAME_ERRORS), ids=["short and odd", "short", "odd", "long"])
def test_put_item_refuses_a_table_name_dynamodb_refuses(call, name):
    answer = call("PutItem", {"TableName": name, "Item": {"PK": {"S": "a"}}})
    assert answer == ("ValidationException", NAME_ERRORS[name])


@pytest.mark.parametrize("table_keys, index_hash, message", [(KEYS[:1], "PK", NO_RANGE_KEY),
                                                            (KEYS, "other", OTHER_HASH_KEY)],
                         ids=["hash-only table", "another hash key"])
def test_a_local_index_needs_the_table_s_sort_and_partition_key(call, table_keys, index_hash, message):
    name = "p90-contract-lsi"
    answer = call("CreateTable", {"TableName": name, "KeySchema": table_keys, "AttributeDefinitions": DEFINITIONS,
                                  "BillingMode": "PAY_PER_REQUEST", "LocalSecondaryIndexes": [{
                                      "IndexName": "lsi1", "Projection": {"ProjectionType": "ALL"},
                                      "KeySchema": [{"AttributeName": index_hash, "KeyType": "HASH"},
                                                    {"AttributeName": "lsiSK", "KeyType": "RANGE"}]}]})
    dropped(call, name)
    assert answer == ("ValidationException", message)


@pytest.mark.parametrize("update, message", [
    ({"ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}}, SAME_CAPACITY),
    ({"ProvisionedThroughput": {"ReadCapacityUnits": 0, "WriteCapacityUnits": 5}}, TOO_LITTLE),
    ({"BillingMode": "PAY_PER_REQUEST", "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}},
     CAPACITY_ON_DEMAND),
], ids=["the same capacity", "zero capacity", "on demand with capacity"])
def test_update_table_refuses_a_throughput_dynamodb_refuses(call, provisioned, update, message):
    assert call("UpdateTable", {"TableName": provisioned, **update}) == ("ValidationException", message)


def test_update_time_to_live_needs_an_attribute_name(call, table):
    answer = call("UpdateTimeToLive", {"TableName": table.name,
                                       "TimeToLiveSpecification": {"Enabled": True, "AttributeName": ""}})
    assert answer == ("ValidationException", "TimeToLiveSpecification.AttributeName must be non empty")


def test_update_time_to_live_on_a_missing_table_is_resource_not_found(call):
    answer = call("UpdateTimeToLive", {"TableName": "p90-no-such-table",
                                       "TimeToLiveSpecification": {"Enabled": True, "AttributeName": "ttl"}})
    assert answer == ("ResourceNotFoundException", "Requested resource not found: Table: p90-no-such-table not found")


def test_list_tables_names_the_tables_in_alphabetical_order(call):
    names = ["p90-contract-order-b", "p90-contract-order-a"]
    for name in names:
        call("CreateTable", {"TableName": name, "KeySchema": KEYS[:1], "AttributeDefinitions": DEFINITIONS[:1],
                             "BillingMode": "PAY_PER_REQUEST", "Tags": [LAB_TAG]})
    listed = call("ListTables", {})["TableNames"]
    for name in names:
        dropped(call, name)
    assert listed == sorted(listed) and set(names) <= set(listed)
