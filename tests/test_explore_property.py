"""The explorer is complete: on small random scenarios it finds exactly the outcomes DynamoDB's documents allow.

Hypothesis draws scenarios of 2-3 clients making 1-3 requests each over 1-3 items; each is explored for real
(helpers/explore/ against the lab server, consistency="dynamodb") and enumerated by a brute-force model written
here from DynamoDB's documents alone, sharing nothing with the lab, not even its bounds (no STALE_STEPS, no WINDOW):

- Each item has a leader and two followers (DynamoDB's three copies; "leader" as in DynamoDB's USENIX ATC 2022
  paper). Every successful write goes to the leader; each follower holds a prefix of the item's successful writes
  and moves forward at any moment, trailing it for as long as it likes. A strongly consistent read, a condition
  and TransactGetItems use the leader; an eventually consistent read (the default) is answered by any copy. A
  refused or cancelled write is in no copy. ("DynamoDB read consistency", Developer Guide.)
- TransactWriteItems checks every condition against the leaders at once (one fails: TransactionCanceledException,
  nothing written); naming an item of an ongoing transaction it is cancelled too. Otherwise it is ongoing and its
  items become visible one at a time, in any order, however many other requests pass meanwhile; its client's
  call returns after the last. While it is ongoing a PutItem, UpdateItem (or a BatchWriteItem) naming one of its
  items meets TransactionConflictException, a TransactGetItems naming one is cancelled, and a GetItem reads the
  item's last visible version. ("Amazon DynamoDB Transactions: How it works".)
- BatchGetItem is read-committed: each of its items is read at a moment of its own, in any order, other clients'
  requests coming between, from the leader or any copy as its ConsistentRead says.
- BatchWriteItem: each put atomic, the batch not. Each takes effect at a moment of its own, in any order; a write
  to one of its items before then lands first.
- A global secondary index keeps a copy of each item of its own, trailing the table's (a prefix of its writes
  moving forward); an index Query reads those copies ("All reads from GSIs and streams are eventually consistent"),
  all at one moment, as the lab does (DynamoDB calls Query read-committed, which could let it read each item's copy
  at a moment of its own: with two index reads of one item in a scenario, that allows more).
- Faults, where a scenario asks for them: a write's response is lost (it was applied; the SDK sends the same
  request again, a new request evaluated afresh), or the client crashes right after a write, applied or refused
  (its remaining requests never run; a transaction or batch it started still completes). Each at most once per
  order.

Not drawn, where DynamoDB's documents leave the answer open: a BatchWriteItem and a TransactWriteItems naming the
same item (a batch's put taking effect while the transaction holds the item conflicts, but what would the batch
answer?), and TransactWriteItems with faults (boto3 gives it a ClientRequestToken, so the SDK's resend is not
evaluated afresh: it is answered as the first was, or TransactionInProgressException while that one is ongoing).

An outcome is each client's answers (the value read, "OK", or DynamoDB's error code, "CRASH" where it crashed)
and every item's final value, read strongly once all are done. The two SETS of outcomes must be equal. The lab
bounds how long a copy may trail and a transaction stay ongoing; scenarios this small (at most three requests a
client) must never reach those bounds, or the explorer hides behaviour DynamoDB shows.

The named tests at the end are issue 33's three smallest scenarios the explorer got wrong (its bounds hid them),
and two its sleep sets once got wrong. CI runs MAX_TOTAL requests a scenario, scenarios of at most MAX_ORDERS orders
(by the model's count), under a fixed seed; `make stress` (LAB_STRESS_RUNS) runs larger ones, more of them.
"""
import itertools
import os
from dataclasses import dataclass

import pytest
from botocore.exceptions import ClientError
from hypothesis import assume, given, reject, settings
from hypothesis import strategies as st

from helpers import fresh_table
from helpers.explore import Crashed, TooManyOrders, explore
from support import PROPERTY_SETTINGS

