"""Fresh lab tables from data/tables.json, and whole tables as pandas DataFrames."""
import http.client
import json
from pathlib import Path

import pandas as pd

from . import labhttp
from .backend import LAB_TAG, connect
from .trace import plain, tracing

DEFINITIONS = Path(__file__).resolve().parents[2] / "data" / "tables.json"
TABLES_PATH = "/lab/tables"  # the lab server's (helpers/labserver/model/fresh.py)
TABLE_CLASSES = {}  # id of a boto3 resource -> (the resource, the Table class boto3 built for it)

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
    return table_of(lab, name)


def table_of(lab, name):
    """lab.table(name), an instance of the Table class boto3 built for the lab's resource the first time: boto3 builds
    the class again at every lab.table() (half a millisecond, before every order a checker explores), the same class."""
    resource = lab.resource
    made = TABLE_CLASSES.get(id(resource))
    if made is None or made[0] is not resource:
        table = lab.table(name)
        TABLE_CLASSES[id(resource)] = (resource, type(table))
        return table
    return made[1](name, client=resource.meta.client)


def recreate_table(lab, name, spec):
    """Drop the table `name` if it exists and create it again, on demand and tagged as the lab's, from `spec`
    (CreateTable's KeySchema, AttributeDefinitions and indexes); return once DynamoDB has it ready.

    On the lab server, one request empties the table instead when dropping and creating it again would leave the same
    table (helpers/labserver/model/fresh.py says when): a checker does this before every order it explores."""
    client = lab.client
    arguments = {"TableName": name, "BillingMode": "PAY_PER_REQUEST", "Tags": [LAB_TAG], **spec}
    if lab.kind == "embedded" and emptied(lab, arguments):
        return
    waits = lab.kind != "embedded"  # the lab server deletes and creates a table before it answers; DynamoDB does not
    with tracing(False):
        try:
            client.delete_table(TableName=name)
            if waits:
                client.get_waiter("table_not_exists").wait(TableName=name, WaiterConfig={"Delay": 1})
        except client.exceptions.ResourceNotFoundException:
            pass
        client.create_table(**arguments)
        if waits:
            client.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1})


def emptied(lab, arguments):
    """True when the lab server emptied the table CreateTable's `arguments` would make, in place of dropping and
    creating it again; False when the caller must do that (or the server is one without /lab/tables)."""
    try:
        status, answer = labhttp.request(lab.endpoint.rstrip("/") + TABLES_PATH, "POST",
                                         json.dumps({"empty": arguments,
                                                     "region": lab.client.meta.region_name}).encode(),
                                         {"Content-Type": "application/json"})
    except (OSError, http.client.HTTPException):
        return False
    return status == 200 and json.loads(answer).get("emptied") is True


GLOBAL_REGIONS = {"EVENTUAL": ("us-east-1", "eu-west-1"), "STRONG": ("us-east-1", "us-west-2")}  # the replicas'
WITNESS = "us-east-2"  # an MRSC table's third Region
REPLICA_REGIONS = ("us-east-1", "eu-west-1", "us-west-2")  # where global_table's replicas may be


def global_table(name, consistency="EVENTUAL", lab=None):
    """The lab's table `name` (data/tables.json) made again, empty, as a global table through DynamoDB's UpdateTable:
    MREC in us-east-1 and eu-west-1, or (consistency "STRONG") MRSC in us-east-1 and us-west-2 with a witness in
    us-east-2; {Region: the lab's client signed for it} of its replicas."""
    lab = lab or connect(quiet=True)
    regions = GLOBAL_REGIONS[consistency]
    clients = {region: lab.client_in(region) for region in regions}
    strong = {"MultiRegionConsistency": "STRONG", "GlobalTableWitnessUpdates": [{"Create": {"RegionName": WITNESS}}]}
    with tracing(False):
        dissolve(name, [lab.client_in(region) for region in REPLICA_REGIONS])
        home = clients[regions[0]]
        home.create_table(TableName=name, BillingMode="PAY_PER_REQUEST", Tags=[LAB_TAG], **table_definitions()[name])
        home.update_table(TableName=name, ReplicaUpdates=[{"Create": {"RegionName": regions[1]}}],
                          **(strong if consistency == "STRONG" else {}))
    return clients


def dissolve(name, clients):
    """Delete the table `name` from each Region one of `clients` is signed for: a global table's replicas first (an
    MRSC table's all in one request, with its witness, as DynamoDB deletes it only whole), then each table left."""
    for client in clients:
        try:
            described = client.describe_table(TableName=name)["Table"]
        except client.exceptions.ResourceNotFoundException:
            continue
        deletes = [{"Delete": {"RegionName": replica["RegionName"]}} for replica in described.get("Replicas", [])]
        witnesses = [{"Delete": {"RegionName": witness["RegionName"]}}
                     for witness in described.get("GlobalTableWitnesses", [])]
        if deletes and "MultiRegionConsistency" in described:
            client.update_table(TableName=name, ReplicaUpdates=deletes,
                                **({"GlobalTableWitnessUpdates": witnesses} if witnesses else {}))
        else:
            for delete in deletes:
                client.update_table(TableName=name, ReplicaUpdates=[delete])
        client.delete_table(TableName=name)


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
