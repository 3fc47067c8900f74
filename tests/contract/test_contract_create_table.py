"""CreateTable without its key schema or attribute definitions, which botocore's model leaves optional, is
refused in DynamoDB's words (the lab server answered 500 KeyError); CreateTable and DeleteTable answer with the table on
its way, CREATING and DELETING, as the API reference's examples show (the lab server said ACTIVE)."""
import pytest

KEY_SCHEMA = [{"AttributeName": "pk", "KeyType": "HASH"}]
DEFINITIONS = [{"AttributeName": "pk", "AttributeType": "S"}]
NULL = "Value null at '{}' failed to satisfy constraint: Member must not be null"


@pytest.mark.parametrize("members, message", [
    ({}, "2 validation errors detected: " + NULL.format("attributeDefinitions") + "; " + NULL.format("keySchema")),
    ({"KeySchema": KEY_SCHEMA}, "1 validation error detected: " + NULL.format("attributeDefinitions")),
    ({"AttributeDefinitions": DEFINITIONS}, "1 validation error detected: " + NULL.format("keySchema")),
], ids=["neither", "no definitions", "no key schema"])
def test_create_table_needs_its_key_schema_and_definitions(raw, members, message):
    status, answer = raw("CreateTable", {"TableName": "p99-never-created", "BillingMode": "PAY_PER_REQUEST", **members})
    assert (status, answer["__type"].rsplit("#", 1)[1], answer["message"]) == (400, "ValidationException", message)


def test_create_and_delete_answer_with_the_table_on_its_way_as_the_api_reference_shows(raw):
    created = raw("CreateTable", {"TableName": "p99-on-its-way", "BillingMode": "PAY_PER_REQUEST",
                                  "KeySchema": KEY_SCHEMA, "AttributeDefinitions": DEFINITIONS})
    described = raw("DescribeTable", {"TableName": "p99-on-its-way"})
    deleted = raw("DeleteTable", {"TableName": "p99-on-its-way"})
    assert created[1]["TableDescription"]["TableStatus"] == "CREATING"
    assert deleted[1]["TableDescription"]["TableStatus"] == "DELETING"
    assert described[1]["Table"]["TableStatus"] in ("CREATING", "ACTIVE")
