"""A body that is not a JSON object is refused as DynamoDB refuses it, 400 SerializationException (the lab
server used to drop the connection, or answer 500), and the server goes on answering."""
import pytest


@pytest.mark.parametrize("body", [b"not json", b'{"TableName": ', b"[1, 2]", b'"GetItem"', b"\xff\xfe"],
                         ids=["text", "cut short", "list", "string", "not utf-8"])
def test_a_body_that_is_not_a_json_object_is_a_serialization_exception(raw, body):
    assert raw("GetItem", body) == (400, {"__type": "com.amazon.coral.service#SerializationException"})
    assert raw("ListTables", {})[0] == 200
