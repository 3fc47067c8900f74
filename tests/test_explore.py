"""The explorer runs every distinct order of a few clients' requests for real, exactly once each, and says so when it
cannot.

These tests count the orders of requests alone (consistency="strong"), against a model that enumerates every order and
counts those that differ otherwise than by swapping neighbouring steps that commute (two reads) once;
test_consistency_explored.py explores the choices of DynamoDB's consistency that the explorer makes by default.
"""
import _thread
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from botocore.exceptions import ClientError

from helpers import fresh_table, plots
from helpers.explore import ONLY_ORDERS, ExplorationError, Stepper, explore, order_table, outcome_counts, replay
from helpers.knobs import set_knobs
from helpers.widgets import step_through
from support import optimistic

TABLE = "p24-atomic-counters"
KEY = {"PK": "POST#hello-world", "SK": "STATS"}
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def table(lab):
    """The counter table of notebook 24."""
    return fresh_table(TABLE, lab)


def counter(table, views=0, **more):
    """reset(): the counter at `views` (with any other attributes)."""
    return lambda: table.put_item(Item={**KEY, "views": views, **more})


def views(table):
    """The counter's value, read strongly."""
    return table.get_item(Key=KEY, ConsistentRead=True)["Item"]["views"]


def racy(table):
    """A client that reads the counter and writes back what it read plus one."""
    def increment():
        current = table.get_item(Key=KEY)["Item"]["views"]
        table.put_item(Item={**KEY, "views": current + 1})
        return current + 1
    return increment


def add(table):
    """A client that lets DynamoDB add one."""
    return lambda: table.update_item(Key=KEY, UpdateExpression="ADD #v :one", ExpressionAttributeNames={"#v": "views"},
                                     ExpressionAttributeValues={":one": 1})


def withdraw(table, amount, guarded):
    """A client that reads the balance, checks it in code, then subtracts (with the check in the write if guarded)."""
    def client():
        if table.get_item(Key=KEY)["Item"]["balance"] < amount:
            return "insufficient funds"
        condition = {"ConditionExpression": "balance >= :a"} if guarded else {}
        try:
            table.update_item(Key=KEY, UpdateExpression="SET balance = balance - :a",
                              ExpressionAttributeValues={":a": amount}, **condition)
        except ClientError as error:
            return error.response["Error"]["Code"]
        return "paid"
    return client


# The independent model: the same clients as generators over a dict (each step "read" or "write" of the one item),
# every interleaving enumerated by recursion.

def model_racy(state):
    """Model of racy(): yield a read, then a write of what was read plus one."""
    seen = yield "read", lambda: state["views"]
    yield "write", lambda: state.update(views=seen + 1)


def model_add(state):
    """Model of add(): one atomic step."""
    yield "write", lambda: state.update(views=state["views"] + 1)


def model_withdraw(amount, guarded):
    """Model of withdraw(): a read; a write only when the balance read was enough."""
    def client(state):
        seen = yield "read", lambda: state["balance"]
        if seen >= amount:
            yield "write", lambda: (state.update(balance=state["balance"] - amount)
                                    if not guarded or state["balance"] >= amount else None)
    return client


def model_optimistic(state):
    """Model of optimistic(): read value and version; write only if the version is unchanged, else read again."""
    while True:
        views, version = yield "read", lambda: (state["views"], state["version"])
        won = yield "write", lambda: state["version"] == version and (
            state.update(views=views + 1, version=version + 1) or True)
        if won:
            return


def model_orders(programs, start, holds):
    """Every interleaving of the model clients: (number of distinct orders, number of them for which holds(state) is
    False)."""
    found = model_traces(programs, start, holds)
    return len(found), sum(not held for held in found.values())


