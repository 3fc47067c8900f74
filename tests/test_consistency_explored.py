"""The explorer with consistency="dynamodb" finds exactly the outcomes DynamoDB's documented consistency allows.

Each scenario runs for real against the lab server and is compared with an independent pure-Python model of the
rules, enumerated here by brute force: three explicit copies per item (a leader and two followers), any follower
taking its next write at any moment, an eventually consistent read answered by any copy; a transaction whose
items become visible one at a time, in any order, conflicting meanwhile, while each other client sends at most WINDOW
requests; a client's reads of an item stale at most STALE_READS times in a row. The sets of outcomes must be equal.
(tests/test_explore_property.py compares the explorer with a model without those bounds, on random scenarios.)
"""
import time
from itertools import pairwise

import pytest

from helpers import fresh_table
from helpers.knobs import knobs
from helpers.explore import WINDOW, Stepper, explore, item_move, parse_move
from helpers.labserver.consistency import STALE_READS

TABLE = "p25-transactions"
A = {"PK": "ACCOUNT#a", "SK": "BALANCE"}
B = {"PK": "ACCOUNT#b", "SK": "BALANCE"}

pytestmark = pytest.mark.usefixtures("knobs_off")


@pytest.fixture
def table(lab):
    return fresh_table(TABLE, lab)


def start(table, **balances):
    """A reset(): each named account at its balance."""
    def reset():
        for name, balance in balances.items():
            table.put_item(Item={"PK": f"ACCOUNT#{name}", "SK": "BALANCE", "balance": balance})
    return reset


def balance(table, key, consistent=False):
    """One GetItem of an account's balance."""
    return int(table.get_item(Key=key, ConsistentRead=consistent)["Item"]["balance"])


def outcomes(orders, *names):
    """The set of (each client's result) of an exploration."""
    return {tuple(code_or_value(row[name]) for name in names) for row in orders["results"]}


def code_or_value(result):
    """A client's result as the model writes it: the error code it raised, or the value."""
    response = getattr(result, "response", None)
    return response["Error"]["Code"] if response else result


# The independent model: explicit copies, every interleaving of client steps and copy catch-ups, by recursion.

