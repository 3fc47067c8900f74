"""Where moto answers differently from DynamoDB, the lab server answers as DynamoDB does.

The hooks (before, rewrite, corrected, after, failure) run under the engine lock, so any state kept here is
consistent. Each rule is one DynamoDB behaviour that moto (5.2) lacks or answers with an InternalServerError; this is
the one place where such requests get DynamoDB's documented answer, and tests/contract/ holds the lab server and
DynamoDB to the same answers. The tables below say which rules apply to which operation and when; the rules live
in modules grouped by what they check (in rules/, but globaltables and streams in replication/):

- answers: DynamoDB's error answer, required members and JSON types against its API model;
- keys: keys against their table's key schema;
- values: attribute values DynamoDB refuses to store (numbers, sets), and numbers made canonical;
- expressions: #names, :values, empty expressions, projection and condition syntax; size() and begins_with;
- legacy: legacy parameters never mixed with expressions, Expected translated, AttributeUpdates sparing the key;
- batches: BatchWriteItem's and BatchGetItem's limits;
- transactions: transactions' limits, shape and ClientRequestToken;
- tables: table names, local secondary indexes, UpdateTable, UpdateTimeToLive, ListTables' order;
- globaltables: global tables (ReplicaUpdates, MultiRegionConsistency, witnesses, replicas' descriptions, writes
  replicated, what MRSC refuses);
- items: Query's Limit, and item operations' results (UPDATED_NEW / UPDATED_OLD, AttributesToGet);
- partiql: PartiQL statements;
- streams: StreamSpecification on CreateTable and UpdateTable (the streams themselves are replication/streamlog.py's);
- exports: exports and imports.
"""
from functools import lru_cache, partial

from moto.core.responses import get_service_model

from .replication.globaltables import (no_transactions_on_strong, no_ttl_on_strong, replica_deleted,
                                       replicas_described, replicas_updated, replicated, strong_replica_kept)
from .replication.streams import created_stream_fits, stream_change_fits
from .rules.answers import (SERIALIZATION, UNKNOWN_OPERATION, error, first_answer, members_missing, operation_names,
                            required_members, type_mismatch)
from .rules.batches import at_most_25_writes, each_key_once, gets_not_empty, writes_not_empty
from .rules.exports import resource_found
from .rules.expressions import (KEYS_FILTER_PROJECTION, UNPARSABLE_CONDITION, UPDATE_CONDITION,
                                UPDATE_CONDITION_VALUES, condition_syntax, expressions_not_empty, filter_syntax_worded,
                                projections_parse, values_defined, values_used)
from .rules.items import attributes_to_get, limit_positive, only_updated_attributes
from .rules.keys import (WRITE_KEYS_MATCH_SCHEMA, batch_keys_match_schema, item_keys_not_empty, key_matches_schema,
                         transaction_keys_match_schema, transaction_keys_not_empty)
from .rules.legacy import attribute_updates_spare_the_key, expected_translated, one_kind_of_parameters
from .rules.partiql import (each_statement_inlined, each_statement_well_formed, enough_parameters,
                            no_returning_in_transaction, parameters_inlined, statement_not_empty,
                            statement_tables_exist, statement_well_formed, statements_not_empty)
from .rules.tables import (index_updates_fit, local_indexes_share_the_key, table_name_valid, table_status_said,
                           throughput_changes, ttl_attribute_named, ttl_table_exists)
from .rules.transactions import (at_least_one_action, at_most_4_mb, at_most_100_actions, each_get_names_a_get,
                                 each_write_names_an_operation, one_get_per_item, remember_token, replayed_token,
                                 token_length_fits, undefined_values_worded)
from .rules.values import (batch_items_stored, batch_keys_stored, item_stored, members_canonical,
                           transaction_items_stored)

INVALID_TIMESTAMP = "Invalid timestamp"
operation_in_progress = None  # the DynamoDB operation being applied, which failure() reads the request's shape of