def model_traces(programs, start, holds):
    """{the class of an order: whether holds(state) after it} over every interleaving of the model clients. Two orders
    are one when every two steps that do not commute (of one client, or not both reads, a write refused by its
    condition (its step gave False) being a read) come in the same order in both; a class is the set of those pairs,
    each step named (client's place, its step's place among the client's)."""
    def run(choices):
        state = dict(start)
        clients = [program(state) for program in programs]
        pending = [next(client, None) for client in clients]
        kinds = []
        for choice in choices:
            kind, step = pending[choice]
            value = step()
            kinds.append("read" if kind == "write" and value is False else kind)
            try:
                pending[choice] = clients[choice].send(value)
            except StopIteration:
                pending[choice] = None
        return state, kinds, [i for i, step in enumerate(pending) if step is not None]

    def trace(choices, kinds):
        """The order's class: each pair of steps that do not commute, in the order they came."""
        steps = [(client, choices[:place].count(client)) for place, client in enumerate(choices)]
        return frozenset((steps[i], steps[j]) for i in range(len(steps)) for j in range(i + 1, len(steps))
                         if steps[i][0] == steps[j][0] or "write" in (kinds[i], kinds[j]))

    found = {}

    def visit(choices):
        state, kinds, ready = run(choices)
        if not ready:
            found[trace(choices, kinds)] = holds(state)
        for i in ready:
            visit(choices + [i])

    visit([])
    return found


def explored_trace(row, names):
    """The class of an explored order, as model_traces names it: a PutItem or UpdateItem DynamoDB refused is a read."""
    clients = [names.index(label.partition(":")[0]) for label in row["steps"]]
    kinds = ["write" if label.partition(": ")[2].split()[0] in ("PutItem", "UpdateItem") and answer == "OK" else "read"
             for label, answer in zip(row["steps"], row["answers"])]
    steps = [(client, clients[:place].count(client)) for place, client in enumerate(clients)]
    return frozenset((steps[i], steps[j]) for i in range(len(steps)) for j in range(i + 1, len(steps))
                     if steps[i][0] == steps[j][0] or "write" in (kinds[i], kinds[j]))


def counts(orders):
    """(orders, orders that broke the invariant) of an exploration."""
    return len(orders), int((~orders["ok"]).sum())


@pytest.mark.parametrize("clients, model, expected", [
    (2, model_racy, (4, 2)),
    (3, model_racy, (36, 30)),
])
def test_racy_increments_lose_updates_in_exactly_the_orders_the_model_counts(table, clients, model, expected):
    names = ["alice", "bob", "carol"][:clients]
    orders = explore({name: racy(table) for name in names}, counter(table), lambda _: views(table) == clients,
                     consistency="strong")
    assert counts(orders) == model_orders([model] * clients, {"views": 0}, lambda s: s["views"] == clients) == expected


def test_add_from_three_clients_loses_nothing_in_any_of_its_six_orders(table):
    orders = explore({name: add(table) for name in ("alice", "bob", "carol")}, counter(table),
                     lambda _: views(table) == 3, consistency="strong")
    assert counts(orders) == model_orders([model_add] * 3, {"views": 0}, lambda s: s["views"] == 3) == (6, 0)
    assert sorted(orders["schedule"]) == sorted(set(orders["schedule"]))


@pytest.mark.parametrize("guarded, expected", [(False, (4, 2)), (True, (4, 0))])
def test_withdrawals_checked_in_code_go_negative_and_the_condition_stops_it(table, guarded, expected):
    orders = explore({name: withdraw(table, 80, guarded) for name in ("alice", "bob")},
                     lambda: table.put_item(Item={**KEY, "balance": 100}),
                     lambda _: table.get_item(Key=KEY, ConsistentRead=True)["Item"]["balance"] >= 0,
                     consistency="strong")
    model = model_orders([model_withdraw(80, guarded)] * 2, {"balance": 100}, lambda s: s["balance"] >= 0)
    assert counts(orders) == model == expected
    assert {len(schedule) for schedule in orders["schedule"]} == {3, 4}


