"""Every explored order is a history in Elle's rw-register shape, made of what the lab server says each request read
and wrote: version numbers per item, None for an item absent since the reset, a refused request "fail" with nothing
in it, a lost response "info", and a client's requests grouped into attempts where a refusal starts one over."""
import pytest
from botocore.exceptions import ClientError

from helpers import connect, fresh_table, tracing
from helpers.explore import anomalies, explore, why
from helpers.explore.histories import attempts

COUNTER = {"PK": "POST#1", "SK": "STATS"}
SEAT = {"PK": "SEAT#12A", "SK": "SEAT"}
C = "{PK: 'POST#1', SK: 'STATS'}"
S = "{PK: 'SEAT#12A', SK: 'SEAT'}"


@pytest.fixture(scope="module")
def table():
    connect(quiet=True)
    with tracing(False):
        return fresh_table("p24-atomic-counters")


def done(recorded, process=None):
    """The completion records of a history (of one process), without the reset's."""
    return [op for op in recorded["ops"] if op["type"] != "invoke" and op["process"] != "reset"
            and (process is None or op["process"] == process)]


def explored(clients, reset, faults=(), consistency="dynamodb"):
    with tracing(False):
        return explore(clients, reset, lambda results: True, faults=faults, consistency=consistency)


def test_a_racy_read_then_put_reads_and_writes_numbered_versions_and_its_attempts_pair_them(table):
    def reset():
        table.put_item(Item={**COUNTER, "views": 0})

    def racy():
        views = table.get_item(Key=COUNTER)["Item"]["views"]
        table.put_item(Item={**COUNTER, "views": views + 1})

    frame = explored({"alice": racy, "bob": racy}, reset)
    assert all(recorded["version_order"] == {C: [0, 1, 2]} for recorded in frame["history"])
    both_read_0 = [recorded for recorded in frame["history"]
                   if [op["value"] for op in done(recorded) if op["value"][0][0] == "r"] == [[["r", C, 0]]] * 2]
    assert both_read_0, "some order has both clients read the version the reset left"
    recorded = both_read_0[0]
    assert [{**op, "index": 0} for op in recorded["ops"][:2]] == [
        {"index": 0, "process": "reset", "type": kind, "f": "txn", "value": [["w", C, 0]], "requests": ["reset()"]}
        for kind in ("invoke", "ok")]
    assert [op["index"] for op in recorded["ops"]] == list(range(len(recorded["ops"])))
    invoked = [op for op in recorded["ops"] if op["type"] == "invoke" and op["process"] != "reset"]
    assert [value for op in invoked for f, _, value in op["value"] if f == "r"] == [None, None]
    grouped = attempts(recorded)
    assert sorted(op["value"] for op in done(grouped)) == [[["r", C, 0], ["w", C, 1]], [["r", C, 0], ["w", C, 2]]]


def test_an_update_reads_the_version_it_changes_and_a_plain_put_reads_nothing(table):
    def reset():
        table.put_item(Item={**COUNTER, "views": 0})

    frame = explored({"alice": lambda: table.update_item(Key=COUNTER, UpdateExpression="ADD #v :one",
                                                         ExpressionAttributeNames={"#v": "views"},
                                                         ExpressionAttributeValues={":one": 1}),
                      "bob": lambda: table.put_item(Item={**COUNTER, "views": 7})}, reset)
    for recorded in frame["history"]:
        alice, = done(recorded, "alice")
        bob, = done(recorded, "bob")
        assert bob["value"] == [["w", C, bob["value"][0][2]]]
        read, written = alice["value"]
        assert read[0] == "r" and written == ["w", C, read[2] + 1]


def test_a_refused_write_is_a_failed_operation_and_starts_a_new_attempt(table):
    def reset():
        table.delete_item(Key=SEAT)

    def book(name):
        def booking():
            for _ in range(2):
                seat = table.get_item(Key=SEAT, ConsistentRead=True).get("Item")
                if seat is not None:
                    return seat["holder"] == name
                try:
                    table.put_item(Item={**SEAT, "holder": name}, ConditionExpression="attribute_not_exists(PK)")
                    return True
                except ClientError as error:
                    if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                        raise
            return False
        return booking

    frame = explored({"alice": book("alice"), "bob": book("bob")}, reset)
    refused = [recorded for recorded in frame["history"] if any(op["type"] == "fail" for op in recorded["ops"])]
    assert refused and all(op["value"] == [] for recorded in refused for op in recorded["ops"]
                           if op["type"] == "fail")
    recorded = refused[0]
    assert all(op["process"] != "reset" for op in recorded["ops"]), "the seat was absent at the reset"
    loser = next(op["process"] for op in recorded["ops"] if op["type"] == "fail")
    assert [op["value"][0] for op in done(recorded, loser) if op["type"] == "ok"][0] == ["r", S, None]
    grouped = done(attempts(recorded), loser)
    assert len(grouped) == 2, "the refusal ends the first attempt, the re-read begins the second"
    assert grouped[0]["value"] == [["r", S, None]]
    assert grouped[1]["value"] == [["r", S, 1]]


