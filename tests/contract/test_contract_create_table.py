"""CreateTable without its key schema or attribute definitions, which botocore's model leaves optional, is
refused in DynamoDB's words (the lab server answered 500 KeyError)."""
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
