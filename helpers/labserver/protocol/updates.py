"""UpdateItem as moto's DynamoHandler.update_item and DynamoDBBackend.update_item answer it, each step done once.

moto's handler reads the item (and deep-copies it) to answer ReturnValues, parses the ConditionExpression to
check its placeholders, then calls the backend, which looks the table and the item up again, deep-copies the item
again (for its stream), parses the ConditionExpression again and tidies the UpdateExpression's text with a regular
expression it never reads. Here the table and the item are looked up once; the item's attributes before the update
are read as JSON before it changes (Item.to_json builds new containers, so the copy moto makes first is not needed);
the item is deep-copied only for a table with a stream; the condition is parsed once, and the placeholders an
UpdateExpression uses are found once per expression text. The checks run in moto's order and raise what moto
raises, so every answer is moto's.
"""
import copy
from functools import lru_cache

from moto.core.responses import ActionResult
from moto.dynamodb import models as dynamodb_models
from moto.dynamodb import responses as dynamodb_responses
from moto.dynamodb.comparisons import create_condition_expression_parser, get_expected
from moto.dynamodb.exceptions import (ConditionalCheckFailed, ItemSizeTooLarge, ItemSizeToUpdateTooLarge,
                                      MockValidationException, ProvidedKeyDoesNotExist)
from moto.dynamodb.models.dynamo_type import Item
from moto.dynamodb.parsing.ast_nodes import ExpressionAttributeName, ExpressionAttributeValue
from moto.dynamodb.parsing.executors import UpdateExpressionExecutor
from moto.dynamodb.parsing.expressions import UpdateExpressionParser

RETURN_VALUES = ("NONE", "ALL_OLD", "ALL_NEW", "UPDATED_OLD", "UPDATED_NEW")
PLACEHOLDERS_KEPT = 1024


@lru_cache(maxsize=PLACEHOLDERS_KEPT)
def placeholders_used(update_expression):
    """(#names, :values) an UpdateExpression uses, in the order moto lists them (it raises what moto's parser raises)."""
    tree = UpdateExpressionParser.make(update_expression)
    return ([name.get_attribute_name_placeholder() for name in tree.find_clauses([ExpressionAttributeName])],
            [value.get_value_name() for value in tree.find_clauses([ExpressionAttributeValue])])


def update_item(handler):
    """DynamoHandler.update_item for `handler` (a DynamoHandler set up for one UpdateItem): its result.

    moto wraps the result in a DynamoResult, which copies it turning DynamoType values into JSON; Item.to_json has
    made every value here JSON already, so the copy would be the same.
    """
    body, backend = handler.body, handler.dynamodb_backend
    name, key = body["TableName"], body["Key"]
    return_values = body.get("ReturnValues", "NONE")
    update_expression = body.get("UpdateExpression", None)
    attribute_updates = body.get("AttributeUpdates")
    if update_expression is not None and attribute_updates:
        raise MockValidationException(
            "Can not use both expression and non-expression parameters in the same request: Non-expression "
            "parameters: {AttributeUpdates} Expression parameters: {UpdateExpression}")
    table = backend.get_table(name)
    if not all(k in table.attribute_keys for k in key):
        raise ProvidedKeyDoesNotExist
    names_used, values_used = [], []
    if update_expression is not None:
        update_expression = update_expression.strip()
        if update_expression == "":
            raise MockValidationException(
                "1 validation error detected: Invalid UpdateExpression: The expression can not be empty;")
        names, values = placeholders_used(update_expression)
        names_used, values_used = list(names), list(values)
    else:
        update_expression = ""
    on_failure = body.get("ReturnValuesOnConditionCheckFailure")
    hash_value, range_value = backend.get_keys_value(table, key)
    item = table.get_item(hash_value, range_value)
    existing_attributes = item.to_json()["Attributes"] if item else {}
    if return_values not in RETURN_VALUES:
        raise MockValidationException("Return values set to invalid value")
    expected = body["Expected"] if "Expected" in body else None
    condition_expression = body.get("ConditionExpression")
    attribute_names = body.get("ExpressionAttributeNames", {})
    attribute_values = handler._get_expr_attr_values()
    condition_parser = create_condition_expression_parser(condition_expression, attribute_names, attribute_values)
    condition = condition_parser.parse()
    names_used += condition_parser.expr_attr_names_found
    values_used += condition_parser.expr_attr_values_found
    dynamodb_responses.validate_attributes_used(attribute_names, names_used)
    dynamodb_responses.validate_attributes_used(attribute_values, values_used, "Values")
    item = updated(table, hash_value, range_value, item, update_expression, attribute_updates, attribute_names,
                   attribute_values, expected, condition, on_failure)
    item_dict = item.to_json()
    item_dict["ConsumedCapacity"] = {"TableName": name, "CapacityUnits": 0.5}
    return ActionResult(answered(handler, return_values, existing_attributes, item_dict))