def model_outcomes(programs, items, transactional=()):
    """Every outcome of the model clients (generators yielding steps), as a set of result tuples.

    A step is ("read", item, "eventual"|"strong"), ("write", item, function of the old value), or
    ("transact", [(item, function)]), ("batch", [items]) for a read-committed strongly consistent BatchGetItem (its
    items read one at a time, in any order, other clients' steps between them),
    ("batchwrite", [(item, function)]) for a BatchWriteItem whose items take effect one at a time, when each becomes
    visible, without conflicting: a write naming one of them before then lands first, and the batch's value after it.
    """
    found = set()

    def run(state, clients, pending, results):
        if all(step is None for step in pending) and not state["ongoing"]:
            found.add(tuple(results))
            return
        for place, step in enumerate(pending):
            waiting = any(state["others"][number].get(place, 0) >= WINDOW for number in state["ongoing"])
            if step is not None and not waiting:
                for new_state, value in perform(state, step, place):
                    new_state = clone(new_state) if new_state is state else new_state
                    if value == "reading":  # one item of a BatchGetItem read; the request goes on
                        run(new_state, clients, pending, results)
                        continue
                    for number in state["ongoing"]:
                        new_state["others"][number][place] = new_state["others"][number].get(place, 0) + 1
                    advance(new_state, clients, pending, results, place, value)
        for item, history in state["items"].items():
            for follower in (0, 1):
                if state["followers"][item][follower] < len(history) - 1:
                    caught = clone(state)
                    caught["followers"][item][follower] += 1
                    run(caught, clients, pending, results)
        for number, hidden in state["ongoing"].items():
            for item in hidden:
                revealed = clone(state)
                revealed["ongoing"][number] = [other for other in hidden if other != item]
                unseen = revealed["hidden"].pop((number, item))
                if unseen is not None:
                    revealed["items"][item].append(unseen)
                if not revealed["ongoing"][number]:
                    del revealed["ongoing"][number]
                    resume(revealed, clients, pending, results, number)
                else:
                    run(revealed, clients, pending, results)

    def advance(state, clients, pending, results, place, value):
        if value == "ongoing":
            run(state, clients, [None if i == place else step for i, step in enumerate(pending)], results)
            return
        replay = [list(steps) for steps in clients]
        replay[place].append(value)
        resume_client(state, replay, pending, results, place)

    def resume(state, clients, pending, results, number):
        place = state["owner"].pop(number)
        replay = [list(steps) for steps in clients]
        replay[place].append("OK")
        resume_client(state, replay, pending, results, place)

    def resume_client(state, replay, pending, results, place):
        program = programs[place]()
        step = next(program)
        try:
            for value in replay[place]:
                step = program.send(value)
        except StopIteration as done:
            pending = [None if i == place else s for i, s in enumerate(pending)]
            results = [done.value if i == place else r for i, r in enumerate(results)]
            run(state, replay, pending, results)
            return
        pending = [step if i == place else s for i, s in enumerate(pending)]
        run(state, replay, pending, results)

    def perform(state, step, place):
        kind = step[0]
        if kind == "read":
            _, item, consistency = step
            history = state["items"][item]
            latest = len(history) - 1
            run = state["stale"].get((place, item), 0)
            copies = {latest} if consistency == "strong" or run >= STALE_READS else {latest, *state["followers"][item]}
            answers = []
            for version in copies:
                new = clone(state)
                new["stale"][place, item] = run + 1 if version < latest else 0
                answers.append((new, history[version]))
            return answers
        locked = {item for number, hidden in state["ongoing"].items() if number not in state["batches"]
                  for item in hidden}
        if kind == "write":
            _, item, function = step
            if item in locked:
                return [(state, "TransactionConflictException")]
            new = clone(state)
            new["items"][item].append(function(new["items"][item][-1]))
            return [(new, "OK")]
        if kind == "batch":
            read = state["reading"].get(place, {})
            answers = []
            for item in step[1]:
                if item not in read:
                    new = clone(state)
                    new["reading"][place] = {**read, item: state["items"][item][-1]}
                    if len(new["reading"][place]) < len(step[1]):
                        answers.append((new, "reading"))
                    else:
                        got = new["reading"].pop(place)
                        answers.append((new, tuple(got[each] for each in step[1])))
            return answers
        if kind == "transactget":
            if locked & set(step[1]):
                return [(state, "TransactionCanceledException")]
            return [(state, tuple(state["items"][item][-1] for item in step[1]))]
        _, writes = step
        if kind == "transact" and locked & {item for item, _ in writes}:
            return [(state, "TransactionCanceledException")]
        new = clone(state)
        number = len(new["owner"]) + len(new["ongoing"]) + 1 + place * 100
        if kind == "batchwrite":
            new["batches"].add(number)
        for item, function in writes:
            new["hidden"][(number, item)] = function(new["items"][item][-1])
        new["ongoing"][number] = [item for item, _ in writes]
        new["owner"][number] = place
        new["others"][number] = {}
        return [(new, "ongoing")]

    initial = {"items": {item: [value] for item, value in items.items()},
               "followers": {item: [0, 0] for item in items}, "ongoing": {}, "hidden": {}, "owner": {}, "others": {},
               "stale": {}, "reading": {}, "batches": set()}
    clients = [[] for _ in programs]
    pending = [next(program()) for program in programs]
    run(initial, clients, pending, [None] * len(programs))
    return found


def clone(state):
    """A deep copy of a model state."""
    return {"items": {k: list(v) for k, v in state["items"].items()},
            "followers": {k: list(v) for k, v in state["followers"].items()},
            "ongoing": {k: list(v) for k, v in state["ongoing"].items()},
            "hidden": dict(state["hidden"]), "owner": dict(state["owner"]),
            "others": {k: dict(v) for k, v in state["others"].items()}, "stale": dict(state["stale"]),
            "reading": {k: dict(v) for k, v in state["reading"].items()},
            "batches": set(state["batches"])}


def model_racy():
    seen = yield ("read", "a", "eventual")
    yield ("write", "a", lambda _: seen + 1)
    return seen + 1


