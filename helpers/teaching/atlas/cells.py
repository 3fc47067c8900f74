"""Building the atlas: each cell's scenario explored (run_cell), or the reason it does not apply; the frame of
verdicts, and the exercise's cells."""
from functools import partial

import pandas as pd

from ... import explore
from ...lab.tables import fresh_table
from ...lab.trace import tracing
from ...runs.consumer import streams_client
from .catalogue import (
    ANOMALIES,
    EXERCISE_COLUMNS,
    EXERCISE_ROW,
    MREC_LOST,
    MRSC_LOST,
    MRSC_NO_TRANSACTIONS,
    NO_GLOBAL_TABLES,
    NO_OTHER_ITEM,
    NO_UNIT,
    NOT_A_READ_ROW,
    ONE_ITEM,
    ONE_ITEM_RULE,
    OWN_REGION_READ,
    PREVENTED_BY,
    READ_ONLY,
    REGION_ROWS,
    ROWS,
    SEE_GETITEM,
    SINGLE_ITEM_READ,
    STREAM_NOT_INDEX,
    STREAM_ROW,
    STREAM_TABLE,
    TABLE_NOT_INDEX,
    WRITE_READS_LEADER,
    Cell,
    Scenario,
    X,
    Y,
)
from .regions import global_tables, region_scenarios
from .scenarios import (
    aborted_read,
    batch_read_skew,
    code_of,
    dirty_write,
    doctors,
    lost_update,
    monotonic,
    put_numbers,
    read_skew,
    read_your_writes,
    setup,
    sign_ups,
    stale_read,
    step_of,
)


def reasons(row):
    """What DynamoDB answered the requests of one explored order with, other than OK (cancellation reasons too)."""
    found = set()
    for answer, reply in zip(row["answers"], row["replies"]):
        if answer in PREVENTED_BY:
            found.add(PREVENTED_BY[answer])
        if answer == "TransactionCanceledException" and "TransactionConflict" in (reply or ""):
            found.add("cancelled: TransactionConflict")
        elif answer == "TransactionCanceledException" and "ConditionalCheckFailed" in (reply or ""):
            found.add("cancelled: ConditionalCheckFailed")
    if found & {"cancelled: TransactionConflict", "cancelled: ConditionalCheckFailed"}:
        found.discard("cancelled")
    return found


def how_prevented(frame, how):
    """In words: what stopped the anomaly, with the number of orders each refusal happened in."""
    counts = {}
    for _, row in frame.iterrows():
        for reason in reasons(row):
            counts[reason] = counts.get(reason, 0) + 1
    parts = [f"{reason} in {count}" for reason, count in sorted(counts.items())]
    return "; ".join(([how] if how else []) + parts)


def run_cell(row, column, scenario, lab=None):
    """Explore one cell's scenario over every order and model choice; the Cell with its verdict."""
    with tracing(False):
        frame = explore.explore(scenario.clients, scenario.reset, scenario.check, lab=lab, consistency="dynamodb")
        frame["ok"] = [not scenario.happened(order) for _, order in frame.iterrows()]
    occurs = int((~frame["ok"]).sum())
    if occurs:
        first = frame[~frame["ok"]].iloc[0]
        words = "; ".join([f"for example, {scenario.says(first)}"] + ([scenario.note(frame)] if scenario.note else []))
        return Cell(row, column, "occurs", words, occurs, len(frame), frame, scenario)
    return Cell(row, column, "prevented", how_prevented(frame, scenario.how), 0, len(frame), frame, scenario)


def stream_numbers(lab, **numbers):
    """A reset(): the stream row's table, fresh (a new stream), holding x and y at `numbers`, as put_numbers does."""
    def reset():
        put_numbers(fresh_table(STREAM_TABLE, lab), **numbers)()
    return reset


def stream_read(streams):
    """A client function's read of the stream row's table's stream, from its start: ((SK, n), ...) of its records."""
    def read():
        arn = streams.list_streams(TableName=STREAM_TABLE)["Streams"][-1]["StreamArn"]
        shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
        iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard,
                                              ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        return tuple((record["dynamodb"]["NewImage"]["SK"]["S"], int(record["dynamodb"]["NewImage"]["n"]["N"]))
                     for record in streams.get_records(ShardIterator=iterator)["Records"])
    return read