def updated(table, hash_value, range_value, item, update_expression, attribute_updates, attribute_names,
            attribute_values, expected, condition, on_failure):
    """DynamoDBBackend.update_item on the item looked up already, with its condition parsed: the item updated."""
    update_tree = UpdateExpressionParser.make(update_expression) if update_expression else None
    before = copy.deepcopy(item) if table.stream_shard is not None else None
    if not get_expected(expected or {}).expr(item):
        raise ConditionalCheckFailed
    if not condition.expr(item):
        if on_failure == "ALL_OLD" and item is not None:
            raise ConditionalCheckFailed(item=item.to_json()["Attributes"])
        raise ConditionalCheckFailed
    if item is None:
        if update_expression:
            dynamodb_models.UpdateExpressionValidator(
                update_tree, expression_attribute_names=attribute_names, expression_attribute_values=attribute_values,
                item=Item(hash_value, range_value, attrs={}), table=table).validate()
        data = {table.hash_key_attr: {hash_value.type: hash_value.value}}
        if range_value:
            data[table.range_key_attr] = {range_value.type: range_value.value}
        table.put_item(data)
        item = table.get_item(hash_value, range_value)
    if attribute_updates:
        item.validate_no_empty_key_values(attribute_updates, table.attribute_keys)
    if update_expression:
        validated = dynamodb_models.UpdateExpressionValidator(
            update_tree, expression_attribute_names=attribute_names, expression_attribute_values=attribute_values,
            item=item, table=table).validate()
        validated.normalize()
        try:
            UpdateExpressionExecutor(validated, item, attribute_names).execute()
        except ItemSizeTooLarge:
            raise ItemSizeToUpdateTooLarge()
    else:
        item.update_with_attribute_updates(attribute_updates)
    if table.stream_shard is not None:
        table.stream_shard.add(before, item)
    return item


def answered(handler, return_values, existing_attributes, item_dict):
    """The answer's members for ReturnValues, as DynamoHandler.update_item leaves them in `item_dict`."""
    unchanged = {k for k in existing_attributes if existing_attributes[k] == item_dict["Attributes"].get(k)}
    changed = set(existing_attributes).union(item_dict["Attributes"]).difference(unchanged)
    if return_values == "NONE":
        item_dict.pop("Attributes", None)
    elif return_values == "ALL_OLD":
        if existing_attributes:
            item_dict["Attributes"] = existing_attributes
        else:
            item_dict.pop("Attributes", None)
    elif return_values == "UPDATED_OLD":
        updated_old = {k: v for k, v in existing_attributes.items() if k in changed}
        if updated_old:
            item_dict["Attributes"] = updated_old
        else:
            item_dict.pop("Attributes", None)
    elif return_values == "UPDATED_NEW":
        item_dict["Attributes"] = handler._build_updated_new_attributes(existing_attributes, item_dict["Attributes"])
    return item_dict