def test_racy_increments_with_default_reads_reach_exactly_the_model_s_outcomes(table):
    def racy():
        seen = balance(table, A)
        table.put_item(Item={**A, "balance": seen + 1})
        return seen + 1
    orders = explore({"alice": racy, "bob": racy}, start(table, a=0), lambda _: balance(table, A, True) == 2,
                     consistency="dynamodb")
    strong = explore({"alice": racy, "bob": racy}, start(table, a=0), lambda _: True, consistency="strong")
    assert outcomes(orders, "alice", "bob") == model_outcomes([model_racy, model_racy], {"a": 0})
    assert (len(strong), len(orders), int((~orders["ok"]).sum())) == (4, 6, 4)
    assert "bob: GetItem (stale: {PK: 'ACCOUNT#a', SK: 'BALANCE'} without alice's PutItem)" in {
        step for steps in orders["steps"] for step in steps}


def test_a_read_that_saw_a_write_may_then_miss_it_no_monotonic_reads(table):
    def writer():
        table.put_item(Item={**A, "balance": 1})

    def reader():
        return balance(table, A), balance(table, A)

    def model_writer():
        yield ("write", "a", lambda _: 1)

    def model_reader():
        first = yield ("read", "a", "eventual")
        second = yield ("read", "a", "eventual")
        return first, second
    orders = explore({"writer": writer, "reader": reader}, start(table, a=0), lambda _: True, consistency="dynamodb")
    expected = model_outcomes([model_writer, model_reader], {"a": 0})
    assert outcomes(orders, "writer", "reader") == expected
    assert (None, (1, 0)) in expected, "the model allows a newer read then an older one"


def test_max_stale_explores_exactly_the_orders_with_at_most_that_many_stale_answers(table):
    def writer():
        table.put_item(Item={**A, "balance": 1})

    def reader():
        return balance(table, A), balance(table, A)

    def stale_answers(orders):
        """How many reads got an older answer than the newest, per order."""
        return [sum(parse_move(move)[1] == "~" for move in schedule) for schedule in orders["schedule"]]
    clients, reset = {"writer": writer, "reader": reader}, start(table, a=0)
    every, one, none = (explore(clients, reset, lambda _: True, max_stale=bound) for bound in (None, 1, 0))
    assert (max(stale_answers(every)), max(stale_answers(one)), max(stale_answers(none))) == (2, 1, 0)
    assert set(one["schedule"]) == {schedule for schedule, stale in zip(every["schedule"], stale_answers(every))
                                    if stale <= 1}
    assert outcomes(one, "writer", "reader") == outcomes(every, "writer", "reader"), "one stale read shows (1, 0)"
    assert outcomes(none, "writer", "reader") == {(None, (0, 0)), (None, (0, 1)), (None, (1, 1))}


def test_strongly_consistent_reads_are_never_stale(table):
    def writer():
        table.put_item(Item={**A, "balance": 1})

    def reader():
        return balance(table, A, consistent=True)
    orders = explore({"writer": writer, "reader": reader}, start(table, a=0), lambda _: True, consistency="dynamodb")
    assert len(orders) == 2 and outcomes(orders, "reader") == {(0,), (1,)}


def transfer(client):
    """Move 10 from A to B in one transaction; 'OK' or the error code."""
    def send():
        client.transact_write_items(TransactItems=[
            {"Update": {"TableName": TABLE, "Key": A, "UpdateExpression": "SET balance = balance - :a",
                        "ExpressionAttributeValues": {":a": 10}}},
            {"Update": {"TableName": TABLE, "Key": B, "UpdateExpression": "SET balance = balance + :a",
                        "ExpressionAttributeValues": {":a": 10}}}])
        return "OK"
    return send


def model_transfer():
    yield ("transact", [("a", lambda v: v - 10), ("b", lambda v: v + 10)])
    return "OK"


