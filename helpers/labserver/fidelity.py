"""Where moto answers differently from DynamoDB, the lab server answers as DynamoDB does.

The hooks (before, rewrite, after) run under the engine lock, so any state kept here is consistent. Each
rule is one DynamoDB behaviour that moto (5.2) lacks or answers with an InternalServerError; this is the
one place where such requests get DynamoDB's documented answer, and tests/contract/ holds the lab server
and DynamoDB to the same answers.
"""
import base64
import hashlib
import json
import re
import time
import zlib
from collections import OrderedDict
from functools import cache, partial

from moto.core.responses import get_service_model
from moto.dynamodb import responses as moto_responses
from moto.dynamodb.exceptions import TransactionCanceledException

from .knobs import find_table

MAX_ACTIONS = 100
MAX_TRANSACTION_BYTES = 4 * 1024 * 1024
TOKEN_WINDOW_SECONDS = 10 * 60
LENGTH_ERROR = ("1 validation error detected: Value '{}' at 'transactItems' failed to satisfy constraint: "
                "Member must have length {}")
NULL_MEMBER = "Value null at '{}' failed to satisfy constraint: Member must not be null"
JAVA_MODEL = "com.amazonaws.dynamodb.v20120810"
UNDEFINED_NAME = ("Invalid {}: An expression attribute name used in the document path is not defined; "
                  "attribute name: {}")