TABLE = "p28-gsi-consistency"  # PK/SK, and a global secondary index GSI1 (GSI1PK, GSI1SK)
INDEX = "GSI1"
NAMES = ("a", "b", "c")
MAX_TOTAL = 4  # requests in all per random scenario, in CI
MAX_ORDERS = 60  # a random scenario the model can run in more orders is not explored, in CI (each costs ~40 ms)
MAX_SCHEDULES = 1000  # the explorer's own cap (it runs somewhat more or fewer orders than the model counts)
CONFLICT = "TransactionConflictException"
CANCELLED = "TransactionCanceledException"
CONDITION_FAILED = "ConditionalCheckFailedException"
CRASH = "CRASH"
STRESS_RUNS = int(os.environ.get("LAB_STRESS_RUNS", "1"))  # as tests/conftest.py reads it

pytestmark = pytest.mark.usefixtures("knobs_off")


# Scenarios. A request is a tuple:
#   ("get", item, "eventual"|"strong")            GetItem, default or ConsistentRead
#   ("put", item, value)                          PutItem
#   ("update", item, value, condition)            UpdateItem SET v = value, if condition: ("v =", old) or
#                                                 "attribute_not_exists"
#   ("transact", ((kind, item, value, condition), ...))   TransactWriteItems of 1-2 Put/Update actions on distinct
#                                                 items, each with a condition or None
#   ("transact_get", (item, ...))                 TransactGetItems
#   ("batch_get", (item, item), "eventual"|"strong")  BatchGetItem of two items
#   ("batch_write", ((item, value), (item, value)))   BatchWriteItem of two puts
#   ("query",)                                    Query on the index: every item, as (item, value) pairs

@dataclass(frozen=True)
class Scenario:
    """The items at the start (value, or None: no such item), each client's requests, and whether faults are on."""

    items: tuple  # ((name, value or None), ...)
    clients: tuple  # ((request, ...), ...), one per client
    faults: bool = False

    @property
    def names(self):
        return tuple(name for name, _ in self.items)

    @property
    def client_names(self):
        return tuple(f"c{place}" for place in range(len(self.clients)))

    def __repr__(self):
        clients = ", ".join(f"c{place}={list(requests)}" for place, requests in enumerate(self.clients))
        return f"Scenario(start={dict(self.items)}, {clients}{', faults' if self.faults else ''})"


def written_items(request):
    """The items a write request names."""
    kind = request[0]
    if kind in ("put", "update"):
        return {request[1]}
    if kind == "transact":
        return {action[1] for action in request[1]}
    if kind == "batch_write":
        return {item for item, _ in request[1]}
    return set()


# The model: every state reachable under the rules above, by depth-first search over explicit states.

READY, DONE = ("ready",), ("done",)


def initial(scenario):
    """The model's first state, and {item name: its place}.

    A state is (items, clients, faults). An item: (its successful writes as values, oldest first, None for no item;
    its two followers' positions in them, sorted; its index copy's position). A client: (the place of its next
    request, its phase, its answers so far). faults: (a response may still be lost, a client may still crash)."""
    items = tuple(((value,), (0, 0), 0) for _, value in scenario.items)
    clients = tuple(normal((0, READY, ()), program) for program in scenario.clients)
    place_of = {name: place for place, name in enumerate(scenario.names)}
    return (items, clients, (scenario.faults, scenario.faults)), place_of


def model_outcomes(scenario):
    """The set of outcomes DynamoDB allows the scenario: (each client's answers, each item's final value)."""
    start, place_of = initial(scenario)
    seen, stack, found = {start}, [start], set()
    while stack:
        state = stack.pop()
        following = list(successors(state, scenario.clients, place_of))
        if not following:
            items, clients, _ = state
            assert all(phase == DONE for _, phase, _ in clients), state
            found.add((tuple(answers for _, _, answers in clients), tuple(history[-1] for history, _, _ in items)))
        for new in following:
            if new not in seen:
                seen.add(new)
                stack.append(new)
    return found


def model_orders(scenario):
    """How many orders the model's steps can come in (distinct next states counted once): a rough measure of what
    exploring the scenario costs, to leave out the scenarios too large to explore in a test run."""
    start, place_of = initial(scenario)
    counted = {}

    def count(state):
        if state not in counted:
            following = set(successors(state, scenario.clients, place_of))
            counted[state] = sum(count(new) for new in following) if following else 1
        return counted[state]
    return count(start)


def normal(client, program):
    """A client whose requests are all answered is done."""
    step, phase, answers = client
    return (step, DONE, answers) if phase == READY and step == len(program) else client


