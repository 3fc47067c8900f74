"""Attribute values as DynamoDB stores them, before the engine: numbers in canonical form within DynamoDB's range and
precision, string and number sets neither empty nor (strings) duplicated, at any depth of an item.

The Developer Guide's Supported data types (HowItWorks.NamingRulesDataTypes) states the number rules: "Numbers can
have up to 38 digits of precision. Exceeding this results in an exception. ... Positive range: 1E-130 to
9.9999999999999999999999999999999999999E+125 ... Leading and trailing zeroes are trimmed." Its Sets: "Each value
within a set must be unique" and "DynamoDB does not support empty sets".
"""
import re
from decimal import Decimal, InvalidOperation

from moto.dynamodb.models.dynamo_type import DynamoType

from .answers import error

MAX_DIGITS = 38
MAX_EXPONENT = 125  # of the largest magnitude's first digit, 9.99...E+125
MIN_EXPONENT = -130  # of the smallest, 1E-130
TOO_PRECISE = "Attempting to store more than 38 significant digits in a Number"  # dynalite's tests, as all three
TOO_LARGE = "Number overflow. Attempting to store a number with magnitude larger than supported range"
TOO_SMALL = "Number underflow. Attempting to store a number with magnitude smaller than supported range"
EMPTY_SET = "One or more parameter values were invalid: An {} set  may not be empty"  # nubo-db/dynamodb-conformance
DUPLICATES = "One or more parameter values were invalid: Input collection [{}] contains duplicates."  # dynalite's tests
SET_WORDS = {"SS": "string", "NS": "number"}
CANONICAL = re.compile(r"0|-?[1-9][0-9]{0,37}|-?(?:0|[1-9][0-9]*)\.[0-9]*[1-9]")  # as stored (within 38 characters)


def canonical(text):
    """(the number as DynamoDB stores it, None), or (None, DynamoDB's words) for one it refuses; (None, None) for a
    text that is no number, which moto refuses. 00042 is 42, 1.0 is 1, 1.5E2 is 150 and -0 is 0."""
    if isinstance(text, str) and len(text) <= MAX_DIGITS and CANONICAL.fullmatch(text):
        return text, None
    try:
        sign, digits, exponent = Decimal(text).as_tuple()
    except (InvalidOperation, TypeError, ValueError):
        return None, None
    if not isinstance(exponent, int):  # Infinity, NaN
        return None, None
    digits = list(digits)
    while len(digits) > 1 and digits[-1] == 0:
        digits.pop()
        exponent += 1
    if digits == [0]:
        return "0", None
    if len(digits) > MAX_DIGITS:
        return None, TOO_PRECISE
    magnitude = exponent + len(digits) - 1
    if magnitude > MAX_EXPONENT:
        return None, TOO_LARGE
    if magnitude < MIN_EXPONENT:
        return None, TOO_SMALL
    return format(Decimal((sign, digits, exponent)), "f"), None


def refusal(value):
    """DynamoDB's words for the first part of a typed value it would not store, else None; each number in it made
    canonical in place."""
    check = CHECKS.get(next(iter(value), None)) if isinstance(value, dict) else None
    return None if check is None else check(value)


def number_refusal(value):
    """DynamoDB's words for an N value it refuses, else None; the number made canonical in place."""
    number, words = canonical(value["N"])
    if number is not None:
        value["N"] = number
    return words


def map_refusal(value):
    """DynamoDB's words for the first member of an M value it refuses, else None."""
    members = value["M"].values() if isinstance(value["M"], dict) else ()
    return next(filter(None, map(refusal, members)), None)


def list_refusal(value):
    """DynamoDB's words for the first element of an L value it refuses, else None."""
    return next(filter(None, map(refusal, value["L"] if isinstance(value["L"], list) else ())), None)


def set_refusal(value):
    """DynamoDB's words for an empty set, a number set member it refuses or a string set that repeats a member, else
    None; number members made canonical in place."""
    kind = next(iter(value))
    members = value[kind]
    if members == []:
        return EMPTY_SET.format(SET_WORDS[kind])
    if kind == "SS" and len(set(members)) < len(members):
        return DUPLICATES.format(", ".join(members))
    if kind == "NS":
        for place, member in enumerate(members):
            number, words = canonical(member)
            if words is not None:
                return words
            members[place] = number if number is not None else member
    return None


CHECKS = {"N": number_refusal, "M": map_refusal, "L": list_refusal, "SS": set_refusal, "NS": set_refusal}


def item_refusal(item):
    """The ValidationException for the first attribute of an item that DynamoDB would not store, else None."""
    if not isinstance(item, dict):
        return None
    words = next(filter(None, map(refusal, item.values())), None)
    return None if words is None else error("ValidationException", words)


def made_canonical(values):
    """Each number in a map of typed values (a Key, ExpressionAttributeValues) made canonical in place, where it is one
    DynamoDB stores (the engine refuses the others)."""
    if isinstance(values, dict):
        for value in values.values():
            refusal(value)


def members_canonical(members, params):
    """The numbers in each of these members of a request (Key, ExpressionAttributeValues, ExclusiveStartKey) made
    canonical in place; never an answer."""
    for member in members:
        made_canonical(params.get(member))
    return None


def item_stored(params):
    """PutItem: the item's values refused or made canonical (item_refusal), its ExpressionAttributeValues' made
    canonical."""
    made_canonical(params.get("ExpressionAttributeValues"))
    return item_refusal(params.get("Item"))


def batch_items_stored(params):
    """BatchWriteItem: each PutRequest's item refused or made canonical, each DeleteRequest's key made canonical."""
    for writes in params["RequestItems"].values():
        for write in writes:
            if "DeleteRequest" in write:
                made_canonical(write["DeleteRequest"].get("Key"))
            answer = item_refusal(write.get("PutRequest", {}).get("Item"))
            if answer is not None:
                return answer
    return None


def transaction_items_stored(params):
    """TransactWriteItems / TransactGetItems: each Put's item refused or made canonical, each Key and each action's
    ExpressionAttributeValues made canonical."""
    for action in params["TransactItems"]:
        for detail in action.values():
            made_canonical(detail.get("Key"))
            made_canonical(detail.get("ExpressionAttributeValues"))
            answer = item_refusal(detail.get("Item"))
            if answer is not None:
                return answer
    return None


def batch_keys_stored(params):
    """BatchGetItem: each key made canonical."""
    for requests in params["RequestItems"].values():
        for key in requests.get("Keys", ()):
            made_canonical(key)
    return None


def canonical_arithmetic(operation):
    """moto's DynamoType + or - (SET n = n + :v, ADD n :v), its number result stored in canonical form: 1.5 + 1.5 is
    3, where moto wrote 3.0."""
    def worked_out(self, other):
        result = operation(self, other)
        if result.is_number():
            result.value = canonical(result.value)[0] or result.value
        return result
    return worked_out


DynamoType.__add__ = canonical_arithmetic(DynamoType.__add__)
DynamoType.__sub__ = canonical_arithmetic(DynamoType.__sub__)
