"""Transactions' limits (1 to 100 actions, 4 MB, one action per item), their shape, and ClientRequestToken replays."""
import base64
import hashlib
import json
import time
from collections import OrderedDict

from moto.dynamodb import responses as moto_responses

from .answers import NULL_MEMBER, constraints_failed, error, java_list
from .expressions import UPDATE_CONDITION_VALUES

MAX_ACTIONS = 100
MAX_TRANSACTION_BYTES = 4 * 1024 * 1024
TOKEN_WINDOW_SECONDS = 10 * 60
TOKEN_LENGTHS = ((lambda token: len(token) >= 1, "Member must have length greater than or equal to 1"),
                 (lambda token: len(token) <= 36, "Member must have length less than or equal to 36"))
TOKEN_CONSTRAINT = "Value '{}' at 'clientRequestToken' failed to satisfy constraint: {}"
LENGTH_ERROR = ("1 validation error detected: Value '{}' at 'transactItems' failed to satisfy constraint: "
                "Member must have length {}")
MULTIPLE_OPERATIONS = "Transaction request cannot include multiple operations on one item"
TOO_LARGE = "The aggregate size of the items in the transaction cannot exceed 4 MB"
NO_WRITE_OPERATION = "Invalid Request: TransactWriteRequest should contain Delete or Put or Update request"
NO_GET = "1 validation error detected: " + NULL_MEMBER.format("transactItems.{}.member.get")
WRITE_OPERATIONS = ("ConditionCheck", "Put", "Delete", "Update")
TOKEN_MISMATCH = ("DynamoDB rejected the request because you retried a request with a different payload but "
                  "with an idempotent token that was already used.")
moto_responses.TRANSACTION_MAX_ITEMS = MAX_ACTIONS  # moto caps TransactGetItems at 25, DynamoDB's limit before 2022
completed_tokens = OrderedDict()  # ClientRequestToken -> (fingerprint of the request, when it completed)


def at_least_one_action(params):
    """An empty TransactItems list is a ValidationException (minimum length 1); moto accepts it."""
    if params.get("TransactItems") == []:
        return error("ValidationException", LENGTH_ERROR.format("[]", "greater than or equal to 1"))
    return None


def at_most_100_actions(model_class, params):
    """More than 100 actions is a ValidationException that prints the list as Java does; moto words it otherwise."""
    actions = params.get("TransactItems", [])
    if len(actions) > MAX_ACTIONS:
        return error("ValidationException", LENGTH_ERROR.format(java_list(model_class, actions),
                                                                f"less than or equal to {MAX_ACTIONS}"))
    return None


def each_write_names_an_operation(params):
    """A TransactWriteItems action naming none of ConditionCheck, Put, Delete, Update is a ValidationException, in
    us-east-1's words (paritysuite/dynamodb-conformance's capture; eu-west-2 words it as a member constraint);
    moto fails with an IndexError."""
    for action in params["TransactItems"]:
        if isinstance(action, dict) and not any(name in action for name in WRITE_OPERATIONS):
            return error("ValidationException", NO_WRITE_OPERATION)
    return None


def each_get_names_a_get(params):
    """A TransactGetItems action without its Get, a member the model requires, is refused as every missing
    required member is, at its place in the list (DynamoDB numbers list members from 1); moto fails with a
    KeyError."""
    for place, action in enumerate(params["TransactItems"], 1):
        if isinstance(action, dict) and action.get("Get") is None:
            return error("ValidationException", NO_GET.format(place))
    return None


def at_most_4_mb(params):
    """The items a transaction writes may not add up to more than 4 MB; moto has no such limit."""
    if sum(action_size(action) for action in params.get("TransactItems", [])) > MAX_TRANSACTION_BYTES:
        return error("ValidationException", TOO_LARGE)
    return None


def one_get_per_item(params):
    """Two Gets of the same item in one TransactGetItems are refused; moto answers both."""
    gets = [action.get("Get", {}) for action in params.get("TransactItems", [])]
    targets = [(get.get("TableName"), json.dumps(get.get("Key"), sort_keys=True)) for get in gets]
    if len(set(targets)) < len(targets):
        return error("ValidationException", MULTIPLE_OPERATIONS)
    return None


def token_length_fits(params):
    """A ClientRequestToken of 1 to 36 characters (the API reference's length constraints), else DynamoDB's
    ValidationException; botocore checks neither bound, and the lab server took any length."""
    token = params.get("ClientRequestToken")
    if not isinstance(token, str):
        return None
    return constraints_failed([TOKEN_CONSTRAINT.format(token, words) for fits, words in TOKEN_LENGTHS if not fits(token)])


def replayed_token(params):
    """A token seen in the last 10 minutes: the same request succeeds without running again, another is refused."""
    forget_expired_tokens()
    token = params.get("ClientRequestToken")
    if token not in completed_tokens:
        return None
    if completed_tokens[token][0] != fingerprint(params):
        return error("IdempotentParameterMismatchException", TOKEN_MISMATCH)
    return 200, {}


def remember_token(params, status, payload):
    """Record the token of a transaction that completed, so a replay within 10 minutes changes nothing."""
    if status == 200 and "ClientRequestToken" in params:
        completed_tokens[params["ClientRequestToken"]] = (fingerprint(params), time.monotonic())
    return payload


def undefined_values_worded(params, status, payload):
    """A transaction action whose expression uses a :value, without ExpressionAttributeValues, is refused whole in
    DynamoDB's words (values_defined); moto cancels it with a TypeError as the reason."""
    if status != 400 or b'"TypeError"' not in payload:
        return payload
    answer = UPDATE_CONDITION_VALUES(params)
    return payload if answer is None else json.dumps(answer[1]).encode()


def forget_expired_tokens():
    """Drop the tokens whose 10-minute window has passed (they are kept oldest first)."""
    oldest_allowed = time.monotonic() - TOKEN_WINDOW_SECONDS
    while completed_tokens and next(iter(completed_tokens.values()))[1] < oldest_allowed:
        completed_tokens.popitem(last=False)


def fingerprint(params):
    """A digest of every request parameter but the token (key order does not matter, as in DynamoDB)."""
    others = {name: value for name, value in params.items() if name != "ClientRequestToken"}
    return hashlib.sha256(json.dumps(others, sort_keys=True).encode()).hexdigest()


def action_size(action):
    """Bytes one transaction action carries: its item or key, plus the values its expressions use."""
    detail = next(iter(action.values()), {})
    item = detail.get("Item") or detail.get("Key") or {}
    return item_size(item) + item_size(detail.get("ExpressionAttributeValues", {}))


def item_size(item):
    """An item's size by DynamoDB's rules: attribute names plus values, in bytes."""
    return sum(len(name.encode()) + value_size(value) for name, value in item.items())


def value_size(value):
    """One attribute value's size in bytes (numbers counted by their digits, a close upper bound)."""
    (kind, inner), = value.items()
    if kind == "S":
        return len(inner.encode())
    if kind == "N":
        return len(inner)
    if kind == "B":
        return len(base64.b64decode(inner))
    if kind in ("SS", "NS", "BS"):
        return sum(value_size({kind[0]: member}) for member in inner)
    if kind == "M":
        return 3 + item_size(inner) + len(inner)
    if kind == "L":
        return 3 + sum(value_size(member) + 1 for member in inner)
    return 1
