"""A member of the wrong JSON type is DynamoDB's SerializationException in its words, and an operation the
engine does not implement is UnknownOperationException: never an InternalServerError."""
import pytest

SERIALIZATION = "com.amazon.coral.service#SerializationException"


@pytest.mark.parametrize("item, message", [
    ("x", "Unexpected field type"),
    ([], "Unrecognized collection type java.util.Map<java.lang.String, com.amazonaws.dynamodb.v20120810.AttributeValue>"),
    ({"PK": "x"}, "Unexpected value type in payload"),
])
def test_a_put_item_whose_item_has_the_wrong_json_type_is_a_serialization_error(raw, table, item, message):
    assert raw("PutItem", {"TableName": table.name, "Item": item}) == (400, {"__type": SERIALIZATION, "Message": message})


def test_a_map_of_lists_given_a_string_is_a_serialization_error(raw):
    status, answer = raw("BatchWriteItem", {"RequestItems": "x"})
    assert (status, answer["__type"]) == (400, SERIALIZATION)
    assert answer["Message"].startswith("class sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl cannot be "
                                        "cast to class java.lang.Class")


def test_a_map_of_lists_given_a_list_is_a_serialization_error_naming_the_map(raw):
    assert raw("BatchWriteItem", {"RequestItems": []}) == (400, {
        "__type": SERIALIZATION, "Message": "Unrecognized collection type java.util.Map<java.lang.String, "
                                            "java.util.List<com.amazonaws.dynamodb.v20120810.WriteRequest>>"})


def test_an_operation_the_lab_does_not_implement_is_an_unknown_operation(raw):
    assert raw("CreateGlobalTable", {"GlobalTableName": "p99-global", "ReplicationGroup": []}) == (
        400, {"__type": "com.amazon.coral.service#UnknownOperationException"})