def test_a_batch_get_can_see_half_a_transfer_and_transact_get_never_does(lab, table):
    def batch():
        found = lab.client.batch_get_item(RequestItems={TABLE: {"Keys": [A, B], "ConsistentRead": True}})
        return tuple(int(item["balance"]) for item in sorted(found["Responses"][TABLE], key=lambda i: i["PK"]))

    def transact_get():
        try:
            found = lab.client.transact_get_items(TransactItems=[{"Get": {"TableName": TABLE, "Key": key}}
                                                                 for key in (A, B)])
        except lab.client.exceptions.TransactionCanceledException:
            return "TransactionCanceledException"
        return tuple(int(response["Item"]["balance"]) for response in found["Responses"])

    def model_batch():
        return (yield ("batch", ["a", "b"]))

    def model_transact_get():
        return (yield ("transactget", ["a", "b"]))
    reset = start(table, a=100, b=100)
    fractured = explore({"transfer": transfer(lab.client), "reader": batch}, reset, lambda _: True,
                        consistency="dynamodb")
    snapshot = explore({"transfer": transfer(lab.client), "reader": transact_get}, reset, lambda _: True,
                       consistency="dynamodb")
    assert outcomes(fractured, "transfer", "reader") == model_outcomes(
        [model_transfer, model_batch], {"a": 100, "b": 100})
    assert outcomes(snapshot, "transfer", "reader") == model_outcomes(
        [model_transfer, model_transact_get], {"a": 100, "b": 100})
    assert {reader for _, reader in outcomes(fractured, "transfer", "reader")} == {
        (100, 100), (90, 100), (100, 110), (90, 110)}
    assert {reader for _, reader in outcomes(snapshot, "transfer", "reader")} == {
        (100, 100), (90, 110), "TransactionCanceledException"}


def back_to_back_descending(schedule):
    """True when a schedule makes a transaction's items visible (or reads a BatchGetItem's items) back to back, a
    higher one first."""
    return any(earlier[:2] == later[:2] and earlier[1] in ("+", "@") and earlier[2] > later[2]
               for earlier, later in pairwise(map(item_move, schedule)))


def test_items_made_visible_back_to_back_are_one_behaviour_and_out_of_turn_only_around_another_step(lab, table):
    def batch():
        found = lab.client.batch_get_item(RequestItems={TABLE: {"Keys": [A, B], "ConsistentRead": True}})
        return tuple(int(item["balance"]) for item in sorted(found["Responses"][TABLE], key=lambda i: i["PK"]))
    alone = explore({"transfer": transfer(lab.client)}, start(table, a=100, b=100), lambda _: True)
    watched = explore({"transfer": transfer(lab.client), "reader": batch}, start(table, a=100, b=100),
                      lambda _: True)
    assert list(alone["schedule"]) == [("transfer", "transfer+0", "transfer+1")]
    assert not any(back_to_back_descending(schedule) for schedule in watched["schedule"])
    assert len(watched) == 9, "each of the reader's items read before the transfer, before its item is visible, or after"
    assert outcomes(watched, "transfer", "reader") == {("OK", (100, 100)), ("OK", (90, 100)), ("OK", (100, 110)),
                                                       ("OK", (90, 110))}


def test_a_write_to_an_item_of_an_ongoing_transfer_meets_a_transaction_conflict(lab, table):
    def withdraw():
        try:
            table.update_item(Key=B, UpdateExpression="SET balance = balance - :a", ExpressionAttributeValues={":a": 5})
        except lab.client.exceptions.TransactionConflictException:
            return "TransactionConflictException"
        return "OK"

    def model_withdraw():
        return (yield ("write", "b", lambda v: v - 5))
    orders = explore({"transfer": transfer(lab.client), "withdraw": withdraw}, start(table, a=100, b=100),
                     lambda _: True, consistency="dynamodb")
    assert outcomes(orders, "transfer", "withdraw") == model_outcomes(
        [model_transfer, model_withdraw], {"a": 100, "b": 100})
    assert ("OK", "TransactionConflictException") in outcomes(orders, "transfer", "withdraw")
    assert any("transfer+1" in schedule for schedule in orders["schedule"])


def write_then_read(table):
    """A writer that sets A's balance to 1, and a reader that returns A's balance as a default read answers it."""
    def writer():
        table.put_item(Item={**A, "balance": 1})

    return {"writer": writer, "reader": lambda: balance(table, A)}


def test_the_stepper_offers_a_stale_answer_and_a_reveal_as_moves(lab, table):
    stepper = Stepper(write_then_read(table), start(table, a=0), consistency="dynamodb")
    try:
        assert stepper.moves() == {"writer": "PutItem {PK: 'ACCOUNT#a', SK: 'BALANCE', balance: 1}",
                                   "reader": "GetItem {PK: 'ACCOUNT#a', SK: 'BALANCE'}"}
        stepper.step("writer")
        moves = stepper.moves()
        assert list(moves) == ["reader", "reader~1"]
        assert moves["reader~1"].endswith("answered stale: {PK: 'ACCOUNT#a', SK: 'BALANCE'} without writer's PutItem")
        stepper.step("reader~1")
        assert stepper.results == {"writer": None, "reader": 0}
    finally:
        stepper.close()
    stepper = Stepper({"transfer": transfer(lab.client)}, start(table, a=100, b=100), consistency="dynamodb")
    try:
        stepper.step("transfer")
        finish_the_transfer_b_first(stepper, table)
    finally:
        stepper.close()