def stream_scenarios(lab, streams):
    """The stream row's cells: a consumer reading the stream where the other rows read the table ({column:
    Scenario})."""
    table, client, read = lab.table(STREAM_TABLE), lab.client, stream_read(streams)
    numbers = partial(stream_numbers, lab)
    seen_at = lambda order, client_name: step_of(order, client_name, 3)  # noqa: E731 (its GetRecords)

    def ana():
        table.put_item(Item={**X, "n": 1})
        return read()

    def cancelled():
        return code_of(lambda: client.transact_write_items(TransactItems=[
            {"Update": {"TableName": STREAM_TABLE, "Key": X, "UpdateExpression": "SET n = :n",
                        "ExpressionAttributeValues": {":n": 99}}},
            {"ConditionCheck": {"TableName": STREAM_TABLE, "Key": Y,
                                "ConditionExpression": "attribute_not_exists(PK)"}}]))

    def transfer_on_stream():
        return code_of(lambda: client.transact_write_items(TransactItems=[
            {"Update": {"TableName": STREAM_TABLE, "Key": key, "UpdateExpression": "SET n = n + :d",
                        "ExpressionAttributeValues": {":d": change}}} for key, change in ((X, -10), (Y, 10))]))

    def half_seen(results):
        seen = set(results["bob"])
        return len(seen & {("x", 90), ("y", 110)}) != 1
    return {
        "stale read": Scenario(
            {"alice": lambda: code_of(lambda: table.put_item(Item={**X, "n": 1})), "bob": read}, numbers(x=0),
            anomaly=lambda order: ("x", 1) not in order["results"]["bob"] and seen_at(order, "bob") > step_of(
                order, "alice"),
            says=lambda order: "bob read the stream after alice's PutItem of x = 1 had returned, and its record was "
                               "not there yet"),
        "no read-your-writes": Scenario(
            {"ana": ana}, numbers(x=0), holds=lambda results: ("x", 1) in results["ana"],
            says=lambda order: "ana's PutItem of x = 1 returned, then her read of the stream had no record of it"),
        "non-monotonic reads": Scenario(
            {"alice": lambda: code_of(lambda: table.put_item(Item={**X, "n": 1})), "bob": lambda: (read(), read())},
            numbers(x=0), holds=lambda results: results["bob"][1][:len(results["bob"][0])] == results["bob"][0],
            how="the stream only grows: a record that has entered it stays, in its place",
            says=lambda order: "bob's second read of the stream lacked a record his first had shown"),
        "G1a aborted read": Scenario(
            {"alice": cancelled, "bob": read}, numbers(x=0, y=0), holds=lambda results: ("x", 99) not in results["bob"],
            how="a cancelled transaction writes no stream record",
            says=lambda order: "bob read a record of x = 99, which only alice's cancelled transaction wrote"),
        "G-single read skew": Scenario(
            {"alice": transfer_on_stream, "bob": read}, numbers(x=100, y=100), holds=half_seen,
            says=lambda order: "bob was handed the record of one side of alice's transfer and not of the other"),
    }


def plan(table, client, lab=None, streams=None):
    """{(row, column): a Scenario to explore, or (verdict, reason) for a cell that runs nothing}; the stream row's
    cells need the lab and a DynamoDB Streams client."""
    cells = {}
    read_rows = ("GetItem (default)", "GetItem, ConsistentRead", "two GetItems", "BatchGetItem", "TransactGetItems")
    one_item_writes = ("read, then PutItem", "read, then version-checked write", "ADD / SET n = n + :one",
                       "check in the condition")
    for row in ROWS:
        for column in ANOMALIES:
            cells[(row, column)] = ("n/a", default_reason(row, column, read_rows, one_item_writes))
    for row in ("GetItem (default)", "GetItem, ConsistentRead", "BatchGetItem", "TransactGetItems"):
        cells[(row, "G1a aborted read")] = aborted_read(table, client, row)
        cells[(row, "stale read")] = stale_read(table, client, row)
        cells[(row, "no read-your-writes")] = read_your_writes(table, client, row)
        cells[(row, "non-monotonic reads")] = monotonic(table, client, row)
    for row in ("two GetItems", "BatchGetItem", "TransactGetItems"):
        cells[(row, "G-single read skew")] = read_skew(table, client, row)
    cells[("BatchWriteItem", "G-single read skew")] = batch_read_skew(table, client)
    for row in (*one_item_writes, "TransactWriteItems + ConditionCheck", "BatchWriteItem"):
        cells[(row, "P4 lost update")] = lost_update(table, client, row)
    for row in ("TransactWriteItems + ConditionCheck", "BatchWriteItem"):
        cells[(row, "G0 dirty write")] = dirty_write(table, client, row)
    for row in ("read, then PutItem", "read, then version-checked write", "TransactWriteItems + ConditionCheck"):
        cells[(row, "G2-item write skew")] = doctors(table, client, row)
    for row in ("Query the GSI, then write", "sentinel item in a transaction"):
        cells[(row, "stale index read")] = sign_ups(table, client, row)
    if streams is not None:
        cells.update({(STREAM_ROW, column): scenario for column, scenario in stream_scenarios(lab, streams).items()})
    for row in REGION_ROWS:
        cells.update({(row, column): ("n/a", NO_GLOBAL_TABLES) for column in ANOMALIES} if lab is None or
                     lab.kind != "embedded" else
                     {(row, column): scenario for column, scenario in region_scenarios(lab, row).items()})
    return cells