def locked(clients):
    """The items of the ongoing transactions."""
    return {item for _, phase, _ in clients if phase[0] == "transact" for item in phase[1]}


def leader(items, item):
    return items[item][0][-1]


def append(items, item, value):
    """The items after a successful write of `value` to `item` (on the leader)."""
    history, followers, index = items[item]
    return items[:item] + ((history + (value,), followers, index),) + items[item + 1:]


def eventually(items, item):
    """(items, value) for each answer an eventually consistent read of `item` may get: the leader's, or a follower's
    after it has moved forward any number of writes (it moves only forward, never past the leader)."""
    history, followers, index = items[item]
    yield items, history[-1]
    for which in (0, 1):
        for position in range(followers[which], len(history)):
            moved = tuple(sorted((position, followers[1 - which])))
            yield items[:item] + ((history, moved, index),) + items[item + 1:], history[position]


def read(items, item, consistency):
    """(items, value) for each answer a GetItem (or one item of a BatchGetItem) may get."""
    if consistency == "strong":
        return [(items, leader(items, item))]
    return list(eventually(items, item))


def index_reads(items, names):
    """(items, answer) for each answer a Query on the index may get: every item from its index copy, moved forward
    any number of writes; items absent there are not in the answer."""
    per_item = []
    for item, (history, followers, index) in enumerate(items):
        per_item.append([(position, history[position]) for position in range(index, len(history))])
    for combination in itertools.product(*per_item):
        moved = tuple((history, followers, position)
                      for (history, followers, _), (position, _) in zip(items, combination))
        yield moved, tuple((names[item], value) for item, (_, value) in enumerate(combination) if value is not None)


def holds(condition, value):
    """A write's condition on the leader's value (None: no item)."""
    if condition is None:
        return True
    if condition == "attribute_not_exists":
        return value is None
    return value == condition[1]


def successors(state, programs, place_of):
    """Every state one step on: a client sends its next request (with a fault, where allowed), or an item of an
    ongoing transaction becomes visible, a put of a batch takes effect, an item of a BatchGetItem is read."""
    items, clients, faults = state
    for place, (step, phase, answers) in enumerate(clients):
        program = programs[place]

        def client(new_client, new_items=items, new_faults=faults):
            changed = clients[:place] + (normal(new_client, program),) + clients[place + 1:]
            return new_items, changed, new_faults

        kind = phase[0]
        if kind == "ready":
            yield from send(state, place, program[step], place_of, client)
        elif kind == "transact":  # ("transact", its items, items still hidden as ((item, value), ...), then)
            _, named, hidden, then = phase
            for pending in hidden:
                rest = tuple(other for other in hidden if other != pending)
                new_items = append(items, *pending)
                yield client(finish(step, answers, then) if not rest else (step, (kind, named, rest, then), answers),
                             new_items)
        elif kind == "batch_write":  # ("batch_write", puts still to take effect, then)
            _, pending_puts, then = phase
            for pending in pending_puts:
                rest = tuple(other for other in pending_puts if other != pending)
                new_items = append(items, *pending)
                yield client(finish(step, answers, then) if not rest else (step, (kind, rest, then), answers),
                             new_items)
        elif kind == "batch_get":  # ("batch_get", places still to read, values read so far)
            _, unread, values = phase
            _, keys, consistency = program[step]
            for where in unread:
                rest = tuple(other for other in unread if other != where)
                for new_items, value in read(items, place_of[keys[where]], consistency):
                    got = values[:where] + (value,) + values[where + 1:]
                    yield client((step + 1, READY, answers + (got,)) if not rest else
                                 (step, (kind, rest, got), answers), new_items)


def finish(step, answers, then):
    """The client once its transaction or batch is done: answered, crashed, or about to resend it (response lost)."""
    if then == "answer":
        return (step + 1, READY, answers + ("OK",))
    if then == "crash":
        return (step, DONE, answers + (CRASH,))
    return (step, READY, answers)  # "resend": the SDK sends the same request again


