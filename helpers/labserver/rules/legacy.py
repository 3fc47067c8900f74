"""The legacy parameters (AttributesToGet, Expected, KeyConditions, QueryFilter, ScanFilter, ConditionalOperator,
AttributeUpdates) as DynamoDB takes them: never with the expression ones in one request (moto evaluated the mixture),
Expected evaluated as the ConditionExpression it stands for, AttributeUpdates never changing the key. The API reference
marks each legacy parameter "This is a legacy parameter. Use ... instead."."""
from functools import cache

from moto.core.responses import get_service_model

from .answers import error
from ..model.knobs import find_table

LEGACY = frozenset({"AttributesToGet", "Expected", "ConditionalOperator", "AttributeUpdates", "KeyConditions",
                    "QueryFilter", "ScanFilter"})
EXPRESSIONS = frozenset({"ProjectionExpression", "ConditionExpression", "UpdateExpression", "KeyConditionExpression",
                         "FilterExpression"})
PLACEHOLDERS = ("ExpressionAttributeNames", "ExpressionAttributeValues")
MIXED = ("Can not use both expression and non-expression parameters in the same request: Non-expression parameters: "
         "{{{}}} Expression parameters: {{{}}}")  # nubo-db/dynamodb-conformance's capture
NO_EXPRESSION = "{} can only be specified when using expressions"  # dynalite's tests
COMPARISONS = {"EQ": "{} = {}", "NE": "{} <> {}", "LE": "{} <= {}", "LT": "{} < {}", "GE": "{} >= {}", "GT": "{} > {}",
               "NOT_NULL": "attribute_exists({})", "NULL": "attribute_not_exists({})", "CONTAINS": "contains({}, {})",
               "NOT_CONTAINS": "NOT contains({}, {})", "BEGINS_WITH": "begins_with({}, {})",
               "BETWEEN": "{} BETWEEN {} AND {}"}  # the API reference's Condition, as ConditionExpression says it
KEY_UPDATED = ("One or more parameter values were invalid: Cannot update attribute {}. This attribute is part of the "
               "key")  # nubo-db/dynamodb-conformance's capture (for an UpdateExpression; AttributeUpdates alike)


@cache
def kinds(target):
    """(the operation's legacy parameters, its expression parameters), each in the API model's order."""
    members = get_service_model("dynamodb").operation_model(target).input_shape.members
    return tuple(name for name in members if name in LEGACY), tuple(name for name in members if name in EXPRESSIONS)


def one_kind_of_parameters(target, params):
    """Legacy and expression parameters together are a ValidationException naming both; ExpressionAttributeNames or
    ExpressionAttributeValues with no expression is one too."""
    legacy, expressions = kinds(target)
    expressions = [name for name in expressions if params.get(name) is not None]
    if not expressions:
        placeholders = next((name for name in PLACEHOLDERS if params.get(name) is not None), None)
        return None if placeholders is None else error("ValidationException", NO_EXPRESSION.format(placeholders))
    legacy = [name for name in legacy if params.get(name) is not None]
    if legacy:
        return error("ValidationException", MIXED.format(", ".join(legacy), ", ".join(expressions)))
    return None



def expected_translated(params):
    """Expected, with its ConditionalOperator (AND unless OR), written as the ConditionExpression it stands for (the
    API reference's Expected and ConditionalOperator: with OR "at least one of the conditions must evaluate to
    true"), so that moto evaluates it as DynamoDB does: moto joined the conditions with AND whatever the operator, and
    DeleteItem left them out. The request is changed in place; an Expected that says nothing DynamoDB accepts is left
    to moto."""
    expected = params.get("Expected")
    if not isinstance(expected, dict) or not expected or params.get("ConditionExpression") is not None:
        return None
    names, values, conditions = {}, {}, []
    for place, (attribute, condition) in enumerate(expected.items()):
        names[f"#legacy{place}"] = attribute
        operands = [f"#legacy{place}"]
        for number, value in enumerate(condition_values(condition)):
            values[f":legacy{place}_{number}"] = value
            operands.append(f":legacy{place}_{number}")
        conditions.append(condition_text(condition, operands))
    joiner = " OR " if params.get("ConditionalOperator") == "OR" else " AND "
    params.update(ConditionExpression=joiner.join(conditions), ExpressionAttributeNames=names,
                  **({"ExpressionAttributeValues": values} if values else {}))
    params.pop("Expected")
    params.pop("ConditionalOperator", None)
    return None


def condition_values(condition):
    """The values one Expected condition compares with."""
    if "ComparisonOperator" in condition:
        return condition.get("AttributeValueList") or []
    return [condition["Value"]] if "Value" in condition else []


def condition_text(condition, operands):
    """One Expected condition as a condition expression over its #name and :values."""
    if "ComparisonOperator" in condition:
        if condition["ComparisonOperator"] == "IN":
            return f"{operands[0]} IN ({', '.join(operands[1:])})"
        return COMPARISONS[condition["ComparisonOperator"]].format(*operands)
    if condition.get("Exists") is False:
        return f"attribute_not_exists({operands[0]})"
    return f"{operands[0]} = {operands[1]}"


def attribute_updates_spare_the_key(params):
    """AttributeUpdates naming a key attribute is refused, as an UpdateExpression setting one is; moto wrote it."""
    updates = params.get("AttributeUpdates")
    table = find_table(params["TableName"]) if isinstance(updates, dict) else None
    if table is None:
        return None
    for name in updates:
        if name in (table.hash_key_attr, table.range_key_attr):
            return error("ValidationException", KEY_UPDATED.format(name))
    return None