def test_retry_loops_make_orders_of_different_lengths_and_all_of_them_run_once(table):
    orders = explore({"alice": optimistic(table, KEY), "bob": optimistic(table, KEY)}, counter(table, version=0),
                     lambda _: views(table) == 2, consistency="strong")
    model = model_orders([model_optimistic] * 2, {"views": 0, "version": 0},
                         lambda s: s["views"] == 2 and s["version"] == 2)
    assert counts(orders) == (model[0], 0)
    assert len({len(schedule) for schedule in orders["schedule"]}) > 1
    assert len(set(orders["schedule"])) == len(orders)


def test_three_optimistic_clients_run_each_of_their_sixty_behaviours_once_and_no_other_run(table):
    names = ["alice", "bob", "carol"]
    orders = explore({name: optimistic(table, KEY) for name in names}, counter(table, version=0),
                     lambda _: views(table) == 3, consistency="strong")
    model = model_traces([model_optimistic] * 3, {"views": 0, "version": 0},
                         lambda s: s["views"] == 3 and s["version"] == 3)
    explored = {explored_trace(row, names) for _, row in orders.iterrows()}
    assert len(orders) == orders.attrs["runs"] == len(explored) == len(model) == 60
    assert explored == set(model) and orders["ok"].all()


def test_the_same_scenario_gives_the_same_orders_every_time(table):
    clients = {"alice": racy(table), "bob": racy(table)}
    first = explore(clients, counter(table), lambda _: views(table) == 2, consistency="strong")
    again = explore(clients, counter(table), lambda _: views(table) == 2, consistency="strong")
    assert first.drop(columns="results").equals(again.drop(columns="results"))
    assert first["steps"][1] == ("alice: GetItem", "bob: GetItem", "alice: PutItem", "bob: PutItem")
    assert first["results"][1] == {"alice": 1, "bob": 1}


def test_tables_number_orders_and_outcomes_as_the_figure_does_and_never_cut_a_step_short(table):
    orders = explore({"alice": racy(table), "bob": racy(table)}, counter(table), lambda _: views(table) == 2,
                     consistency="strong")
    shown = order_table(orders, wrote=lambda results: results["alice"])
    figure = plots.orders(orders, "lose an update")
    rows = next(trace.y for trace in figure.data if trace.type == "scatter" and trace.mode == "text")
    assert [f"order {n}" for n in shown.index] == list(rows)
    assert list(outcome_counts(orders, str).index) == list(range(1, len(outcome_counts(orders, str)) + 1))
    whole = "alice: GetItem → bob: GetItem → alice: PutItem → bob: PutItem"
    assert whole in repr(shown) and whole in shown._repr_html_()


def test_the_point_of_no_return_is_the_second_read(table):
    orders = explore({"alice": racy(table), "bob": racy(table)}, counter(table), lambda _: views(table) == 2,
                     consistency="strong")
    assert list(orders["doomed_at"]) == [-1, 1, 1, -1]


def test_a_client_that_raises_has_its_exception_as_its_result(table):
    def broken():
        table.get_item(Key=KEY)
        raise ValueError("bug in the client")

    seen = []
    orders = explore({"alice": broken, "bob": add(table)}, counter(table), lambda results: seen.append(results) or True,
                     consistency="strong")
    assert counts(orders) == (2, 0)
    assert all(isinstance(results["alice"], ValueError) and str(results["alice"]) == "bug in the client"
               for results in seen)


def test_a_refused_write_is_a_result_too(table):
    def create():
        table.put_item(Item={**KEY, "views": 1}, ConditionExpression="attribute_not_exists(PK)")
        return "created"

    orders = explore({"alice": create, "bob": create}, lambda: table.delete_item(Key=KEY), lambda _: True,
                     consistency="strong")
    assert list(orders["answers"]) == [("OK", "ConditionalCheckFailedException")] * 2
    assert [sorted(map(str, results.values())) for results in orders["results"]] == [
        ["An error occurred (ConditionalCheckFailedException) when calling the PutItem operation: "
         "The conditional request failed", "created"]] * 2