def finish_the_transfer_b_first(stepper, table):
    """Make the ongoing transfer's B visible, see A not yet debited, then make A visible: the transfer returns OK."""
    assert list(stepper.moves()) == ["transfer+0", "transfer+1"]
    stepper.step("transfer+1")
    assert balance(table, B, consistent=True) == 110 and balance(table, A, consistent=True) == 100
    stepper.step("transfer+0")
    assert stepper.results == {"transfer": "OK"}


def test_a_panel_goes_on_where_it_was_after_an_exploration_ran_in_between(lab, table):
    stepper = Stepper(write_then_read(table), start(table, a=0), consistency="dynamodb")
    try:
        stepper.step("writer")
        orders = explore({"transfer": transfer(lab.client)}, start(table, a=100, b=100), lambda _: True,
                         consistency="dynamodb")
        assert len(orders) == 1  # it left the table and the lab server's copies as its last order made them
        assert list(stepper.moves()) == ["reader", "reader~1"]
        stepper.step("reader~1")
        assert stepper.results == {"writer": None, "reader": 0}
    finally:
        stepper.close()


def test_requests_between_a_panel_s_steps_meet_the_knobs_and_the_panel_goes_on_where_it_was(lab, table):
    stepper = Stepper({"transfer": transfer(lab.client)}, start(table, a=100, b=100), consistency="dynamodb")
    c = {"PK": "ACCOUNT#c", "SK": "BALANCE"}
    try:
        stepper.step("transfer")  # the panel's transfer is ongoing: neither account visible yet
        with knobs(lab, transaction_window=0.02):  # a race of the same notebook, as weak as DynamoDB
            lab.client.transact_write_items(TransactItems=[{"Put": {"TableName": TABLE, "Item": {**c, "balance": 5}}}])
            time.sleep(0.05)
            table.put_item(Item={**c, "balance": 6})  # the race's transaction has ended, as its window said
            assert balance(table, A, consistent=True) == 90  # the panel's transfer settled for the race
        assert balance(table, A, consistent=True) == 90  # until the panel's next step
        finish_the_transfer_b_first(stepper, table)
    finally:
        stepper.close()


def test_a_default_read_during_a_transfer_never_shows_an_item_before_it_is_visible(lab, table):
    def reader():
        return balance(table, A), balance(table, B)

    def model_reader():
        first = yield ("read", "a", "eventual")
        second = yield ("read", "b", "eventual")
        return first, second
    orders = explore({"transfer": transfer(lab.client), "reader": reader}, start(table, a=100, b=100),
                     lambda _: True, consistency="dynamodb")
    assert outcomes(orders, "transfer", "reader") == model_outcomes(
        [model_transfer, model_reader], {"a": 100, "b": 100})


def test_an_index_read_after_the_write_may_still_miss_it_but_never_unsees_it(lab):
    users = fresh_table("p28-gsi-consistency", lab)
    user = {"PK": "USER#1", "SK": "PROFILE", "GSI1PK": "EMAIL#a", "GSI1SK": "USER#1"}

    def reset():
        users.delete_item(Key={"PK": "USER#1", "SK": "PROFILE"})

    def sign_up_then_look():
        users.put_item(Item=user)
        return tuple(len(users.query(IndexName="GSI1", KeyConditionExpression="GSI1PK = :e",
                                     ExpressionAttributeValues={":e": "EMAIL#a"})["Items"]) for _ in range(2))
    orders = explore({"ana": sign_up_then_look}, reset, lambda _: True, consistency="dynamodb")
    assert outcomes(orders, "ana") == {((1, 1),), ((0, 1),), ((0, 0),)}