def send(state, place, request, place_of, client):
    """Every state after the client at `place` sends `request`."""
    items, clients, faults = state
    step, _, answers = clients[place]
    kind = request[0]
    busy = locked(clients)
    if kind == "get":
        for new_items, value in read(items, place_of[request[1]], request[2]):
            yield client((step + 1, READY, answers + (value,)), new_items)
        return
    if kind == "transact_get":
        keys = [place_of[name] for name in request[1]]
        answer = CANCELLED if busy & set(keys) else tuple(leader(items, item) for item in keys)
        yield client((step + 1, READY, answers + (answer,)))
        return
    if kind == "batch_get":
        yield client((step, ("batch_get", tuple(range(len(request[1]))), (None,) * len(request[1])), answers))
        return
    if kind == "query":
        for new_items, answer in index_reads(items, [name for name in place_of]):
            yield client((step + 1, READY, answers + (answer,)), new_items)
        return
    # A write: what it does, then how its answer reaches the client (answered, lost and resent, or crashed).
    new_items, answer, phase = items, None, None
    if kind == "put":
        item = place_of[request[1]]
        if item in busy:
            answer = CONFLICT
        else:
            new_items, answer = append(items, item, request[2]), "OK"
    elif kind == "update":
        item = place_of[request[1]]
        if item in busy:
            answer = CONFLICT
        elif not holds(request[3], leader(items, item)):
            answer = CONDITION_FAILED
        else:
            new_items, answer = append(items, item, request[2]), "OK"
    elif kind == "transact":
        actions = [(place_of[name], value, condition) for _, name, value, condition in request[1]]
        if busy & {item for item, _, _ in actions} or not all(
                holds(condition, leader(items, item)) for item, _, condition in actions):
            answer = CANCELLED
        else:
            phase = ("transact", tuple(item for item, _, _ in actions),
                     tuple((item, value) for item, value, _ in actions))
    elif kind == "batch_write":
        puts = tuple((place_of[name], value) for name, value in request[1])
        if busy & {item for item, _ in puts}:
            answer = CONFLICT
        else:
            phase = ("batch_write", puts)
    else:
        raise ValueError(f"unknown request {request!r}")
    lose, crash = faults
    endings = [("answer", faults)]
    if lose:
        assert kind != "transact", "a lost TransactWriteItems would be resent with the same ClientRequestToken"
        endings.append(("resend", (False, crash)))
    if crash:
        endings.append(("crash", (lose, False)))
    for then, new_faults in endings:
        if phase is not None:
            yield client((step, phase + (then,), answers), new_items, new_faults)
        elif then == "answer":
            yield client((step + 1, READY, answers + (answer,)), new_items, new_faults)
        else:
            yield client(finish(step, answers, then), new_items, new_faults)


# The scenario run by the real explorer, through boto3, against the lab server.

def key(name):
    return {"PK": f"ITEM#{name}", "SK": "V"}


def full_item(name, value):
    """The item as every write here leaves it: in the index (GSI1PK "ALL", sorted by name) with its value v."""
    return {**key(name), "GSI1PK": "ALL", "GSI1SK": name, "v": value}


def value_of(item):
    return None if item is None else int(item["v"])


def condition_fields(condition, values):
    """The ConditionExpression of a condition, its values added to `values`."""
    if condition is None:
        return {}
    if condition == "attribute_not_exists":
        return {"ConditionExpression": "attribute_not_exists(v)"}
    values[":old"] = condition[1]
    return {"ConditionExpression": "v = :old"}


def update_fields(name, value, condition):
    """UpdateItem's (or a transaction's Update's) fields: SET the value, keeping the item in the index."""
    values = {":new": value, ":all": "ALL", ":sk": name}
    fields = {"Key": key(name), "UpdateExpression": "SET v = :new, GSI1PK = :all, GSI1SK = :sk"}
    fields.update(condition_fields(condition, values))
    return {**fields, "ExpressionAttributeValues": values}


def put_fields(name, value, condition):
    values = {}
    fields = {"Item": full_item(name, value), **condition_fields(condition, values)}
    return {**fields, "ExpressionAttributeValues": values} if values else fields