def test_requests_of_reset_and_check_are_not_steps_and_nothing_is_printed(table, capsys):
    orders = explore({"alice": add(table)}, counter(table), lambda _: views(table) == 1, consistency="strong")
    assert list(orders["steps"]) == [("alice: UpdateItem",)]
    assert capsys.readouterr().out == ""


def test_a_lost_response_and_the_sdks_retry_are_two_steps_and_another_client_can_act_between(lab, table):
    def reset():
        counter(table)()
        set_knobs(lab, quiet=True, lose_response="UpdateItem", lose_count=1)

    try:
        orders = explore({"alice": add(table), "bob": lambda: views(table)}, reset, lambda _: views(table) == 2,
                         consistency="strong")
    finally:
        set_knobs(lab, quiet=True, lose_response=None)
    assert ("alice: UpdateItem", "bob: GetItem", "alice: UpdateItem") in set(orders["steps"])
    for steps, answers in zip(orders["steps"], orders["answers"]):
        assert [a for step, a in zip(steps, answers) if step.startswith("alice")] == ["ConnectionClosedError", "OK"]
    assert counts(orders) == (3, 0)


def work_for(seconds):
    """Take `seconds` as a client's own work does (a client's time.sleep returns at once in an exploration)."""
    threading.Event().wait(seconds)


def test_a_client_that_never_sends_nor_finishes_is_named(table):
    def stuck():
        work_for(2)

    with pytest.raises(ExplorationError, match="Client 'bob' neither sent a DynamoDB request nor finished within 0.3 s"):
        explore({"alice": add(table), "bob": stuck}, counter(table), lambda _: True, timeout=0.3, consistency="strong")


def test_more_orders_than_the_limit_is_refused_with_the_estimate_and_the_cure(table):
    clients = {name: racy(table) for name in ("alice", "bob", "carol")}
    with pytest.raises(ValueError, match=r"more than 10 possible orders \(about 90 .*alice 2, bob 2, carol 2\)"
                                         r".*Use fewer clients"):
        explore(clients, counter(table), lambda _: True, max_schedules=10, consistency="strong")


def test_a_scenario_that_does_not_repeat_itself_is_refused_with_what_to_change(table):
    calls = []

    def flaky():
        calls.append(1)
        if len(calls) % 2:
            table.get_item(Key=KEY)
        table.get_item(Key=KEY)

    with pytest.raises(ExplorationError, match="did not repeat itself"):
        explore({"alice": flaky, "bob": add(table)}, counter(table), lambda _: True, consistency="strong")


def test_an_interrupt_stops_the_exploration_within_a_second_with_every_thread_released(table, ctrl_c_raises):
    def slow():  # a read and a write each: 36 behaviours of about 0.3 s, not one (reads alone all commute)
        work_for(0.05)
        table.get_item(Key=KEY)
        work_for(0.05)
        add(table)()

    earlier = {t for t in threading.enumerate() if t.name.startswith("explore-")}
    timer = threading.Timer(0.5, _thread.interrupt_main)
    timer.start()
    began = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        explore({name: slow for name in ("alice", "bob", "carol")}, counter(table), lambda _: True,
                consistency="strong")
    interrupted = time.monotonic()
    assert interrupted - began < 0.5 + 1
    assert not [t for t in threading.enumerate() if t.name.startswith("explore-") and t not in earlier]


def test_a_second_exploration_while_one_runs_is_refused(table):
    def slow():
        work_for(0.2)
        table.get_item(Key=KEY)

    background = threading.Thread(target=explore, args=({"alice": slow, "bob": slow}, counter(table), lambda _: True))
    background.start()
    time.sleep(0.1)
    try:
        with pytest.raises(RuntimeError, match="Another exploration is running"):
            explore({"alice": add(table)}, counter(table), lambda _: True, consistency="strong")
    finally:
        background.join()