PROJECTION_SYNTAX = 'Invalid ProjectionExpression: Syntax error; token: "{}", near: "{}"'
KEY_MISMATCH = "The provided key element does not match the schema"
INDEX_EXISTS = "Attempting to create an index which already exists"
NO_SUCH_INDEX = "Requested resource not found: Index {} for table {}"
NOT_WELL_FORMED = "Statement wasn't well formed, can't be processed: Expected data manipulation"
PARTIQL_VERBS = ("SELECT", "INSERT", "UPDATE", "DELETE", "EXISTS")
NAME_PLACEHOLDER = re.compile(r"#[A-Za-z0-9_]+")
STATEMENT_PIECE = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|\?|[^'\"?]+")
PROJECTION_TOKEN = re.compile(r"\s+|#[A-Za-z0-9_]+|[A-Za-z_][A-Za-z0-9_]*|0|[1-9][0-9]*|[.,\[\]]")
CONDITION_TOKEN = re.compile(r"\s+|[#:][A-Za-z0-9_]+|[A-Za-z_][A-Za-z0-9_]*|[0-9]+|<>|<=|>=|[=<>(),.\[\]]|.")
UNPARSABLE_CONDITION = "Cannot parse condition starting at:"
BAD_FILTER = "Bad Filter Expression: " + UNPARSABLE_CONDITION
CONDITION_SYNTAX = 'Invalid {}: Syntax error; token: "{}", near: "{}"'
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
    for rule in (partial(required_members, target), *BEFORE.get(target, ())):
        try:
            answer = rule(params)
        except (AttributeError, KeyError, TypeError, ValueError):
            return None  # a malformed request: moto's own validation says what is wrong with it
        if answer is not None:
            return answer
    return None


def rewrite(target, params):
    """The request as moto can apply it, where DynamoDB takes a form moto does not; else None."""
    rule = REWRITE.get(target)
    try:
        return rule(params) if rule else None
    except (AttributeError, KeyError, TypeError, ValueError):
        return None


def after(target, params, status, payload):
    """Correct the body of moto's response where it differs from DynamoDB's."""
    for rule in AFTER.get(target, ()):
        payload = rule(params, status, payload)
    return payload


def required_members(target, params):
    """A required member left out is a ValidationException naming each one; moto fails on the missing key."""
    if target not in operation_names():
        return None
    missing = [name for name in required_names(target) if params.get(name) is None]
    if not missing:
        return None
    count = f"{len(missing)} validation error{'s' if len(missing) > 1 else ''} detected: "
    return error("ValidationException", count + "; ".join(NULL_MEMBER.format(lower_camel(n)) for n in missing))


@cache
def operation_names():
    """Every operation in DynamoDB's API model."""
    return frozenset(get_service_model("dynamodb").operation_names)


@cache
def required_names(target):
    """The top-level members an operation's input shape requires, in the model's order."""
    return tuple(get_service_model("dynamodb").operation_model(target).input_shape.required_members)


def lower_camel(name):
    """'TableName' -> 'tableName', as DynamoDB names members in validation errors."""
    return name[:1].lower() + name[1:]


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


def java_list(model_class, actions):
    """The actions as Java's List.toString prints DynamoDB's model objects: [class@hash, ...]."""
    return "[" + ", ".join(f"{JAVA_MODEL}.{model_class}@{zlib.crc32(json.dumps(action, sort_keys=True).encode()):x}"
                           for action in actions) + "]"


def names_defined(kinds, params):
    """A #name that ExpressionAttributeNames lacks is a ValidationException; moto fails with a KeyError."""
    for detail in [params, *(next(iter(action.values())) for action in params.get("TransactItems", []))]:
        names = detail.get("ExpressionAttributeNames") or {}
        for kind in kinds:
            for placeholder in NAME_PLACEHOLDER.findall(detail.get(kind) or ""):
                if placeholder not in names:
                    return error("ValidationException", UNDEFINED_NAME.format(kind, placeholder))
    return None


def projections_parse(params):
    """A ProjectionExpression with a character no expression may hold is a syntax error; moto ignores it."""
    for detail in [params, *params.get("RequestItems", {}).values(),
                   *(action.get("Get", {}) for action in params.get("TransactItems", []))]:
        answer = projection_syntax(detail.get("ProjectionExpression") or "")
        if answer is not None:
            return answer
    return None


def projection_syntax(expression):
    """DynamoDB's syntax error for the first character outside every projection token, or None."""
    tokens, position = [], 0
    while position < len(expression):
        known = PROJECTION_TOKEN.match(expression, position)
        end = known.end() if known else position + 1
        tokens.append((position, end, known is not None))
        position = end
    words = [token for token in tokens if not expression[token[0]:token[1]].isspace()]
    for index, (start, end, known) in enumerate(words):
        if not known:
            near_start = words[index - 1][0] if index else start
            near_end = words[index + 1][1] if index + 1 < len(words) else end
            return error("ValidationException", PROJECTION_SYNTAX.format(expression[start:end],
                                                                         expression[near_start:near_end]))
    return None


def failure(params, failed):
    """DynamoDB's answer for a request the engine failed on: a syntax error where moto could not parse an
    expression, else InternalServerError (from the lab, always a lab bug)."""
    message = str(failed)
    if isinstance(failed, ValueError) and message.startswith(UNPARSABLE_CONDITION):
        answer = condition_syntax(params, message[len(UNPARSABLE_CONDITION):])
        if answer is not None:
            return answer
    return error("InternalServerError", f"{type(failed).__name__}: {failed}", 500)


def condition_syntax(params, remaining):
    """The syntax error of the condition or filter expression that ends with `remaining`, where moto stopped."""
    details = [params, *(detail for action in params.get("TransactItems", []) for detail in action.values())]
    for detail in details:
        for field in ("ConditionExpression", "FilterExpression"):
            expression = detail.get(field) or ""
            if remaining.strip() and expression.rstrip().endswith(remaining.strip()):
                at = len(expression.rstrip()) - len(remaining.strip())
                return syntax_error(field, expression, at)
    return None


def syntax_error(field, expression, at):
    """'Invalid ConditionExpression: Syntax error; token: "+", near: "credits + :a"' for the token at `at`."""
    words = [match.span() for match in CONDITION_TOKEN.finditer(expression) if not match.group().isspace()]
    index = next(i for i, (start, _) in enumerate(words) if start >= at)
    start, end = words[index]
    near_start = words[index - 1][0] if index else start
    near_end = words[index + 1][1] if index + 1 < len(words) else end
    return error("ValidationException", CONDITION_SYNTAX.format(field, expression[start:end],
                                                                expression[near_start:near_end]))


def gets_match_keys(params):
    """A Get whose Key is not its table's key cancels the transaction with a ValidationError, as DynamoDB does."""
    reasons = []
    for action in params.get("TransactItems", []):
        get = action["Get"]
        table = find_table(get["TableName"])
        if table is None:
            return None
        wrong = set(get["Key"]) != {name for name in (table.hash_key_attr, table.range_key_attr) if name}
        reasons.append(("ValidationError", KEY_MISMATCH, None) if wrong else (None, None, None))
    if not any(code for code, _, _ in reasons):
        return None
    return 400, json.loads(TransactionCanceledException(reasons).description)


def index_updates_fit(params):
    """Creating an index that exists, or deleting or updating one that does not, is refused as DynamoDB words it."""
    table = find_table(params["TableName"])
    if table is None:
        return None
    existing = {index.name for index in table.global_indexes}
    for update in params.get("GlobalSecondaryIndexUpdates") or []:
        (kind, detail), = update.items()
        if kind == "Create" and detail["IndexName"] in existing:
            return error("ValidationException", INDEX_EXISTS)
        if kind in ("Delete", "Update") and detail["IndexName"] not in existing:
            return error("ResourceNotFoundException", NO_SUCH_INDEX.format(detail["IndexName"], table.name))
    return None


def statement_is_dml(params):
    """A statement that does not start with a PartiQL verb is a syntax error; moto fails on it."""
    if params["Statement"].split(None, 1)[0].upper() not in PARTIQL_VERBS:
        return error("ValidationException", NOT_WELL_FORMED)
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


def filter_syntax_worded(params, status, payload):
    """moto words an unparsable FilterExpression 'Bad Filter Expression: ...'; DynamoDB names the token."""
    if status != 400 or BAD_FILTER.encode() not in payload:
        return payload
    answer = condition_syntax(params, json.loads(payload)["message"].split(UNPARSABLE_CONDITION, 1)[1])
    return payload if answer is None else json.dumps(answer[1]).encode()


KEYS_FILTER_PROJECTION = partial(names_defined, ("KeyConditionExpression", "FilterExpression", "ProjectionExpression"))
UPDATE_CONDITION = partial(names_defined, ("UpdateExpression", "ConditionExpression"))
def parameters_inlined(params):
    """INSERT and DELETE with ? parameters, which moto ignores, as the same statement with the values written in."""
    statement, parameters = params["Statement"], params.get("Parameters")
    if not parameters or statement.split(None, 1)[0].upper() not in ("INSERT", "DELETE"):
        return None
    pieces = STATEMENT_PIECE.findall(statement)
    if sum(piece == "?" for piece in pieces) != len(parameters):
        return None
    values = iter(partiql_literal(value) for value in parameters)
    return {**params, "Statement": "".join(next(values) if piece == "?" else piece for piece in pieces),
            "Parameters": []}


def partiql_literal(value):
    """One attribute value written as a PartiQL literal (ValueError for binary ones, which have none)."""
    (kind, inner), = value.items()
    if kind == "S":
        return "'" + inner.replace("'", "''") + "'"
    if kind == "N":
        return inner
    if kind == "BOOL":
        return "true" if inner else "false"
    if kind == "NULL":
        return "null"
    if kind == "M":
        return "{" + ", ".join(f"{partiql_literal({'S': name})}: {partiql_literal(member)}"
                               for name, member in inner.items()) + "}"
    if kind == "L":
        return "[" + ", ".join(partiql_literal(member) for member in inner) + "]"
    raise ValueError(f"no PartiQL literal for a {kind} value")


BEFORE = {
    "TransactWriteItems": (at_least_one_action, partial(at_most_100_actions, "TransactWriteItem"), at_most_4_mb,
                           UPDATE_CONDITION, replayed_token),
    "TransactGetItems": (at_least_one_action, partial(at_most_100_actions, "TransactGetItem"), one_get_per_item,
                         projections_parse, KEYS_FILTER_PROJECTION, gets_match_keys),
    "GetItem": (projections_parse, KEYS_FILTER_PROJECTION),
    "Query": (projections_parse, KEYS_FILTER_PROJECTION),
    "Scan": (projections_parse, KEYS_FILTER_PROJECTION),
    "PutItem": (UPDATE_CONDITION,),
    "UpdateItem": (UPDATE_CONDITION,),
    "DeleteItem": (UPDATE_CONDITION,),
    "BatchGetItem": (projections_parse,),
    "UpdateTable": (index_updates_fit,),
    "ExecuteStatement": (statement_is_dml,),
}
REWRITE = {"ExecuteStatement": parameters_inlined}
AFTER = {
    "TransactWriteItems": (remember_token,),
    "UpdateItem": (only_updated_attributes,),
    "Query": (filter_syntax_worded,),
    "Scan": (filter_syntax_worded,),
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