BEFORE = {  # rules that answer a request before the engine sees it, in turn; the first answer is DynamoDB's. The last
    # rules of an operation answer nothing: they write the request as DynamoDB stores it (numbers made canonical, legacy
    # Expected as the ConditionExpression it stands for), in place, once every refusal has passed
    "TransactWriteItems": (token_length_fits, at_least_one_action, partial(at_most_100_actions, "TransactWriteItem"),
                           at_most_4_mb, UPDATE_CONDITION, transaction_keys_not_empty, WRITE_KEYS_MATCH_SCHEMA,
                           replayed_token, no_transactions_on_strong, transaction_items_stored),
    "TransactGetItems": (at_least_one_action, partial(at_most_100_actions, "TransactGetItem"), one_get_per_item,
                         projections_parse, KEYS_FILTER_PROJECTION, transaction_keys_not_empty,
                         partial(transaction_keys_match_schema, {"Get"}), no_transactions_on_strong,
                         transaction_items_stored),
    "GetItem": (partial(one_kind_of_parameters, "GetItem"), table_name_valid, projections_parse,
                KEYS_FILTER_PROJECTION, key_matches_schema, partial(members_canonical, ("Key",))),
    "Query": (partial(one_kind_of_parameters, "Query"), table_name_valid,
              partial(expressions_not_empty, ("KeyConditionExpression",)), limit_positive, projections_parse,
              KEYS_FILTER_PROJECTION, partial(values_used, ("KeyConditionExpression", "FilterExpression")),
              partial(members_canonical, ("ExpressionAttributeValues", "ExclusiveStartKey"))),
    "Scan": (partial(one_kind_of_parameters, "Scan"), table_name_valid, projections_parse, KEYS_FILTER_PROJECTION,
             partial(values_used, ("FilterExpression",)),
             partial(members_canonical, ("ExpressionAttributeValues", "ExclusiveStartKey"))),
    "PutItem": (partial(one_kind_of_parameters, "PutItem"), table_name_valid, UPDATE_CONDITION, item_keys_not_empty,
                partial(values_used, ("ConditionExpression",)), item_stored, expected_translated),
    "UpdateItem": (partial(one_kind_of_parameters, "UpdateItem"), table_name_valid,
                   partial(expressions_not_empty, ("UpdateExpression",)), UPDATE_CONDITION, key_matches_schema,
                   attribute_updates_spare_the_key, partial(values_used, ("UpdateExpression", "ConditionExpression")),
                   partial(members_canonical, ("Key", "ExpressionAttributeValues")), expected_translated),
    "DeleteItem": (partial(one_kind_of_parameters, "DeleteItem"), table_name_valid, UPDATE_CONDITION,
                   key_matches_schema, partial(values_used, ("ConditionExpression",)),
                   partial(members_canonical, ("Key", "ExpressionAttributeValues")), expected_translated),
    "BatchGetItem": (gets_not_empty, projections_parse, batch_keys_match_schema, batch_keys_stored),
    "BatchWriteItem": (writes_not_empty, at_most_25_writes, batch_keys_match_schema, each_key_once,
                       batch_items_stored),
    "CreateTable": (table_name_valid, local_indexes_share_the_key, created_stream_fits),
    "DescribeTable": (table_name_valid,),
    "DeleteTable": (table_name_valid, strong_replica_kept),
    "UpdateTable": (table_name_valid, throughput_changes, index_updates_fit, stream_change_fits, replicas_updated),
    "UpdateTimeToLive": (ttl_attribute_named, ttl_table_exists, no_ttl_on_strong),
    "ExecuteStatement": (statement_well_formed, enough_parameters),
    "BatchExecuteStatement": (partial(statements_not_empty, "Statements"), enough_parameters),
    "ExecuteTransaction": (partial(statements_not_empty, "TransactStatements"), each_statement_well_formed,
                           enough_parameters, no_returning_in_transaction, no_transactions_on_strong),
}
REWRITE = {  # the request in a form moto applies as DynamoDB applies the original
    "ExecuteStatement": parameters_inlined,
    "BatchExecuteStatement": partial(each_statement_inlined, "Statements"),
    "ExecuteTransaction": partial(each_statement_inlined, "TransactStatements"),
}
FAILURE = {  # rules that run only once moto has failed on a request, so they cost an ordinary request nothing
    "TransactWriteItems": (each_write_names_an_operation, UPDATE_CONDITION_VALUES),
    "PutItem": (UPDATE_CONDITION_VALUES,),
    "UpdateItem": (UPDATE_CONDITION_VALUES,),
    "DeleteItem": (UPDATE_CONDITION_VALUES,),
    "Query": (partial(values_defined, ("KeyConditionExpression", "FilterExpression")),),
    "Scan": (partial(values_defined, ("FilterExpression",)),),
    "TransactGetItems": (each_get_names_a_get,),
    "ExecuteStatement": (statement_not_empty, statement_tables_exist),
    "ExecuteTransaction": (statement_tables_exist,),
    "DescribeExport": (partial(resource_found, "ExportArn", "Export", "table_exports"),),
    "DescribeImport": (partial(resource_found, "ImportArn", "Import", "table_imports"),),
}
RESULT = {  # corrections of a successful item operation's result, before it is encoded
    "UpdateItem": (only_updated_attributes,),
    "GetItem": (attributes_to_get,),
    "Query": (attributes_to_get,),
    "Scan": (attributes_to_get,),
}
AFTER = {  # corrections of moto's encoded answer; a write to a replica of a global table reaches the others
    "CreateTable": (table_status_said("CREATING"),),
    "DeleteTable": (table_status_said("DELETING"), replica_deleted),
    "DescribeTable": (replicas_described("Table"),),
    "UpdateTable": (replicas_described("TableDescription"),),
    "TransactWriteItems": (remember_token, undefined_values_worded, replicated("TransactWriteItems")),
    **{target: (replicated(target),) for target in ("PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem",
                                                    "ExecuteStatement", "BatchExecuteStatement", "ExecuteTransaction")},
    "Query": (filter_syntax_worded,),
    "Scan": (filter_syntax_worded,),
}