def test_bad_clients_are_refused_with_an_example(table):
    with pytest.raises(ValueError, match='clients must be a dict'):
        explore([racy(table)], counter(table), lambda _: True, consistency="strong")
    with pytest.raises(ValueError, match="must be a function of no arguments"):
        explore({"alice": "racy"}, counter(table), lambda _: True, consistency="strong")


def test_replay_prints_one_order_as_a_transcript_in_the_order_the_requests_reached_dynamodb(table, capsys):
    results, ok = replay({"alice": racy(table), "bob": racy(table)}, counter(table), ("alice", "bob", "bob", "alice"),
                         lambda _: views(table) == 2, consistency="strong")
    out = capsys.readouterr().out
    assert (results, ok) == ({"alice": 1, "bob": 1}, False)
    assert [line for line in out.splitlines() if line.startswith(("---", ">>>"))] == [
        "--- alice ---", f">>> GetItem {TABLE}", "--- bob ---", f">>> GetItem {TABLE}",
        "--- bob ---", f">>> PutItem {TABLE}", "--- alice ---", f">>> PutItem {TABLE}"]
    assert "item:       {PK: 'POST#hello-world', SK: 'STATS', views: 1}" in out


def test_a_stepper_holds_each_client_at_its_next_request_until_told(table):
    stepper = Stepper({"alice": racy(table), "bob": racy(table)}, counter(table), lambda _: views(table) == 2,
                      consistency="strong")
    try:
        assert [request.summary for request in stepper.held.values()] == [
            "GetItem {PK: 'POST#hello-world', SK: 'STATS'}"] * 2
        stepper.step("bob")
        stepper.step("bob")
        assert stepper.held["alice"].operation == "GetItem" and "bob" not in stepper.held
        with pytest.raises(ValueError, match="bob has finished; clients with a request to send: alice"):
            stepper.step("bob")
        stepper.step("alice")
        assert stepper.held["alice"].summary == "PutItem {PK: 'POST#hello-world', SK: 'STATS', views: 2}"
        stepper.step("alice")
        assert stepper.done and stepper.ok is True and stepper.results == {"alice": 2, "bob": 1}
    finally:
        stepper.close()


def test_the_step_through_panel_shows_the_next_requests_the_steps_the_state_and_the_verdict(table):
    clients = {"alice": racy(table), "bob": racy(table)}
    orders = explore(clients, counter(table), lambda _: views(table) == 2, consistency="strong")
    panel = step_through(clients, counter(table), lambda _: views(table) == 2,
                         show=lambda: table.get_item(Key=KEY)["Item"], orders=orders, consistency="strong")
    try:
        assert panel.buttons["alice"].description == "alice ▶ GetItem {PK: 'POST#hello-world', SK: 'STATS'}"
        for name in ("alice", "bob", "alice"):
            panel.buttons[name].click()
        assert panel.history == ["alice: GetItem", "bob: GetItem", "alice: PutItem"]
        assert panel.steps_view.value.count("<b>→ {PK: &#x27;POST#hello-world&#x27;, SK: &#x27;STATS&#x27;, views: 0}</b>") == 2
        assert panel.steps_view.value.endswith("<code>alice ▶ PutItem {PK: &#x27;POST#hello-world&#x27;, SK: "
                                               "&#x27;STATS&#x27;, views: 1}</code> <b>→ OK</b></li></ol>")
        assert panel.buttons["alice"].disabled and panel.buttons["alice"].description == "alice: done, returned 1"
        assert panel.buttons["bob"].description == "bob ▶ PutItem {PK: 'POST#hello-world', SK: 'STATS', views: 1}"
        panel.step("bob")
        assert panel.verdict == "all done: alice → 1, bob → 1 · the invariant is BROKEN"
        assert panel.state["views"] == 1
        assert panel.schedules.options[0][0].startswith("order 2 · broken: alice: GetItem → bob: GetItem")
        panel.replay(orders["schedule"][0])
        assert panel.verdict.endswith("the invariant holds") and panel.state["views"] == 2
        panel.buttons["bob"].click()
        assert "ValueError: bob has finished" in panel.verdict_view.value
    finally:
        panel.stepper.close()


