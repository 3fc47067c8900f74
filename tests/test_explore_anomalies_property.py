"""On random explored scenarios, the analyser's verdict on each order's history is serializability, decided by brute
force: some serial order of the committed operations (requests, or attempts) gives every read its value and writes
each item's versions in the order the lab server applied them.

The scenarios are tests/test_explore_property.py's (2-3 clients of 1-3 requests over 1-3 items: reads of every
consistency, puts, conditional updates, transactions, batches, queries), without faults: a lost response's request is
"info", which may or may not have committed for the analyser, while the brute force needs one serial order of the
committed ones. The brute force is tests/test_anomalies_property.py's, which shares nothing with helpers.anomalies.
The options that make the two the same model: the version order given (the lab server's), no real-time or process
order (`realtime=False`).
"""
from hypothesis import assume, given, reject, settings

from helpers.anomalies import analyse
from helpers.explore import TooManyOrders, explore
from helpers.explore.histories import attempts
from support import PROPERTY_SETTINGS
from test_anomalies_property import serializable
from test_explore_property import MAX_ORDERS, model_orders, perform, scenarios, start_items
from test_explore_property import table  # noqa: F401  (the fixture)


def histories(lab, scenario):
    """The history of every order the explorer runs of `scenario`."""
    client = lab.client

    def program(requests):
        def run():
            for request in requests:
                perform(client, request)
        return run

    clients = {name: program(requests) for name, requests in zip(scenario.client_names, scenario.clients)}
    try:
        frame = explore(clients, lambda: start_items(client, scenario), lambda results: True, consistency="dynamodb",
                        lab=lab)
    except TooManyOrders:
        reject()
    return list(frame["history"])


def committed(recorded):
    """The history's completed operations as the brute force takes them: (type, micro-operations)."""
    return [(op["type"], op["value"]) for op in recorded["ops"] if op["type"] in ("ok", "fail")]


def final_versions(recorded):
    """Each item's versions in order, of those an operation wrote last (the brute force orders final writes: an
    attempt's earlier write of an item is its own business)."""
    finals = {(key, value) for op in recorded["ops"] if op["type"] == "ok"
              for key, value in {key: value for f, key, value in op["value"] if f == "w"}.items()}
    return {key: [value for value in values if (key, value) in finals]
            for key, values in recorded["version_order"].items()}


@settings(max_examples=25, **PROPERTY_SETTINGS)
@given(scenario=scenarios())
def test_the_analysers_verdict_on_every_explored_order_is_serializability(lab, table, scenario):  # noqa: F811
    assume(not scenario.faults and model_orders(scenario) <= MAX_ORDERS)
    for recorded in histories(lab, scenario):
        for history in (recorded, attempts(recorded)):
            report = analyse(history["ops"], version_order=history["version_order"], realtime=False)
            assert report.valid == serializable(committed(history), final_versions(history)), (
                scenario, history, report.explain())
