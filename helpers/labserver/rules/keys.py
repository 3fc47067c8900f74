"""Keys checked against their table's key schema: attributes, types, empty values, in every operation that takes one."""
import json
from functools import partial

from moto.dynamodb.exceptions import TransactionCanceledException

from .answers import error
from ..model.knobs import find_table

KEY_MISMATCH = "The provided key element does not match the schema"
INVALID = "One or more parameter values were invalid:"
EMPTY_KEY_VALUE = ("One or more parameter values are not valid. The AttributeValue for a key attribute cannot "
                   "contain an empty {} value. Key: {}")


def key_fits(table, key):
    """Whether a Key matches its table's key schema: it names the key attributes and no others, each with the type
    the schema gives it. A Key holding a value that is not one typed value is left for moto to refuse (True)."""
    if not isinstance(key, dict):
        return True
    for value in key.values():
        if not isinstance(value, dict) or len(value) != 1:
            return True
    range_name = table.range_key_attr
    if len(key) != (1 if range_name is None else 2) or table.hash_key_type not in key.get(table.hash_key_attr, ()):
        return False
    return range_name is None or table.range_key_type in key.get(range_name, ())


def empty_key_value(table, key):
    """DynamoDB's ValidationException for a key (or an item) whose table key attribute is an empty string or an
    empty binary value, else None. It is checked before the key schema and, in a transaction, before the actions
    run (paritysuite/dynamodb-conformance's captures of real DynamoDB); moto accepted it in DeleteItem, UpdateItem
    and the batch and transaction operations, and worded it otherwise in PutItem."""
    if not isinstance(key, dict):
        return None
    for name in (table.hash_key_attr, table.range_key_attr):
        value = key.get(name) if name else None
        if isinstance(value, dict):
            if value.get("S") == "":
                return error("ValidationException", EMPTY_KEY_VALUE.format("string", name))
            if value.get("B") == "":
                return error("ValidationException", EMPTY_KEY_VALUE.format("binary", name))
    return None


def item_keys_not_empty(params):
    """A PutItem whose item has an empty string or binary key value is refused (empty_key_value), then one missing a
    key attribute or holding it as another type (item_key_problem)."""
    table = find_table(params["TableName"])
    if table is None:
        return None
    return empty_key_value(table, params["Item"]) or item_key_problem(table, params["Item"])


def item_key_problem(table, item):
    """PutItem's ValidationException for an item without a key attribute, or with one of another type than the key
    schema's, in the words moto gives it without ReturnValues (with ALL_OLD moto looked the item up first: an
    InternalServerError for a Map, List or set key value, "Validation Exception" for a missing one); else None."""
    if not isinstance(item, dict) or not all(isinstance(value, dict) and len(value) == 1 for value in item.values()):
        return None  # a value that is not one typed value is a SerializationException, answered later
    for name, wanted in ((table.hash_key_attr, table.hash_key_type), (table.range_key_attr, table.range_key_type)):
        if name is None:
            continue
        value = item.get(name)
        if value is None:
            return error("ValidationException", f"{INVALID} Missing the key {name} in the item")
        if isinstance(value, dict) and len(value) == 1 and wanted not in value:
            return error("ValidationException",
                         f"{INVALID} Type mismatch for key {name} expected: {wanted} actual: {next(iter(value))}")
    return None


def key_matches_schema(params):
    """A Key that does not match the table's key schema (another attribute, one missing or extra, or a key attribute
    of another type) is a ValidationException; moto answers a key of another type as a missing item, or fails.
    An empty key value is refused first (empty_key_value)."""
    table = find_table(params["TableName"])
    if table is None:
        return None
    empty = empty_key_value(table, params["Key"])
    if empty is not None:
        return empty
    if not key_fits(table, params["Key"]):
        return error("ValidationException", KEY_MISMATCH)
    return None


def batch_keys_match_schema(params):
    """Each key of a BatchGetItem, and of each DeleteRequest of a BatchWriteItem, matches its table's key schema;
    no key, nor the item of a PutRequest, has an empty key value (empty_key_value, checked first)."""
    for name, requests in params["RequestItems"].items():
        table = find_table(name)
        if table is None:
            continue
        keys = requests.get("Keys", ()) if isinstance(requests, dict) else \
            [request["DeleteRequest"].get("Key") for request in requests if "DeleteRequest" in request]
        items = () if isinstance(requests, dict) else \
            [request["PutRequest"].get("Item") for request in requests if "PutRequest" in request]
        for key in (*keys, *items):
            empty = empty_key_value(table, key)
            if empty is not None:
                return empty
        if not all(key_fits(table, key) for key in keys):
            return error("ValidationException", KEY_MISMATCH)
    return None


def transaction_keys_not_empty(params):
    """An action whose Key (or Put's Item) has an empty key value refuses the whole request, not as a cancellation
    reason (empty_key_value)."""
    for action in params["TransactItems"]:
        for detail in action.values():
            table = find_table(detail["TableName"])
            empty = None if table is None else empty_key_value(table, detail.get("Key") or detail.get("Item"))
            if empty is not None:
                return empty
    return None


def transaction_keys_match_schema(kinds, params):
    """An action of these kinds whose Key does not match its table's key schema cancels the transaction, reason
    ValidationError at that action's place (None at the others), as DynamoDB cancels it."""
    reasons = []
    for action in params["TransactItems"]:
        (kind, detail), = action.items()
        table = find_table(detail["TableName"]) if kind in kinds else None
        wrong = table is not None and not key_fits(table, detail["Key"])
        reasons.append(("ValidationError", KEY_MISMATCH, None) if wrong else (None, None, None))
    if not any(code for code, _, _ in reasons):
        return None
    return 400, json.loads(TransactionCanceledException(reasons).description)


WRITE_KEYS_MATCH_SCHEMA = partial(transaction_keys_match_schema, {"Update", "Delete", "ConditionCheck"})
