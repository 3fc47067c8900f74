"""A failing order's Why is told from what happened in it: its history's anomaly, its cycle in the clients' words and
the change that breaks it (helpers.explore.frames.diagnosis), or the fault, Region or refusal its steps show
(helpers.checks.why)."""
from botocore.exceptions import ClientError

from helpers import explore
from helpers.checks.why import why
from helpers.explore.frames import diagnosis, item_words
from helpers.lab.tables import fresh_table

TABLE = "p22-conditional-writes"
SEAT = {"PK": "SEAT#12A", "SK": "SEAT"}


def racy_booking(table, name, condition=False):
    """A client that reads the seat and, if free, puts it booked (with `condition`, only if still free)."""
    def book():
        if "holder" in table.get_item(Key=SEAT, ConsistentRead=True)["Item"]:
            return False
        extra = {"ConditionExpression": "attribute_not_exists(holder)"} if condition else {}
        try:
            table.put_item(Item={**SEAT, "holder": name}, **extra)
        except ClientError as error:
            if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
            return False
        return True
    return book


def explored_booking(condition=False):
    """Every order of alice's and bob's racy bookings of a free seat: one of them must be told True."""
    table = fresh_table(TABLE)
    clients = {name: racy_booking(table, name, condition) for name in ("alice", "bob")}
    return explore.explore(clients, lambda: table.put_item(Item=SEAT),
                           lambda results: sum(result is True for result in results.values()) == 1)


def test_a_racy_read_then_write_is_told_as_a_lost_update_in_exactly_its_failing_orders(lab):
    frame = explored_booking()
    told = [diagnosis(order["history"], order["steps"], order["requests"]) for _, order in frame.iterrows()]
    assert [found is not None for found in told] == list(~frame["ok"])
    name, walk, fix = told[list(frame["ok"]).index(False)]
    assert name == "a lost update (Elle: lost-update, a G-single-item cycle)"
    first, second, third = walk.split("; ")
    assert first.endswith("'s GetItem read SEAT#12A/SEAT as the setup left it")
    assert second.endswith("'s PutItem wrote a newer version")
    assert third.endswith("'s PutItem wrote SEAT#12A/SEAT over alice's") or third.endswith("over bob's")
    assert fix.startswith("A read and then a write are two requests: put the check in the write itself")


def test_the_checkers_why_of_a_lost_update_names_it_and_its_fix(lab):
    order = explored_booking().query("not ok").iloc[0]
    told = why(order)
    assert told.startswith(". Why: ") and ": a lost update (Elle: lost-update, a G-single-item cycle). " in told


def test_a_read_then_conditional_write_shows_no_anomaly(lab):
    frame = explored_booking(condition=True)
    assert frame["ok"].all()
    assert all(diagnosis(order["history"], order["steps"], order["requests"]) is None
               for _, order in frame.iterrows())


def order_of(steps, answers, results, replies=None):
    """A failing order as an exploration's frame row has it, from (label, request summary) steps, without history."""
    return {"steps": [label for label, _ in steps], "requests": [summary for _, summary in steps], "answers": answers,
            "replies": replies or answers, "results": results, "history": None}


def test_a_crash_between_two_writes_is_told_at_the_request_it_followed():
    order = order_of([("alice: PutItem", "PutItem {PK: 'A'}"),
                      ("alice: PutItem (then the client crashes)", "PutItem {PK: 'B'}")],
                     ["OK", "OK"], {"alice": explore.Crashed("PutItem")})
    assert why(order).startswith(". Why: alice died right after its PutItem, which stayed applied, and before its "
                                 "next request, which never happened. Writes that belong together must be one request")


def test_a_resent_write_applied_twice_is_told_so_and_a_resend_refused_by_its_own_copy_differently():
    twice = order_of([("alice: UpdateItem (response lost, the SDK retries)", "UpdateItem {PK: 'T'} ADD total 30"),
                      ("alice: UpdateItem", "UpdateItem {PK: 'T'} ADD total 30")], ["OK", "OK"], {"alice": True})
    refused = order_of([("alice: PutItem (response lost, the SDK retries)", "PutItem {PK: 'C'} if x"),
                        ("alice: PutItem", "PutItem {PK: 'C'} if x")],
                       ["OK", "ConditionalCheckFailedException"], {"alice": False})
    assert "the SDK sent it again and it was applied a second time. A write must refuse its own repeat" in why(twice)
    assert "the SDK sent it again and it was refused (ConditionalCheckFailedException) by that first copy" in why(
        refused)


def test_an_error_answered_as_a_refusal_is_told_as_hidden():
    order = order_of([("alice: TransactWriteItems", "TransactWriteItems [Put]")], ["ValidationException"],
                     {"alice": False})
    assert why(order, meanings={"ValidationException": "an MRSC table refuses transactions"}) == (
        ". Why: alice's TransactWriteItems was answered ValidationException (an MRSC table refuses transactions), and "
        "alice's call returned False as if it were a refusal. Catch only ConditionalCheckFailedException, and let "
        "every other error raise")


def test_an_item_is_named_by_its_key_values_and_region_a_long_value_by_its_end():
    assert item_words("{PK: 'SEAT#12A'} in p34-bookings (eu-west-1)") == "SEAT#12A in eu-west-1"
    assert item_words("{id: 'fn#" + "a" * 40 + "b1c2'}") == "…" + "a" * 8 + "b1c2"
