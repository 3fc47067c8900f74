"""Fresh lab tables from data/tables.json, and whole tables as pandas DataFrames."""
import json
from pathlib import Path

import pandas as pd

from .backend import LAB_TAG, connect
from .trace import plain, tracing

DEFINITIONS = Path(__file__).resolve().parent.parent / "data" / "tables.json"

# Tables show every cell in full: a step cut short ("alice: UpdateI...") hides what the row is about.
pd.set_option("display.max_colwidth", None)


def table_definitions():
    """The lab's table catalogue: name -> CreateTable arguments."""
    return json.loads(DEFINITIONS.read_text())


def fresh_table(name, lab=None):
    """Drop and recreate one of the lab's tables (quietly) and return its boto3 Table."""
    lab = lab or connect(quiet=True)
    definitions = table_definitions()
    if name not in definitions:
        raise ValueError(f"{name!r} is not one of the lab's tables; choose from {sorted(definitions)}")
    recreate_table(lab, name, definitions[name])
    return lab.table(name)


def recreate_table(lab, name, spec):
    """Drop the table `name` if it exists and create it again, on demand and tagged as the lab's, from `spec`
    (CreateTable's KeySchema, AttributeDefinitions and indexes); return once DynamoDB has it ready."""
    client = lab.client
    waits = lab.kind != "embedded"  # the lab server deletes and creates a table before it answers; DynamoDB does not
    with tracing(False):
        try:
            client.delete_table(TableName=name)
            if waits:
                client.get_waiter("table_not_exists").wait(TableName=name, WaiterConfig={"Delay": 1})
        except client.exceptions.ResourceNotFoundException:
            pass
        client.create_table(TableName=name, BillingMode="PAY_PER_REQUEST", Tags=[LAB_TAG], **spec)
        if waits:
            client.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1})


def scan_frame(table):
    """Every item of a table as a DataFrame sorted by key, numbers as numbers (a strongly consistent Scan: the
    table as it is, never a trailing copy)."""
    with tracing(False):
        items, page = [], {"ConsistentRead": True}
        while True:
            response = table.scan(**page)
            items += response["Items"]
            if "LastEvaluatedKey" not in response:
                break
            page = {"ConsistentRead": True, "ExclusiveStartKey": response["LastEvaluatedKey"]}
        keys = [k["AttributeName"] for k in table.key_schema]
    frame = pd.DataFrame([plain(item) for item in items]).convert_dtypes()
    return frame.sort_values(keys).reset_index(drop=True) if len(frame) else frame