def perform(client, request):
    """Send one request through the lab's boto3 client (it takes and gives plain Python values, as a Table does);
    what DynamoDB answered, as the model writes it."""
    kind = request[0]
    try:
        if kind == "get":
            found = client.get_item(TableName=TABLE, Key=key(request[1]), ConsistentRead=request[2] == "strong")
            return value_of(found.get("Item"))
        if kind == "put":
            client.put_item(TableName=TABLE, Item=full_item(request[1], request[2]))
        elif kind == "update":
            client.update_item(TableName=TABLE, **update_fields(*request[1:]))
        elif kind == "transact":
            client.transact_write_items(TransactItems=[
                {"Put": {"TableName": TABLE, **put_fields(name, value, condition)}} if action == "put" else
                {"Update": {"TableName": TABLE, **update_fields(name, value, condition)}}
                for action, name, value, condition in request[1]])
        elif kind == "transact_get":
            found = client.transact_get_items(TransactItems=[{"Get": {"TableName": TABLE, "Key": key(name)}}
                                                             for name in request[1]])
            return tuple(value_of(response.get("Item")) for response in found["Responses"])
        elif kind == "batch_get":
            found = client.batch_get_item(RequestItems={TABLE: {"Keys": [key(name) for name in request[1]],
                                                                "ConsistentRead": request[2] == "strong"}})
            assert not found.get("UnprocessedKeys"), found
            by_key = {item["PK"]: value_of(item) for item in found["Responses"][TABLE]}
            return tuple(by_key.get(f"ITEM#{name}") for name in request[1])
        elif kind == "batch_write":
            done = client.batch_write_item(RequestItems={TABLE: [{"PutRequest": {"Item": full_item(name, value)}}
                                                                 for name, value in request[1]]})
            assert not done.get("UnprocessedItems"), done
        elif kind == "query":
            found = client.query(TableName=TABLE, IndexName=INDEX, KeyConditionExpression="GSI1PK = :all",
                                 ExpressionAttributeValues={":all": "ALL"})
            return tuple((item["GSI1SK"], value_of(item)) for item in found["Items"])
        else:
            raise ValueError(f"unknown request {request!r}")
    except ClientError as error:
        return error.response["Error"]["Code"]
    return "OK"


def start_items(client, scenario):
    """Put the scenario's items as they start (delete those that start absent)."""
    start = dict(scenario.items)
    for name in NAMES:
        if start.get(name) is None:
            client.delete_item(TableName=TABLE, Key=key(name))
        else:
            client.put_item(TableName=TABLE, Item=full_item(name, start[name]))


def explored_outcomes(lab, scenario, max_schedules=MAX_SCHEDULES):
    """The set of outcomes the explorer finds, and how many orders it ran."""
    client = lab.client
    logs = {name: [] for name in scenario.client_names}
    found = []

    def program(name, requests):
        def run():
            for request in requests:
                logs[name].append(perform(client, request))
        return run

    def reset():
        for log in logs.values():
            log.clear()
        start_items(client, scenario)

    def check(results):
        answers = []
        for name in scenario.client_names:
            result = results[name]
            if isinstance(result, Crashed):
                answers.append(tuple(logs[name]) + (CRASH,))
            elif result is None:
                answers.append(tuple(logs[name]))
            else:
                answers.append(tuple(logs[name]) + (f"unexpected: {result!r}",))
        final = tuple(value_of(client.get_item(TableName=TABLE, Key=key(name), ConsistentRead=True).get("Item"))
                      for name in scenario.names)
        found.append((tuple(answers), final))
        return True

    clients = {name: program(name, requests) for name, requests in zip(scenario.client_names, scenario.clients)}
    orders = explore(clients, reset, check, consistency="dynamodb", max_schedules=max_schedules, lab=lab,
                     faults=("lost_response", "crash") if scenario.faults else ())
    return set(found), len(orders)


def compare(lab, scenario, max_schedules=MAX_SCHEDULES):
    """Explore the scenario and enumerate the model; fail with what each found that the other did not."""
    expected = model_outcomes(scenario)
    explored, orders = explored_outcomes(lab, scenario, max_schedules)
    missing, extra = expected - explored, explored - expected
    assert not missing and not extra, (
        f"{scenario!r}: {orders} orders explored, {len(explored)} outcomes; the model's: {len(expected)}"
        f"\n  outcomes DynamoDB allows that the explorer never showed: {sorted(missing, key=repr)}"
        f"\n  outcomes the explorer showed that DynamoDB forbids: {sorted(extra, key=repr)}")
    return expected


@pytest.fixture
def table(lab):
    return fresh_table(TABLE, lab)


# Random scenarios.

def conditions(values=st.integers(0, 2)):
    return st.one_of(st.just("attribute_not_exists"), values.map(lambda old: ("v =", old)))