def test_a_retry_loop_is_never_starved_by_an_ongoing_transaction(lab, table):
    def retrying_withdraw():
        for attempt in range(WINDOW + 1):
            try:
                table.update_item(Key=A, UpdateExpression="SET balance = balance - :a",
                                  ExpressionAttributeValues={":a": 5})
                return attempt
            except lab.client.exceptions.TransactionConflictException:
                continue
        return "gave up"

    def model_retrying_withdraw():
        for attempt in range(WINDOW + 1):
            answer = yield ("write", "a", lambda v: v - 5)
            if answer == "OK":
                return attempt
        return "gave up"
    orders = explore({"transfer": transfer(lab.client), "withdraw": retrying_withdraw}, start(table, a=100, b=100),
                     lambda _: True, consistency="dynamodb")
    assert outcomes(orders, "transfer", "withdraw") == model_outcomes(
        [model_transfer, model_retrying_withdraw], {"a": 100, "b": 100})
    assert {withdraw for _, withdraw in outcomes(orders, "transfer", "withdraw")} == set(range(WINDOW + 1))


def test_a_version_checked_retry_loop_on_default_reads_ends_a_write_is_missed_only_so_long(table):
    def withdraw():  # a fresh read the other client's write follows, then STALE_READS stale ones, then a fresh one
        for attempt in range(STALE_READS + 2):
            seen = balance(table, A)
            try:
                table.update_item(Key=A, UpdateExpression="SET balance = :new", ConditionExpression="balance = :seen",
                                  ExpressionAttributeValues={":new": seen - 10, ":seen": seen})
                return attempt
            except table.meta.client.exceptions.ConditionalCheckFailedException:
                continue
        return "gave up"

    orders = explore({"alice": withdraw, "bob": withdraw}, start(table, a=100), lambda _: True,
                     consistency="dynamodb")
    assert "gave up" not in {result for pair in outcomes(orders, "alice", "bob") for result in pair}
    assert balance(table, A, consistent=True) == 80


def batch_transfer(client):
    """Set A to 90 and B to 110 in one BatchWriteItem; 'OK'."""
    def send():
        client.batch_write_item(RequestItems={TABLE: [{"PutRequest": {"Item": {**key, "balance": balance}}}
                                                      for key, balance in ((A, 90), (B, 110))]})
        return "OK"
    return send


def model_batch_transfer():
    yield ("batchwrite", [("a", lambda _: 90), ("b", lambda _: 110)])
    return "OK"


def test_a_batch_write_is_seen_in_part_even_by_transact_get_and_conflicts_with_nothing(lab, table):
    def transact_get():
        found = lab.client.transact_get_items(TransactItems=[{"Get": {"TableName": TABLE, "Key": key}} for key in (A, B)])
        return tuple(int(response["Item"]["balance"]) for response in found["Responses"])

    def batch_get():
        found = lab.client.batch_get_item(RequestItems={TABLE: {"Keys": [A, B], "ConsistentRead": True}})
        return tuple(int(item["balance"]) for item in sorted(found["Responses"][TABLE], key=lambda i: i["PK"]))

    def model_read_both(kind):
        def program():
            return (yield (kind, ["a", "b"]))
        return program
    reset = start(table, a=100, b=100)
    for reader, kind in ((transact_get, "transactget"), (batch_get, "batch")):
        orders = explore({"writer": batch_transfer(lab.client), "reader": reader}, reset, lambda _: True,
                         consistency="dynamodb")
        expected = model_outcomes([model_batch_transfer, model_read_both(kind)], {"a": 100, "b": 100})
        assert outcomes(orders, "writer", "reader") == expected
        assert {reader for _, reader in expected} == {(100, 100), (90, 100), (100, 110), (90, 110)}


def test_two_batch_writes_interleave_item_by_item_a_dirty_write(lab, table):
    def batch(value):
        def send():
            lab.client.batch_write_item(RequestItems={TABLE: [{"PutRequest": {"Item": {**key, "balance": value}}}
                                                              for key in (A, B)]})
            return "OK"
        return send
    finals = []

    def final_state(_):
        finals.append((balance(table, A, consistent=True), balance(table, B, consistent=True)))
        return True
    orders = explore({"alice": batch(1), "bob": batch(2)}, start(table, a=100, b=100), final_state,
                     consistency="dynamodb")
    assert set(finals) == {(1, 1), (2, 2), (1, 2), (2, 1)}, "each item's two puts land in either order"
    assert len(orders) == len(finals)
    assert outcomes(orders, "alice", "bob") == model_outcomes(
        [lambda: (yield ("batchwrite", [("a", lambda _: 1), ("b", lambda _: 1)])) or "OK",
         lambda: (yield ("batchwrite", [("a", lambda _: 2), ("b", lambda _: 2)])) or "OK"], {"a": 100, "b": 100})


