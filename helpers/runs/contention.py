"""The price of contention: real races of 1 to 32 clients on one counter, four ways of updating it, measured.

`price_of_contention()` races each strategy at each number of clients (races.race, so real threads and
real requests) and returns one row per race: updates that took effect, write requests sent, what the
lab server's meter billed, and how long an update took. `contention_figure(frame)` draws it. Used by
notebook 24 (Defined in 24-atomic-counters, "The price of contention").
"""
import pandas as pd
import plotly.graph_objects as go
from botocore.exceptions import ClientError
from plotly.subplots import make_subplots

from . import races

CLIENTS = (1, 2, 4, 8, 16, 32)
CANCELLED = "TransactionCanceledException"


def transactional_increment(table):
    """Read value and version, write both in a TransactWriteItems conditioned on the version; again if cancelled."""
    client = table.meta.client
    while True:
        item = table.get_item(Key=races.COUNTER, ConsistentRead=True)["Item"]
        try:
            client.transact_write_items(TransactItems=[{"Update": {
                "TableName": table.name, "Key": races.COUNTER, "ConditionExpression": "version = :seen",
                "UpdateExpression": "SET #v = :views, version = :next", "ExpressionAttributeNames": {"#v": "views"},
                "ExpressionAttributeValues": {":seen": item["version"], ":views": item["views"] + 1,
                                              ":next": item["version"] + 1}}}])
            return
        except ClientError as error:
            reasons = [reason.get("Code") for reason in error.response.get("CancellationReasons", [])]
            if error.response["Error"]["Code"] != CANCELLED or reasons != ["ConditionalCheckFailed"]:
                raise


STRATEGIES = {**{races.LABELS[name]: name for name in ("racy", "optimistic", "add")},
              "TransactWriteItems + retry": transactional_increment}


def measured(name, result):
    """One row of the price of contention from one race."""
    log, successes = result.log, result.successes
    per_update = log.groupby(["thread", "operation"]).agg(start=("start_ms", "min"), end=("end_ms", "max"))
    return {"strategy": name, "clients": result.threads, "updates asked": result.operations,
            "updates that took effect": successes, "write requests": len(log),
            "success rate": successes / len(log), "attempts per success": len(log) / successes,
            "write units": result.cost.write_units,
            "write units on refused writes": result.cost["WriteUnitsOnRefusedWrites"],
            "write units per update": result.cost.write_units / successes,
            "median ms per update": float((per_update["end"] - per_update["start"]).median())}


def price_of_contention(clients=CLIENTS, updates_per_client=1, table=None):
    """Race every strategy with each number of clients, each client making `updates_per_client` updates."""
    rows = []
    for name, strategy in STRATEGIES.items():
        for count in clients:
            result = races.race(strategy, threads=count, operations=count * updates_per_client, table=table)
            rows.append(measured(name, result))
    return pd.DataFrame(rows)


LOG_TICKS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)  # written whole: "D2" writes 20 as a small 2

PANELS = (("success rate", "Share of write requests that took effect"),
          ("attempts per success", "Write requests per update that took effect"),
          ("write units per update", "Write units billed per update that took effect"),
          ("median ms per update", "Median time per update (ms)"))


def contention_figure(frame):
    """Four panels against the number of clients on one item: success rate, attempts, units and time per update."""
    figure = make_subplots(rows=2, cols=2, subplot_titles=[title for _, title in PANELS],
                           horizontal_spacing=0.1, vertical_spacing=0.16)
    colours = dict(zip(STRATEGIES, ("#d62728", "#1f77b4", "#2ca02c", "#9467bd")))
    for number, (column, _) in enumerate(PANELS):
        row, col = divmod(number, 2)
        for name, runs in frame.groupby("strategy", sort=False):
            figure.add_trace(go.Scatter(x=runs["clients"], y=runs[column], mode="lines+markers", name=name,
                                        legendgroup=name, showlegend=number == 0,
                                        line={"color": colours[name]}), row=row + 1, col=col + 1)
        figure.update_xaxes(type="log", tickvals=list(CLIENTS), title_text="clients on one item", row=row + 1,
                            col=col + 1)
    for row, col in ((1, 2), (2, 1), (2, 2)):
        figure.update_yaxes(type="log", tickvals=LOG_TICKS, row=row, col=col)
    figure.update_layout(height=620, width=940, legend={"orientation": "h", "y": -0.12},
                         title="The price of contention: every client updating one counter at once")
    return figure