@st.composite
def requests(draw, names, faulted):
    """One request over the items `names`; with faults on, no TransactWriteItems (see the module's notes)."""
    kinds = ["get", "put", "update", "transact_get", "query"]
    if not faulted:
        kinds.append("transact")
    if len(names) >= 2:
        kinds += ["batch_get", "batch_write"]
    kind = draw(st.sampled_from(kinds))
    item, value = st.sampled_from(names), st.integers(1, 2)
    if kind == "get":
        return ("get", draw(item), draw(st.sampled_from(["eventual", "strong"])))
    if kind == "put":
        return ("put", draw(item), draw(value))
    if kind == "update":
        return ("update", draw(item), draw(value), draw(conditions()))
    if kind == "transact":
        named = draw(st.lists(item, min_size=1, max_size=2, unique=True))
        return ("transact", tuple((draw(st.sampled_from(["put", "update"])), name, draw(value),
                                   draw(st.none() | conditions())) for name in named))
    if kind == "transact_get":
        return ("transact_get", tuple(draw(st.lists(item, min_size=1, max_size=2, unique=True))))
    if kind == "batch_get":
        return ("batch_get", tuple(draw(st.lists(item, min_size=2, max_size=2, unique=True))),
                draw(st.sampled_from(["eventual", "strong"])))
    if kind == "batch_write":
        return ("batch_write", tuple((name, draw(value))
                                     for name in draw(st.lists(item, min_size=2, max_size=2, unique=True))))
    return ("query",)


@st.composite
def scenarios(draw, max_total=MAX_TOTAL):
    """2-3 clients of 1-3 requests each (1-2 with faults on), at most max_total requests in all, over 1-3 items."""
    names = NAMES[:draw(st.integers(1, 3))]
    start = tuple((name, draw(st.sampled_from([0, None]))) for name in names)
    faulted = draw(st.booleans())
    count = draw(st.integers(2, 3))
    clients, total = [], 0
    for place in range(count):
        room = max_total - total - (count - place - 1)
        length = draw(st.integers(1, min(2 if faulted else 3, room)))
        clients.append(tuple(draw(requests(names, faulted)) for _ in range(length)))
        total += length
    scenario = Scenario(start, tuple(clients), faulted)
    # A batch's put taking effect while a transaction holds its item is a conflict DynamoDB leaves unanswered
    # (the put fails, but what does the batch answer?): such scenarios are not drawn.
    batched = {item for requests_ in clients for request in requests_ if request[0] == "batch_write"
               for item in written_items(request)}
    transacted = {item for requests_ in clients for request in requests_ if request[0] == "transact"
                  for item in written_items(request)}
    assume(not batched & transacted)
    assume(any(written_items(request) for requests_ in clients for request in requests_))  # reads alone: no race
    return scenario


@settings(max_examples=40, **PROPERTY_SETTINGS)
@given(scenario=scenarios())
def test_the_explorer_finds_exactly_the_outcomes_dynamodb_allows(lab, table, scenario):
    assume(model_orders(scenario) <= MAX_ORDERS)
    compare_or_reject(lab, scenario)


@pytest.mark.stress
@pytest.mark.skipif(STRESS_RUNS == 1, reason="the long run is for `make stress` (LAB_STRESS_RUNS > 1)")
@settings(max_examples=5 * STRESS_RUNS, **PROPERTY_SETTINGS)
@given(scenario=scenarios(max_total=5))
def test_the_explorer_finds_exactly_the_outcomes_dynamodb_allows_in_larger_scenarios(lab, table, scenario):
    assume(model_orders(scenario) <= 5 * MAX_ORDERS)
    compare_or_reject(lab, scenario, max_schedules=5 * MAX_SCHEDULES)


def compare_or_reject(lab, scenario, max_schedules=MAX_SCHEDULES):
    """compare(), leaving out a scenario the explorer finds more orders in than it may run."""
    try:
        compare(lab, scenario, max_schedules)
    except TooManyOrders:
        reject()


# Issue 33's smallest scenarios, each the explorer once got wrong.