def test_a_lost_response_is_info_with_what_it_wrote_and_its_retry_writes_on_top(table):
    def reset():
        table.put_item(Item={**COUNTER, "views": 0})

    def add():
        table.update_item(Key=COUNTER, UpdateExpression="ADD #v :one", ExpressionAttributeNames={"#v": "views"},
                          ExpressionAttributeValues={":one": 1})

    frame = explored({"alice": add}, reset, faults=("lost_response",))
    lost = [recorded for recorded in frame["history"] if any(op["type"] == "info" for op in recorded["ops"])]
    assert len(lost) == 1
    info, retry = done(lost[0], "alice")
    assert info["type"] == "info" and info["value"] == [["r", C, 0], ["w", C, 1]]
    assert retry["type"] == "ok" and retry["value"] == [["r", C, 1], ["w", C, 2]]
    assert attempts(lost[0])["ops"][-1]["type"] == "info"


def test_a_transaction_is_done_once_its_last_item_is_visible_and_a_batch_read_reads_item_by_item(table):
    x, y = {"PK": "PAIR", "SK": "x"}, {"PK": "PAIR", "SK": "y"}

    def reset():
        for key in (x, y):
            table.put_item(Item={**key, "n": 0})

    def transfer():
        table.meta.client.transact_write_items(TransactItems=[
            {"Update": {"TableName": table.name, "Key": key, "UpdateExpression": "ADD n :one",
                        "ExpressionAttributeValues": {":one": 1}}} for key in (x, y)])

    def both():
        return table.meta.client.batch_get_item(RequestItems={table.name: {"Keys": [x, y]}})

    frame = explored({"alice": transfer, "bob": both}, reset)
    names = {"{PK: 'PAIR', SK: 'x'}", "{PK: 'PAIR', SK: 'y'}"}
    torn = []
    for recorded, steps in zip(frame["history"], frame["steps"]):
        alice, = done(recorded, "alice")
        bob, = done(recorded, "bob")
        assert {key for _, key, _ in bob["value"]} == names
        assert alice["step"] == max(place for place, step in enumerate(steps) if step.startswith("alice"))
        if len({value for _, _, value in bob["value"]}) == 2:
            torn.append(recorded)
    assert torn, "some order's BatchGetItem reads x after the transaction and y before (read-committed)"


def test_off_the_lab_servers_model_there_is_no_history(table):
    def reset():
        table.put_item(Item={**COUNTER, "views": 0})

    frame = explored({"alice": lambda: table.get_item(Key=COUNTER)}, reset, consistency="strong")
    assert list(frame["history"]) == [None]


def test_anomalies_name_the_lost_update_in_every_order_that_loses_one_and_nothing_where_none_is_lost(table):
    def reset():
        table.put_item(Item={**COUNTER, "views": 0})

    def racy():
        views = table.get_item(Key=COUNTER)["Item"]["views"]
        table.put_item(Item={**COUNTER, "views": views + 1})

    def counted(results):
        return table.get_item(Key=COUNTER, ConsistentRead=True)["Item"]["views"] == 2

    with tracing(False):
        frame = explore({"alice": racy, "bob": racy}, reset, counted)
    named = anomalies(frame)
    assert [("lost-update" in found) for found in named] == [not ok for ok in frame["ok"]]
    assert all(found == () for found, ok in zip(named, frame["ok"]) if ok)
    stale = [place for place, steps in enumerate(frame["steps"]) if any("stale" in step for step in steps)]
    assert stale and all("G-single-item-realtime" in anomalies(frame, unit="request")[place] for place in stale)
    assert all(found == () for place, found in enumerate(anomalies(frame, unit="request")) if place not in stale)
    told = why(frame["history"][next(place for place, ok in enumerate(frame["ok"]) if not ok)])
    assert "lost-update" in told and "alice's GetItem then PutItem" in told and "bob's GetItem then PutItem" in told


def test_a_version_checked_retry_shows_no_anomaly_in_any_order(table):
    def reset():
        table.put_item(Item={**COUNTER, "views": 0, "version": 0})

    def increment():
        for _ in range(3):
            item = table.get_item(Key=COUNTER, ConsistentRead=True)["Item"]
            try:
                table.put_item(Item={**COUNTER, "views": item["views"] + 1, "version": item["version"] + 1},
                               ConditionExpression="version = :v", ExpressionAttributeValues={":v": item["version"]})
                return True
            except ClientError as error:
                if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                    raise
        return False

    with tracing(False):
        frame = explore({"alice": increment, "bob": increment}, reset, lambda results: True)
    assert any(any("ConditionalCheckFailed" in answer for answer in answers) for answers in frame["answers"])
    assert set(anomalies(frame)) == {()}
    assert why(frame["history"][0]) == ""


def test_a_history_is_analysed_by_attempt_or_by_request_only(table):
    def reset():
        table.put_item(Item={**COUNTER, "views": 0})

    frame = explored({"alice": lambda: table.get_item(Key=COUNTER)}, reset)
    with pytest.raises(ValueError, match="unit must be"):
        anomalies(frame, unit="client")