def test_a_write_to_an_item_of_an_ongoing_batch_lands_before_or_after_the_batch_s_write(lab, table):
    def withdraw():
        table.update_item(Key=B, UpdateExpression="SET balance = balance - :a", ExpressionAttributeValues={":a": 5})
        return balance(table, B, consistent=True)

    def model_withdraw():
        yield ("write", "b", lambda v: v - 5)
        return (yield ("read", "b", "strong"))
    orders = explore({"writer": batch_transfer(lab.client), "withdraw": withdraw}, start(table, a=100, b=100),
                     lambda _: True, consistency="dynamodb")
    expected = model_outcomes([model_batch_transfer, model_withdraw], {"a": 100, "b": 100})
    assert outcomes(orders, "writer", "withdraw") == expected
    assert {withdraw for _, withdraw in expected} == {95, 105, 110}, "before the batch's put, after it, or overwritten"
    assert "TransactionConflictException" not in {answer for answers in orders["answers"] for answer in answers}


def test_the_last_item_made_visible_ends_the_transaction_so_it_never_commutes_with_one_that_meets_it(lab, table):
    def debit(account):
        def send():
            try:
                lab.client.transact_write_items(TransactItems=[
                    {"Update": {"TableName": TABLE, "Key": A, "UpdateExpression": "SET balance = balance - :a",
                                "ExpressionAttributeValues": {":a": 10}}},
                    {"Put": {"TableName": TABLE, "Item": {"PK": f"ACCOUNT#{account}", "SK": "BALANCE", "balance": 1}}}])
                return "OK"
            except lab.client.exceptions.TransactionCanceledException:
                return "cancelled"
        return send
    orders = explore({"alice": debit("b"), "bob": debit("c")}, start(table, a=100), lambda _: True)
    results = [(row["alice"], row["bob"]) for row in orders["results"]]
    assert len(orders) == 4, ("the other meets it before the last item (cancelled) or after it (OK), for each first; "
                              "which item is made visible last is no behaviour of its own: the other is refused alike")
    assert (results.count(("OK", "cancelled")), results.count(("cancelled", "OK")), results.count(("OK", "OK"))) == (
        1, 1, 2)


def test_two_attempts_that_meet_an_ongoing_transaction_count_once_however_its_items_came_between(lab, table):
    def withdraw_twice():
        answers = []
        for _ in range(2):
            try:
                table.update_item(Key=A, UpdateExpression="SET balance = balance - :a", ExpressionAttributeValues={":a": 5})
                return (*answers, "OK")
            except lab.client.exceptions.TransactionConflictException:
                answers.append("TransactionConflictException")
        return tuple(answers)

    def model_withdraw_twice():
        answers = []
        for _ in range(2):
            answer = yield ("write", "a", lambda v: v - 5)
            answers.append(answer)
            if answer == "OK":
                break
        return tuple(answers)
    orders = explore({"withdraw": withdraw_twice, "transfer": transfer(lab.client)}, start(table, a=100, b=100),
                     lambda _: True, consistency="dynamodb")
    refused = ("TransactionConflictException", "TransactionConflictException")
    assert outcomes(orders, "withdraw", "transfer") == model_outcomes(
        [model_withdraw_twice, model_transfer], {"a": 100, "b": 100})
    assert len(orders) == 4, "before the transfer, both refused, one refused then after it, after it"
    assert [row["withdraw"] for row in orders["results"]].count(refused) == 1, \
        "refused whatever the transfer's items hold: wherever its first item came, one behaviour"


def test_a_client_s_own_requests_never_swap_when_the_point_of_no_return_is_found(lab, table):
    def writer():
        table.put_item(Item={**A, "balance": 1})

    def reader():
        return balance(table, A), balance(table, A)
    orders = explore({"writer": writer, "reader": reader}, start(table, a=0),
                     lambda results: results["reader"] != (1, 0))
    broken = orders[~orders["ok"]]
    assert len(broken) == 1 and list(broken["doomed_at"]) == [len(broken["schedule"].iloc[0]) - 1]