def default_reason(row, column, read_rows, one_item_writes):
    """Why a cell runs nothing, in words."""
    if column == "G1b intermediate read":
        return NO_UNIT
    if row in REGION_ROWS:
        return region_reason(row, column)
    if row == STREAM_ROW:
        return READ_ONLY if column in ("G0 dirty write", "P4 lost update", "G2-item write skew") else STREAM_NOT_INDEX
    if column in ("G0 dirty write", "P4 lost update", "G2-item write skew") and row in read_rows:
        return READ_ONLY
    if column == "G0 dirty write" and row == "sentinel item in a transaction":
        return "it is a TransactWriteItems: see the TransactWriteItems row."
    if column == "G0 dirty write":
        return ONE_ITEM if row in one_item_writes or row == "Query the GSI, then write" else NO_UNIT
    if column == "stale index read":
        return TABLE_NOT_INDEX if row != "Query the GSI, then write" else ""
    if column == "G-single read skew" and row.startswith("GetItem"):
        return SINGLE_ITEM_READ
    if column == "G2-item write skew" and row == "check in the condition":
        return NO_OTHER_ITEM
    if row in ("read, then PutItem", "read, then version-checked write") and column != "P4 lost update":
        return SEE_GETITEM if column not in ("G-single read skew", "G2-item write skew") else NOT_A_READ_ROW
    if row == "Query the GSI, then write":
        return "its read is an index read: see the stale index read column."
    if row == "two GetItems":
        return "each read is a GetItem: see the GetItem rows."
    if column in ("G1a aborted read", "stale read", "no read-your-writes", "non-monotonic reads"):
        return WRITE_READS_LEADER
    return NOT_A_READ_ROW


def region_reason(row, column):
    """Why a cell of a Region row runs nothing, in words."""
    if column == "stale index read":
        return TABLE_NOT_INDEX
    if row in (MREC_LOST, MRSC_LOST):
        return {"G0 dirty write": ONE_ITEM, "G2-item write skew": ONE_ITEM_RULE}.get(column, OWN_REGION_READ)
    if column in ("G0 dirty write", "P4 lost update", "G2-item write skew"):
        return READ_ONLY
    return MRSC_NO_TRANSACTIONS


def build(lab, table=None):
    """Every cell of the atlas, explored: {(row, column): Cell}."""
    table = table or setup(lab)
    cells = {}
    streams = streams_client(lab, lab.client.meta.region_name)
    if lab.kind == "embedded":
        with tracing(False):
            global_tables(lab)
    for (row, column), planned in plan(table, lab.client, lab, streams).items():
        if isinstance(planned, Scenario):
            cells[(row, column)] = run_cell(row, column, planned, lab)
        else:
            cells[(row, column)] = Cell(row, column, *planned)
    return cells


def frame_of(cells):
    """The atlas as a pandas table: one row per access pattern, one column per anomaly, each cell in words."""
    frame = pd.DataFrame(index=list(ROWS), columns=list(ANOMALIES), dtype=object)
    for (row, column), cell in cells.items():
        frame.loc[row, column] = cell.text
    frame.index.name = "access pattern"
    return frame


def verdicts(cells):
    """{(row, column): "occurs" | "prevented" | "n/a"}."""
    return {place: cell.verdict for place, cell in cells.items()}


def exercise_cells(lab, table=None):
    """The exercise's row (a strongly consistent Query of the pair's partition), explored: {column: Cell}."""
    table = table or setup(lab)
    client = lab.client
    builders = {"G1a aborted read": aborted_read, "G-single read skew": read_skew, "stale read": stale_read,
                "no read-your-writes": read_your_writes, "non-monotonic reads": monotonic}
    return {column: run_cell(EXERCISE_ROW, column, builders[column](table, client, EXERCISE_ROW), lab)
            for column in EXERCISE_COLUMNS}


def prediction_errors(prediction):
    """What is wrong with the form of a prediction ([] when it maps each exercise column to occurs or prevented)."""
    if not isinstance(prediction, dict):
        return [f"predicted_row() must return a dict of column -> 'occurs' or 'prevented'; it returned {prediction!r}"]
    errors = [f"no prediction for {column!r}" for column in EXERCISE_COLUMNS if column not in prediction]
    errors += [f"{column!r} is not one of the exercise's columns ({', '.join(EXERCISE_COLUMNS)})"
               for column in prediction if column not in EXERCISE_COLUMNS]
    errors += [f"{column!r}: say 'occurs' or 'prevented', not {verdict!r}" for column, verdict in prediction.items()
               if column in EXERCISE_COLUMNS and verdict not in ("occurs", "prevented")]
    return errors



def verdicts_of(cells, rows, columns):
    """The verdicts of the given rows (index) in the given columns, as a DataFrame."""
    return pd.DataFrame({column: [cells[(row, column)].verdict for row in rows] for column in columns},
                        index=pd.Index(rows, name="access pattern"))
