"""Expressions checked before the engine (#names and :values defined, projections and conditions that parse), and
condition functions moto evaluates otherwise than DynamoDB (size, begins_with)."""
import base64
import json
import re
from functools import partial

from moto.dynamodb import responses as moto_responses
from moto.dynamodb.comparisons import FuncBeginsWith, FuncSize

from .answers import error

UNDEFINED_NAME = ("Invalid {}: An expression attribute name used in the document path is not defined; "
                  "attribute name: {}")
UNDEFINED_VALUE = "Invalid {}: An expression attribute value used in expression is not defined; attribute value: {}"
VALUE_PLACEHOLDER = re.compile(r":[A-Za-z0-9_]+")
PROJECTION_SYNTAX = 'Invalid ProjectionExpression: Syntax error; token: "{}", near: "{}"'
NAME_PLACEHOLDER = re.compile(r"#[A-Za-z0-9_]+")
PROJECTION_TOKEN = re.compile(r"\s+|#[A-Za-z0-9_]+|[A-Za-z_][A-Za-z0-9_]*|0|[1-9][0-9]*|[.,\[\]]")
CONDITION_TOKEN = re.compile(r"\s+|[#:][A-Za-z0-9_]+|[A-Za-z_][A-Za-z0-9_]*|[0-9]+|<>|<=|>=|[=<>(),.\[\]]|.")
UNPARSABLE_CONDITION = "Cannot parse condition starting at:"
BAD_FILTER = "Bad Filter Expression: " + UNPARSABLE_CONDITION
EMPTY_EXPRESSION = "Invalid {}: The expression can not be empty;"
UNUSED_VALUES = "Value provided in ExpressionAttributeValues unused in expressions: keys: {{{}}}"
SIZED_TYPES = frozenset({"S", "SS", "NS", "B", "BS", "L", "M"})
CONDITION_SYNTAX = 'Invalid {}: Syntax error; token: "{}", near: "{}"'


def names_defined(kinds, params):
    """A #name that ExpressionAttributeNames lacks is a ValidationException; moto fails with a KeyError."""
    for detail in [params, *(next(iter(action.values())) for action in params.get("TransactItems", []))]:
        names = detail.get("ExpressionAttributeNames") or {}
        for kind in kinds:
            for placeholder in NAME_PLACEHOLDER.findall(detail.get(kind) or ""):
                if placeholder not in names:
                    return error("ValidationException", UNDEFINED_NAME.format(kind, placeholder))
    return None


def values_defined(kinds, params):
    """A :value that ExpressionAttributeValues lacks is a ValidationException, in real DynamoDB's words as
    LowVoltage's exploration tests record them ("Invalid ConditionExpression: An expression attribute value used
    in expression is not defined; attribute value: :foo"); moto fails with a KeyError on one in a
    ConditionExpression or a FilterExpression. A FAILURE rule: it runs only once moto has failed."""
    for detail in [params, *(next(iter(action.values())) for action in params.get("TransactItems", []))]:
        values = detail.get("ExpressionAttributeValues") or {}
        for kind in kinds:
            for placeholder in VALUE_PLACEHOLDER.findall(detail.get(kind) or ""):
                if placeholder not in values:
                    return error("ValidationException", UNDEFINED_VALUE.format(kind, placeholder))
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


def filter_syntax_worded(params, status, payload):
    """moto words an unparsable FilterExpression 'Bad Filter Expression: ...'; DynamoDB names the token."""
    if status != 400 or BAD_FILTER.encode() not in payload:
        return payload
    answer = condition_syntax(params, json.loads(payload)["message"].split(UNPARSABLE_CONDITION, 1)[1])
    return payload if answer is None else json.dumps(answer[1]).encode()


KEYS_FILTER_PROJECTION = partial(names_defined, ("KeyConditionExpression", "FilterExpression", "ProjectionExpression"))
UPDATE_CONDITION = partial(names_defined, ("UpdateExpression", "ConditionExpression"))
UPDATE_CONDITION_VALUES = partial(values_defined, ("UpdateExpression", "ConditionExpression"))


def expressions_not_empty(kinds, params):
    """An empty expression of these kinds is refused in DynamoDB's words (nubo-db/dynamodb-conformance's capture for
    KeyConditionExpression, dynalite's tests for UpdateExpression); moto prefixed the UpdateExpression's with
    "1 validation error detected: " and took an empty KeyConditionExpression for none."""
    for kind in kinds:
        if params.get(kind) == "":
            return error("ValidationException", EMPTY_EXPRESSION.format(kind))
    return None


def values_used(kinds, params):
    """A :value in ExpressionAttributeValues that no expression of these kinds uses is refused, as DynamoDB words it
    (the same words as for an unused #name; nubo-db/dynamodb-conformance's UpdateItem test); moto ignored it."""
    values = params.get("ExpressionAttributeValues")
    if not isinstance(values, dict) or not values:
        return None
    used = set(VALUE_PLACEHOLDER.findall(" ".join(params.get(kind) or "" for kind in kinds)))
    unused = [name for name in values if name not in used]
    return error("ValidationException", UNUSED_VALUES.format(", ".join(unused))) if unused else None


def attributes_used(attribute_names, names_used, provided_attr="Names", validation_error_prefix=True):
    """moto's validate_attributes_used in DynamoDB's words in every operation: moto prefixed PutItem's and DeleteItem's
    with "1 validation error detected: " (nubo-db/dynamodb-conformance's capture has none)."""
    plain_attributes_used(attribute_names, names_used, provided_attr, validation_error_prefix=False)


def size_of(self, item):
    """size(path) of a path that names no attribute, or an attribute with no size (a number, a Boolean, a null), is no
    number, so a comparison with it is false and the condition fails or the filter drops the item, as DynamoDB does
    (ScyllaDB's issue 14592 records it failing with ConditionalCheckFailedException); moto raised a ValueError."""
    if self.attr.get_type(item) not in SIZED_TYPES:
        return None
    return len(self.attr.expr(item))


def begins_with(self, item):
    """begins_with on two binary values compares their bytes: the API reference's Condition takes BEGINS_WITH "of type
    String or Binary"; moto matched strings only."""
    if (self.attr.get_type(item), self.substr.get_type(item)) == ("B", "B"):
        return as_bytes(self.attr.expr(item)).startswith(as_bytes(self.substr.expr(item)))
    return plain_begins_with(self, item)


def as_bytes(value):
    """A binary value as bytes, whether moto holds it as bytes or as base64 text."""
    return value if isinstance(value, bytes) else base64.b64decode(value)


plain_attributes_used = moto_responses.validate_attributes_used
moto_responses.validate_attributes_used = attributes_used
FuncSize.expr = size_of
plain_begins_with = FuncBeginsWith.expr
FuncBeginsWith.expr = begins_with


def projection_paths(self):
    """moto's ProjectionExpressionParser.parse, with a #name followed by list indexes (#l[1]) read as the attribute it
    stands for, the indexes kept; moto took "#l[1]" for an attribute's name and refused #l as unused."""
    paths = plain_projection_paths(self)
    for path in paths:
        for place, step in enumerate(path):
            name, bracket, indexes = step.partition("[")
            if bracket and name in self.expression_attribute_names:
                self.expr_attr_names_found.append(name)
                path[place] = self.expression_attribute_names[name] + bracket + indexes
    return paths


plain_projection_paths = moto_responses.ProjectionExpressionParser.parse
moto_responses.ProjectionExpressionParser.parse = projection_paths