@lru_cache(maxsize=256)
def before_rules(target):
    """The rules `before` applies to an operation's requests, in turn."""
    return partial(required_members, target), *BEFORE.get(target, ())


def before(target, params):
    """Answer a request here, as (status, body), when DynamoDB's answer differs from moto's; else None."""
    global operation_in_progress
    operation_in_progress = target
    for rule in before_rules(target):
        try:
            answer = rule(params)
        except Exception:  # a malformed request (any rule may trip on it): moto's own validation says what is wrong
            return None
        if answer is not None:
            return answer
    return None


def rewrite(target, params):
    """The request as moto can apply it, where DynamoDB takes a form moto does not; else None."""
    rule = REWRITE.get(target)
    try:
        return rule(params) if rule else None
    except Exception:  # a malformed request: moto answers it as it is
        return None


def corrected(target, params, result):
    """Correct a successful item operation's result, a dict not yet encoded, where moto's differs from DynamoDB's
    (cheaper than decoding and encoding the answer again, as `after` must)."""
    for rule in RESULT.get(target, ()):
        result = rule(params, result)
    return result


def after(target, params, status, payload):
    """Correct the body of moto's response where it differs from DynamoDB's."""
    for rule in AFTER.get(target, ()):
        payload = rule(params, status, payload)
    return payload


def failure(params, failed, streams_operation=None):
    """DynamoDB's answer for a request the engine failed on (DynamoDB Streams' for a streams operation).

    In turn: the answer of the operation's FAILURE rule that recognises the request; SerializationException
    where moto's parser could not read a timestamp (a string that is none); a syntax error where moto could
    not parse an expression; SerializationException for a member of the wrong JSON type;
    UnknownOperationException for an operation moto does not implement; else InternalServerError (from the
    lab, always a lab bug).
    """
    message = str(failed)
    if streams_operation is not None:
        return streams_failure(streams_operation, params, failed)
    answer = first_answer(FAILURE.get(operation_in_progress, ()), params)
    if answer is not None:
        return answer
    if isinstance(failed, ValueError) and message.startswith(INVALID_TIMESTAMP):
        return 400, {"__type": SERIALIZATION}  # no capture of real DynamoDB records its words for it: none given
    if isinstance(failed, ValueError) and message.startswith(UNPARSABLE_CONDITION):
        answer = condition_syntax(params, message[len(UNPARSABLE_CONDITION):])
        if answer is not None:
            return answer
    if isinstance(params, dict) and operation_in_progress in operation_names():
        shape = get_service_model("dynamodb").operation_model(operation_in_progress).input_shape
        mistyped = type_mismatch(shape, params, "member")
        if mistyped is not None:
            return 400, {"__type": SERIALIZATION, "Message": mistyped}
    if isinstance(failed, NotImplementedError):
        return 400, {"__type": UNKNOWN_OPERATION}
    return error("InternalServerError", f"{type(failed).__name__}: {failed}", 500)


def streams_failure(operation, params, failed):
    """DynamoDB Streams' answer for a request the streams engine (replication/streamlog.py) failed on: a required member
    left out, as DynamoDB's validation words it; SerializationException for a member of the wrong JSON type; else
    InternalServerError."""
    model = get_service_model("dynamodbstreams")
    if operation in model.operation_names:
        shape = model.operation_model(operation).input_shape
        answer = members_missing([name for name in shape.required_members if params.get(name) is None])
        if answer is not None:
            return answer
        mistyped = type_mismatch(shape, params, "member")
        if mistyped is not None:
            return 400, {"__type": SERIALIZATION, "Message": mistyped}
    return error("InternalServerError", f"{type(failed).__name__}: {failed}", 500)