def test_the_orders_figure_has_a_row_per_order_a_cell_per_step_and_the_count_in_its_title(table):
    orders = explore({"alice": racy(table), "bob": racy(table)}, counter(table), lambda _: views(table) == 2,
                     consistency="strong")
    figure = plots.orders(orders, "lose an update")
    bars = [trace for trace in figure.data if trace.type == "bar" and trace.showlegend is False]
    assert figure.layout.title.text == "2 of 4 distinct orders lose an update"
    assert [trace.name for trace in figure.data if trace.showlegend is not False][:2] == ["alice", "bob"]
    assert [bar.name for bar in bars] == ["alice", "bob"]
    assert sum(len(bar.x) for bar in bars) == 16
    assert sum(width > 0 for bar in bars for width in bar.marker.line.width) == 2


def test_many_orders_are_drawn_one_row_per_distinct_outcome(table):
    orders = explore({name: racy(table) for name in ("alice", "bob", "carol")}, counter(table),
                     lambda _: views(table) == 3, consistency="strong")
    figure = plots.orders(orders, "lose an update", outcome=lambda results: f"final {max(results.values())}")
    labels = next(trace for trace in figure.data if getattr(trace, "mode", None) == "text").text
    assert [label.split("   ")[0] for label in sorted(labels)] == ["broken: final 1", "broken: final 2",
                                                                    "holds: final 3"]
    assert sorted(labels)[2] == "holds: final 3   (×6 orders)"
    assert sum(int(label.rsplit("×", 1)[1].split()[0]) for label in labels) == 36


def test_the_explorer_works_unchanged_against_another_endpoint(standalone_server):
    script = (
        "from helpers import connect, fresh_table\n"
        "from helpers.explore import explore\n"
        "lab = connect()\n"
        "table = fresh_table('p24-atomic-counters', lab)\n"
        "KEY = {'PK': 'POST#hello-world', 'SK': 'STATS'}\n"
        "def racy():\n"
        "    views = table.get_item(Key=KEY)['Item']['views']\n"
        "    table.put_item(Item={**KEY, 'views': views + 1})\n"
        "orders = explore({'alice': racy, 'bob': racy}, lambda: table.put_item(Item={**KEY, 'views': 0}),\n"
        "                 lambda _: table.get_item(Key=KEY, ConsistentRead=True)['Item']['views'] == 2)\n"
        "print(len(orders), int((~orders['ok']).sum()))\n")
    environment = {**os.environ, "AWS_ENDPOINT_URL_DYNAMODB": standalone_server}
    environment.pop("DYNAMODB_LAB_USE_AWS", None)
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=environment, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.splitlines() == [f"Backend: DynamoDB Local at {standalone_server} (from AWS_ENDPOINT_URL_DYNAMODB)",
                                       ONLY_ORDERS.format(kind="DynamoDB Local"), "4 2"]


def test_a_clients_backoff_takes_no_time_in_an_exploration_and_sleeps_elsewhere_as_asked(table):
    def patient():
        time.sleep(5)  # a backoff: between two of its steps nothing happens but the explorer's moves
        table.get_item(Key=KEY)
        return "done"

    began = time.monotonic()
    orders = explore({"alice": patient, "bob": add(table)}, counter(table), lambda results: results["alice"] == "done",
                     consistency="strong")
    assert counts(orders) == (2, 0) and time.monotonic() - began < 5
    began = time.monotonic()
    time.sleep(0.2)
    assert time.monotonic() - began >= 0.2, "outside a client's thread a sleep sleeps"
