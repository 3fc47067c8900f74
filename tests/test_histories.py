"""Every explored order is a history in Elle's rw-register shape, made of what the lab server says each request read
and wrote: version numbers per item, None for an item absent since the reset, a refused request "fail" with nothing
in it, a lost response "info", and a client's requests grouped into attempts where a refusal starts one over."""
import pytest
from botocore.exceptions import ClientError

from helpers import connect, fresh_table, tracing
from helpers.explore import anomalies, explore, why
from helpers.explore.histories import attempts
from helpers.tables import dissolve

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


MREC_TABLE, MRSC_TABLE = "p34-histories-mrec", "p34-histories-mrsc"
SEAT_KEY = {"KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
            "AttributeDefinitions": [{"AttributeName": "PK", "AttributeType": "S"},
                                     {"AttributeName": "SK", "AttributeType": "S"}],
            "BillingMode": "PAY_PER_REQUEST"}


def made_global(lab, name, regions, **update):
    """{Region: its client} of `regions` (the first the table's own) with `name` made a global table there, deleted
    again after the test (embedded server only)."""
    if lab.kind != "embedded":
        pytest.skip("global tables are modelled by the embedded lab server (DynamoDB Local has none)")
    clients = {region: lab.client_in(region) for region in regions}
    with tracing(False):
        dissolve(name, list(clients.values()))
        clients[regions[0]].create_table(TableName=name, **SEAT_KEY)
        clients[regions[0]].update_table(TableName=name, ReplicaUpdates=[{"Create": {"RegionName": regions[1]}}],
                                         **update)
        yield clients
        dissolve(name, list(clients.values()))


@pytest.fixture
def mrec(lab):
    """An MREC global table in us-east-1 and eu-west-1."""
    yield from made_global(lab, MREC_TABLE, ("us-east-1", "eu-west-1"))


@pytest.fixture
def mrsc(lab):
    """An MRSC global table in us-east-1 and us-west-2, its witness in us-east-2."""
    yield from made_global(lab, MRSC_TABLE, ("us-east-1", "us-west-2"), MultiRegionConsistency="STRONG",
                           GlobalTableWitnessUpdates=[{"Create": {"RegionName": "us-east-2"}}])


def booking_in(client, name, holder):
    """A client function: a PutItem of the seat if it does not exist yet, in the client's Region; 'OK' or the code."""
    def book():
        try:
            client.put_item(TableName=name, Item={**SEAT, "holder": holder},
                            ConditionExpression="attribute_not_exists(PK)")
            return "OK"
        except ClientError as error:
            return error.response["Error"]["Code"]
    return book


def seat_freed(clients, name):
    """A reset(): the seat absent in every Region (deleted in the first; the explorer lets every Region agree)."""
    first = next(iter(clients.values()))
    return lambda: first.delete_item(TableName=name, Key=SEAT)


GLOBAL_SEAT = "{PK: 'SEAT#12A', SK: 'SEAT'}"


def test_two_regions_conditional_puts_both_accepted_on_mrec_are_a_lost_update_whose_cycle_names_both_regions(mrec):
    clients = {"alice": booking_in(mrec["us-east-1"], MREC_TABLE, "alice"),
               "bob": booking_in(mrec["eu-west-1"], MREC_TABLE, "bob")}
    frame = explored(clients, seat_freed(mrec, MREC_TABLE))
    both = [place for place, results in enumerate(frame["results"]) if results == {"alice": "OK", "bob": "OK"}]
    assert both, "on MREC each Region's condition reads its own replica: both may find the seat free"
    for place in both:
        recorded = frame["history"][place]
        assert recorded["version_order"] == {GLOBAL_SEAT: [1, 2]}, "one item in every Region, its writes in order"
        assert sorted(op["value"] for op in done(recorded)) == [[["r", GLOBAL_SEAT, None], ["w", GLOBAL_SEAT, 1]],
                                                                 [["r", GLOBAL_SEAT, None], ["w", GLOBAL_SEAT, 2]]]
        assert {"lost-update", "G-single-item"} <= set(anomalies(frame, unit="request")[place])
    told = why(frame["history"][both[0]], unit="request")
    assert "alice's PutItem in us-east-1" in told and "bob's PutItem in eu-west-1" in told
    refused = [place for place, results in enumerate(frame["results"]) if "ConditionalCheckFailedException" in
               results.values()]
    assert refused and all(anomalies(frame, unit="request")[place] == () for place in refused)


def test_on_mrsc_the_second_region_s_conditional_put_is_refused_and_no_order_shows_an_anomaly(mrsc):
    clients = {"alice": booking_in(mrsc["us-east-1"], MRSC_TABLE, "alice"),
               "bob": booking_in(mrsc["us-west-2"], MRSC_TABLE, "bob")}
    frame = explored(clients, seat_freed(mrsc, MRSC_TABLE))
    assert all(sorted(results.values()) == ["ConditionalCheckFailedException", "OK"] for results in frame["results"])
    assert any("ReplicatedWriteConflictException" in answers for answers in frame["answers"])
    assert set(anomalies(frame, unit="request")) == {()} and set(anomalies(frame)) == {()}


def test_a_strong_read_of_a_replica_the_write_has_not_reached_reads_the_older_version_a_stale_read(mrec):
    us, eu = mrec["us-east-1"], mrec["eu-west-1"]

    def reset():
        us.put_item(TableName=MREC_TABLE, Item={**SEAT, "holder": "nobody"})

    clients = {"alice": lambda: us.put_item(TableName=MREC_TABLE, Item={**SEAT, "holder": "alice"}),
               "bob": lambda: eu.get_item(TableName=MREC_TABLE, Key=SEAT, ConsistentRead=True)["Item"]["holder"]}
    frame = explored(clients, reset)
    read = {place: done(recorded, "bob")[0]["value"] for place, recorded in enumerate(frame["history"])}
    assert set(map(str, read.values())) == {str([["r", GLOBAL_SEAT, 0]]), str([["r", GLOBAL_SEAT, 1]])}
    for place, results in enumerate(frame["results"]):
        assert read[place] == [["r", GLOBAL_SEAT, 1 if results["bob"] == "alice" else 0]]
    after = [place for place, steps in enumerate(frame["steps"]) if steps.index(next(
        step for step in steps if step.startswith("bob"))) > steps.index(next(
            step for step in steps if step.startswith("alice")))]
    stale = [place for place in after if frame["results"][place]["bob"] == "nobody"]
    assert stale, "some order has bob read eu-west-1 after alice's PutItem returned, before it arrived"
    assert all(anomalies(frame, unit="request")[place] == ("G-single-item-realtime",) for place in stale)
    assert all(anomalies(frame, unit="request")[place] == () for place in range(len(frame)) if place not in stale)
