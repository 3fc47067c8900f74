"""Table operations checked before the engine: table names, local secondary indexes, UpdateTable's throughput and index
updates, UpdateTimeToLive; and ListTables in DynamoDB's order."""
import json
import re

from moto.dynamodb.models import DynamoDBBackend

from .answers import constraints_failed, error, lower_camel
from ..model.knobs import find_table

INDEX_EXISTS = "Attempting to create an index which already exists"
NO_SUCH_INDEX = "Requested resource not found: Index {} for table {}"
VALID_TABLE_NAME = re.compile(r"[a-zA-Z0-9_.-]{3,255}")
TABLE_NAME_CONSTRAINTS = (  # (whether a name keeps it, its words), in the order DynamoDB lists the ones a name breaks
    (re.compile(r"[a-zA-Z0-9_.-]+").fullmatch, "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"),
    (lambda name: len(name) >= 3, "Member must have length greater than or equal to 3"),
    (lambda name: len(name) <= 255, "Member must have length less than or equal to 255"),
)
BROKEN_CONSTRAINT = "Value '{}' at '{}' failed to satisfy constraint: {}"
NO_RANGE_KEY = ("One or more parameter values were invalid: Table KeySchema does not have a range key, which is "
                "required when specifying a LocalSecondaryIndex")  # nubo-db/dynamodb-conformance's capture
OTHER_HASH_KEY = ("One or more parameter values were invalid: Index KeySchema does not have the same leading hash key "
                  "as table KeySchema for index: {}. index hash key: {}, table hash key: {}")  # dynalite's tests
TOO_LITTLE_CAPACITY = "Member must have value greater than or equal to 1"
CAPACITY_ON_DEMAND = ("One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can "
                      "be specified when BillingMode is PAY_PER_REQUEST")  # LocalStack's provider and dynoxide's tests
SAME_CAPACITY = ("The provisioned throughput for the table will not change. The requested value equals the current "
                 "value. Current ReadCapacityUnits provisioned for the table: {}. Requested ReadCapacityUnits: {}. "
                 "Current WriteCapacityUnits provisioned for the table: {}. Requested WriteCapacityUnits: {}. Refer to "
                 "the Amazon DynamoDB Developer Guide for current limits and how to request higher limits.")
CAPACITIES = ("ReadCapacityUnits", "WriteCapacityUnits")
NO_TTL_ATTRIBUTE = "TimeToLiveSpecification.AttributeName must be non empty"  # dynalite's tests
NO_SUCH_TABLE = "Requested resource not found: Table: {} not found"  # dynalite's tests, for UpdateTimeToLive


def table_name_valid(params):
    """A table name of 3 to 255 of the characters a-z, A-Z, 0-9, _, - and . (the Developer Guide's naming rules), else
    a ValidationException listing each constraint it breaks (nubo-db/dynamodb-conformance's captures for 'ab', 256
    characters and 'bad table!@#'; dynalite's tests for both at once). A table's ARN, which DynamoDB takes in its
    place, and an empty name, which DynamoDB words otherwise in each region, are left to moto."""
    name = params["TableName"]
    if not isinstance(name, str) or VALID_TABLE_NAME.fullmatch(name) or not name or name.startswith("arn:"):
        return None
    return constraints_failed([BROKEN_CONSTRAINT.format(name, "tableName", words)
                               for keeps, words in TABLE_NAME_CONSTRAINTS if not keeps(name)])


def local_indexes_share_the_key(params):
    """A local secondary index needs a table with a sort key, and the table's partition key as its own (the Developer
    Guide's Local secondary indexes: "The partition key is the same as that of its base table"); moto made both."""
    table_keys = {key["KeyType"]: key["AttributeName"] for key in params["KeySchema"]}
    for index in params.get("LocalSecondaryIndexes") or ():
        if "RANGE" not in table_keys:
            return error("ValidationException", NO_RANGE_KEY)
        index_hash = next(key["AttributeName"] for key in index["KeySchema"] if key["KeyType"] == "HASH")
        if index_hash != table_keys["HASH"]:
            words = OTHER_HASH_KEY.format(index["IndexName"], index_hash, table_keys["HASH"])
            return error("ValidationException", words)
    return None


def throughput_changes(params):
    """UpdateTable's ProvisionedThroughput is refused when a capacity is below 1, when the table goes on demand, or when
    it asks for the capacity the table has (dynalite's tests, in DynamoDB's words); moto applied each."""
    throughput = params.get("ProvisionedThroughput")
    if not isinstance(throughput, dict):
        return None
    too_little = constraints_failed([
        BROKEN_CONSTRAINT.format(throughput[name], f"provisionedThroughput.{lower_camel(name)}", TOO_LITTLE_CAPACITY)
        for name in CAPACITIES if isinstance(throughput.get(name), int) and throughput[name] < 1])
    if too_little is not None:
        return too_little
    if params.get("BillingMode") == "PAY_PER_REQUEST":
        return error("ValidationException", CAPACITY_ON_DEMAND)
    table = find_table(params["TableName"])
    if table is None or table.billing_mode == "PAY_PER_REQUEST":
        return None
    current = [table.throughput.get(name) for name in CAPACITIES]
    if current == [throughput.get(name) for name in CAPACITIES]:
        return error("ValidationException", SAME_CAPACITY.format(current[0], current[0], current[1], current[1]))
    return None


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


def ttl_attribute_named(params):
    """UpdateTimeToLive with an empty AttributeName is refused; moto accepted it."""
    if params["TimeToLiveSpecification"].get("AttributeName") == "":
        return error("ValidationException", NO_TTL_ATTRIBUTE)
    return None


def ttl_table_exists(params):
    """UpdateTimeToLive on a table the lab does not hold is a ResourceNotFoundException; moto's code was
    ResourceNotFound, which no SDK knows."""
    if find_table(params["TableName"]) is None:
        return error("ResourceNotFoundException", NO_SUCH_TABLE.format(params["TableName"]))
    return None


def tables_in_order(self, limit, exclusive_start_table_name):
    """ListTables names the tables in alphabetical order, from the first after ExclusiveStartTableName (which need not
    exist); moto listed them in the order they were made."""
    start = exclusive_start_table_name
    names = sorted(name for name in self.tables if not start or name > start)
    listed = names[:limit] if limit else names
    return listed, (listed[-1] if limit and len(names) > limit else None)


DynamoDBBackend.list_tables = tables_in_order


def table_status_said(status_word):
    """An AFTER rule: a successful CreateTable or DeleteTable answers with the table as it goes, TableStatus CREATING or
    DELETING (and a new table's indexes CREATING), as in the API reference's examples; moto says ACTIVE. The lab server
    has created or removed the table before it answers, so a DescribeTable right after says ACTIVE, or not found."""
    def rule(params, status, payload):
        if status != 200:
            return payload
        answer = json.loads(payload)
        description = answer["TableDescription"]
        description["TableStatus"] = status_word
        if status_word == "CREATING":
            for index in description.get("GlobalSecondaryIndexes", ()):
                index["IndexStatus"] = "CREATING"
        return json.dumps(answer).encode()
    return rule
