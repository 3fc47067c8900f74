"""Numbers and sets as DynamoDB stores them (the Developer Guide's Supported data types): numbers trimmed of leading and
trailing zeroes, within 38 digits and +-9.9999999999999999999999999999999999999E+125; sets neither empty, at any depth,
nor repeating a string. Words from dynalite's tests and nubo-db/dynamodb-conformance's captures."""
import pytest

TOO_PRECISE = "Attempting to store more than 38 significant digits in a Number"
TOO_LARGE = "Number overflow. Attempting to store a number with magnitude larger than supported range"
EMPTY_SET = "One or more parameter values were invalid: An {} set  may not be empty"


def typed_key(key, name):
    """A low-level key no other test uses."""
    return {"PK": {"S": key(name)["PK"]}, "SK": {"S": "META"}}


def stored(call, table, key):
    """The item at `key` as the table holds it."""
    return call("GetItem", {"TableName": table.name, "Key": key, "ConsistentRead": True}).get("Item")


@pytest.mark.parametrize("sent, kept", [("00042", "42"), ("1.0", "1"), ("1.5E2", "150"), ("-0", "0")])
def test_a_number_is_stored_in_canonical_form(call, table, key, sent, kept):
    item = typed_key(key, "number")
    assert call("PutItem", {"TableName": table.name, "Item": {**item, "n": {"N": sent}, "ns": {"NS": [sent, "7"]}}}) \
        == {}
    assert stored(call, table, item)["n"] == {"N": kept}
    assert sorted(stored(call, table, item)["ns"]["NS"]) == sorted([kept, "7"])


def test_an_updated_number_is_stored_in_canonical_form(call, table, key):
    item = typed_key(key, "updated")
    assert call("UpdateItem", {"TableName": table.name, "Key": item, "UpdateExpression": "SET n = :n",
                               "ExpressionAttributeValues": {":n": {"N": "2.50"}}}) == {}
    assert stored(call, table, item)["n"] == {"N": "2.5"}


@pytest.mark.parametrize("update", ["SET n = n + :v", "ADD n :v"])
def test_a_sum_is_stored_in_canonical_form(call, table, key, update):
    item = typed_key(key, "sum")
    call("PutItem", {"TableName": table.name, "Item": {**item, "n": {"N": "1.5"}}})
    answer = call("UpdateItem", {"TableName": table.name, "Key": item, "UpdateExpression": update,
                                 "ExpressionAttributeValues": {":v": {"N": "1.5"}}, "ReturnValues": "UPDATED_NEW"})
    assert answer == {"Attributes": {"n": {"N": "3"}}}
    assert stored(call, table, item)["n"] == {"N": "3"}


@pytest.mark.parametrize("number, message", [("1" * 39, TOO_PRECISE), ("-1." + "2" * 38, TOO_PRECISE),
                                             ("1E126", TOO_LARGE), ("-1E126", TOO_LARGE)],
                         ids=["39 digits", "39 digits, negative", "too large", "too large, negative"])
def test_a_number_dynamodb_cannot_hold_is_refused(call, table, key, number, message):
    item = typed_key(key, "refused")
    assert call("PutItem", {"TableName": table.name, "Item": {**item, "n": {"N": number}}}) == (
        "ValidationException", message)
    assert stored(call, table, item) is None


@pytest.mark.parametrize("kind, words", [("SS", "string"), ("NS", "number")])
@pytest.mark.parametrize("where", ["top level", "in a list", "in a map"])
def test_an_empty_set_is_refused_at_any_depth(call, table, key, kind, words, where):
    empty = {kind: []}
    value = {"top level": empty, "in a list": {"L": [{"S": "x"}, empty]}, "in a map": {"M": {"s": empty}}}[where]
    item = typed_key(key, "empty")
    assert call("PutItem", {"TableName": table.name, "Item": {**item, "s": value}}) == (
        "ValidationException", EMPTY_SET.format(words))
    assert stored(call, table, item) is None


def test_a_string_set_repeating_a_member_is_refused(call, table, key):
    item = typed_key(key, "repeated")
    answer = call("PutItem", {"TableName": table.name, "Item": {**item, "s": {"SS": ["a", "b", "a"]}}})
    assert answer == ("ValidationException",
                      "One or more parameter values were invalid: Input collection [a, b, a] contains duplicates.")
    assert stored(call, table, item) is None
