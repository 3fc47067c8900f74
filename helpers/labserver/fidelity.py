"""Where moto answers differently from DynamoDB, the lab server answers as DynamoDB does.

Both hooks run under the engine lock, so any state kept here is consistent. Each rule is one DynamoDB
behaviour that moto (5.2) lacks; tests/contract/ holds the lab server and DynamoDB to the same answers.
"""
import base64
import hashlib
import json
import time
from collections import OrderedDict

from moto.dynamodb import responses as moto_responses

MAX_ACTIONS = 100
MAX_TRANSACTION_BYTES = 4 * 1024 * 1024
TOKEN_WINDOW_SECONDS = 10 * 60
LENGTH_ERROR = ("1 validation error detected: Value at 'TransactItems' failed to satisfy constraint: "
                "Member must have length {}")
MULTIPLE_OPERATIONS = "Transaction request cannot include multiple operations on one item"
TOO_LARGE = "The aggregate size of the items in the transaction cannot exceed 4 MB"
TOKEN_MISMATCH = ("DynamoDB rejected the request because you retried a request with a different payload but "
                  "with an idempotent token that was already used.")

moto_responses.TRANSACTION_MAX_ITEMS = MAX_ACTIONS  # moto caps TransactGetItems at 25, DynamoDB's limit before 2022

completed_tokens = OrderedDict()  # ClientRequestToken -> (fingerprint of the request, when it completed)


def error(code, message, status=400, **extra):
    """(status, body) of a DynamoDB error response."""
    return status, {"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": message, **extra}


def before(target, params):
    """Answer a request here, as (status, body), when DynamoDB's answer differs from moto's; else None."""
    for rule in BEFORE.get(target, ()):
        try:
            answer = rule(params)
        except (AttributeError, KeyError, TypeError, ValueError):
            return None  # a malformed request: moto's own validation says what is wrong with it
        if answer is not None:
            return answer
    return None


def after(target, params, status, payload):
    """Correct the body of moto's response where it differs from DynamoDB's."""
    for rule in AFTER.get(target, ()):
        payload = rule(params, status, payload)
    return payload


def at_least_one_action(params):
    """An empty TransactItems list is a ValidationException (minimum length 1); moto accepts it."""
    if params.get("TransactItems") == []:
        return error("ValidationException", LENGTH_ERROR.format("greater than or equal to 1"))
    return None


def at_most_100_actions(params):
    """More than 100 actions is a ValidationException in DynamoDB's words; moto words it otherwise."""
    if len(params.get("TransactItems", [])) > MAX_ACTIONS:
        return error("ValidationException", LENGTH_ERROR.format(f"less than or equal to {MAX_ACTIONS}"))
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


def only_updated_attributes(params, status, payload):
    """UPDATED_NEW/UPDATED_OLD return only the updated attributes, never the key; moto adds the key."""
    if status != 200 or params.get("ReturnValues") not in ("UPDATED_NEW", "UPDATED_OLD"):
        return payload
    answer = json.loads(payload)
    keys = set(params.get("Key", {}))
    answer["Attributes"] = {k: v for k, v in answer.get("Attributes", {}).items() if k not in keys}
    if not answer["Attributes"]:
        del answer["Attributes"]
    return json.dumps(answer).encode()


BEFORE = {
    "TransactWriteItems": (at_least_one_action, at_most_100_actions, at_most_4_mb, replayed_token),
    "TransactGetItems": (at_least_one_action, at_most_100_actions, one_get_per_item),
}
AFTER = {
    "TransactWriteItems": (remember_token,),
    "UpdateItem": (only_updated_attributes,),
}


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