def test_issue_33_two_default_reads_beside_two_puts_may_see_the_second_put_then_neither(lab, table):
    """writer: put A=1, put A=2; reader: two default reads of A (no A at the start). The reader may see (2, None):
    its first read answered by the leader, its second by a follower that has taken neither put."""
    scenario = Scenario((("a", None),), ((("put", "a", 1), ("put", "a", 2)),
                                         (("get", "a", "eventual"), ("get", "a", "eventual"))))
    expected = compare(lab, scenario)
    assert ((("OK", "OK"), (2, None)), (2,)) in expected


def test_issue_33_a_client_may_miss_its_own_write_on_three_default_reads(lab, table):
    """One client puts A=1 then reads A three times by default (no A at the start): every copy but the leader may
    still trail, so even the third read may miss the client's own write."""
    scenario = Scenario((("a", None),), ((("put", "a", 1),) + (("get", "a", "eventual"),) * 3,))
    expected = compare(lab, scenario)
    assert (("OK", None, None, None),) in {answers for answers, _ in expected}


def test_issue_33_three_puts_may_all_meet_an_ongoing_transaction(lab, table):
    """c0: TransactWriteItems putting A=1 and B=1; c1: put A=2 three times. The transaction may stay ongoing
    through all three puts, each meeting TransactionConflictException."""
    scenario = Scenario((("a", 0), ("b", 0)),
                        ((("transact", (("put", "a", 1, None), ("put", "b", 1, None))),), (("put", "a", 2),) * 3))
    expected = compare(lab, scenario)
    assert ((("OK",), (CONFLICT,) * 3), (1, 1)) in expected


def test_issue_33_three_strong_reads_may_see_a_transaction_s_first_item_and_not_its_second_twice(lab, table):
    """c0: TransactWriteItems putting A=1 and B=1; c1: strong reads of A, B, B. The reader may get (1, 0, 0): A
    became visible, then both reads of B came before B did."""
    scenario = Scenario((("a", 0), ("b", 0)),
                        ((("transact", (("put", "a", 1, None), ("put", "b", 1, None))),),
                         (("get", "a", "strong"), ("get", "b", "strong"), ("get", "b", "strong"))))
    expected = compare(lab, scenario)
    assert ((("OK",), (1, 0, 0)), (1, 1)) in expected


def test_issue_33_a_strong_batch_get_may_read_a_before_and_b_after_two_puts(lab, table):
    """c0: put A=1, then put B=1; c1: a strongly consistent BatchGetItem of A and B. It may answer (0, 1): A read
    before the first put, B after the second (BatchGetItem reads each item at a moment of its own)."""
    scenario = Scenario((("a", 0), ("b", 0)),
                        ((("put", "a", 1), ("put", "b", 1)), (("batch_get", ("a", "b"), "strong"),)))
    expected = compare(lab, scenario)
    assert ((("OK", "OK"), ((0, 1),)), (1, 1)) in expected


# Orders the explorer's sleep sets (commit 765bad5) wrongly took to commute: making a transaction's last item visible
# ends it and frees every item it names, so it does not commute with a request naming any of them.

def test_a_transaction_get_after_a_transaction_has_ended_reads_what_it_wrote(lab, table):
    """c0: TransactGetItems of A; c1: TransactWriteItems putting A=1 and B=1. Once both items are visible the
    transaction has ended and c0 reads A=1 (making B visible does not commute with c0's read of A)."""
    scenario = Scenario((("a", 0), ("b", 0)),
                        ((("transact_get", ("a",)),), (("transact", (("put", "a", 1, None), ("put", "b", 1, None))),)))
    expected = compare(lab, scenario)
    assert ((((1,),), ("OK",)), (1, 1)) in expected


def test_a_transaction_s_last_item_becoming_visible_lets_a_later_transaction_on_its_other_item_through(lab, table):
    """c0: TransactWriteItems putting B=1 and C=1; c1: TransactWriteItems putting B=2; c2: put C=2. c2's put may meet
    c0 ongoing (B already visible), and c1 come once c0 has ended: (OK), (OK), (TransactionConflictException), B=2."""
    scenario = Scenario((("b", 0), ("c", 0)),
                        ((("transact", (("put", "b", 1, None), ("put", "c", 1, None))),),
                         (("transact", (("put", "b", 2, None),)),), (("put", "c", 2),)))
    expected = compare(lab, scenario)
    assert ((("OK",), ("OK",), (CONFLICT,)), (2, 1)) in expected
