"""Update expressions and ReturnValues (notebooks 22, 24): what UpdateItem writes and what it hands back."""
import pytest
from botocore.exceptions import ClientError


def test_updated_new_hands_out_only_the_counter(table, key):
    def next_number():
        return table.update_item(Key=key("invoice", "COUNTER"), UpdateExpression="ADD #n :one",
                                 ExpressionAttributeNames={"#n": "next"}, ExpressionAttributeValues={":one": 1},
                                 ReturnValues="UPDATED_NEW")["Attributes"]

    assert next_number() == {"next": 1}
    assert next_number() == {"next": 2}


@pytest.mark.parametrize("return_values, expected", [
    ("UPDATED_NEW", {"score": 2}),
    ("UPDATED_OLD", {"score": 1}),
    ("ALL_NEW", {"score": 2, "name": "x"}),
    ("ALL_OLD", {"score": 1, "name": "x"}),
])
def test_return_values_choose_which_attributes_come_back(table, key, return_values, expected):
    table.put_item(Item={**key("player"), "score": 1, "name": "x"})
    answer = table.update_item(Key=key("player"), UpdateExpression="SET score = score + :one",
                               ExpressionAttributeValues={":one": 1}, ReturnValues=return_values)
    keys = key("player") if return_values.startswith("ALL") else {}
    assert answer["Attributes"] == {**keys, **expected}


def test_add_creates_the_missing_item_and_the_missing_attribute(table, key):
    table.update_item(Key=key("post"), UpdateExpression="ADD #v :one", ExpressionAttributeNames={"#v": "views"},
                      ExpressionAttributeValues={":one": 1})
    assert table.get_item(Key=key("post"), ConsistentRead=True)["Item"] == {**key("post"), "views": 1}
    table.update_item(Key=key("post"), UpdateExpression="ADD likes :one", ExpressionAttributeValues={":one": 1})
    assert table.get_item(Key=key("post"), ConsistentRead=True)["Item"] == {**key("post"), "views": 1, "likes": 1}


def test_add_to_a_string_attribute_is_a_validation_error(table, key):
    table.put_item(Item={**key("post"), "views": "many"})
    with pytest.raises(ClientError) as refused:
        table.update_item(Key=key("post"), UpdateExpression="ADD #v :one", ExpressionAttributeNames={"#v": "views"},
                      ExpressionAttributeValues={":one": 1})
    assert refused.value.response["Error"] == {
        "Code": "ValidationException",
        "Message": "An operand in the update expression has an incorrect data type"}
    assert table.get_item(Key=key("post"), ConsistentRead=True)["Item"]["views"] == "many"


def test_the_same_update_on_two_items_gives_each_its_own_value(table, key):
    """The same expression and values twice: changing what one item got leaves the other's as sent."""
    for name in ("first", "second"):
        table.update_item(Key=key(name), UpdateExpression="SET #m = :m ADD tags :t",
                          ExpressionAttributeNames={"#m": "meta"},
                          ExpressionAttributeValues={":m": {"seen": ["a"]}, ":t": {"x"}})
    table.update_item(Key=key("first"), UpdateExpression="SET meta.seen[1] = :b ADD tags :y",
                      ExpressionAttributeValues={":b": "b", ":y": {"y"}})
    first = table.get_item(Key=key("first"), ConsistentRead=True)["Item"]
    second = table.get_item(Key=key("second"), ConsistentRead=True)["Item"]
    assert (first["meta"], first["tags"]) == ({"seen": ["a", "b"]}, {"x", "y"})
    assert (second["meta"], second["tags"]) == ({"seen": ["a"]}, {"x"})
    table.update_item(Key=key("third"), UpdateExpression="SET #m = :m ADD tags :t",
                      ExpressionAttributeNames={"#m": "meta"},
                      ExpressionAttributeValues={":m": {"seen": ["a"]}, ":t": {"x"}})
    third = table.get_item(Key=key("third"), ConsistentRead=True)["Item"]
    assert (third["meta"], third["tags"]) == ({"seen": ["a"]}, {"x"})
