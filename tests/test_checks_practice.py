"""The practice checkers (notebooks 30-32) pass the notebooks' solutions and catch their starting code and classic bugs.

Each also fails a solution that swallows every error, naming the error it hid (ResourceNotFoundException).
"""
import pytest
from botocore.exceptions import ClientError

from helpers.checks.practice import (DAY_TOTAL, SEAT, STOCK, WALLET, check_add_tag, check_book_seat,
                                     check_book_seat_retry, check_reserve, check_signup, check_withdraw,
                                     check_withdraw_once, check_withdraw_today)
from support import broken_by_a_crash_alone, notebook_functions, refused, swallowing, hidden_missing_table

EXERCISES = [  # (notebook, starting code, solution, checker)
    ("30-seat-booking.ipynb", "book_seat", "book_seat_solution", check_book_seat),
    ("30-seat-booking.ipynb", "book_seat", "book_seat_solution", check_book_seat_retry),
    ("31-three-conditions.ipynb", "signup", "signup_solution", check_signup),
    ("31-three-conditions.ipynb", "reserve", "reserve_solution", check_reserve),
    ("31-three-conditions.ipynb", "add_tag", "add_tag_solution", check_add_tag),
    ("32-wallet-interview.ipynb", "withdraw", "withdraw_solution", check_withdraw),
    ("32-wallet-interview.ipynb", "withdraw_once", "withdraw_once_solution", check_withdraw_once),
    ("32-wallet-interview.ipynb", "withdraw_today", "withdraw_today_solution", check_withdraw_today),
]
IDS = [checker.__name__ for _, _, _, checker in EXERCISES]
EXERCISE_NAMES = {check_book_seat: "book_seat", check_book_seat_retry: "book_seat (retried)", check_signup: "signup",
                  check_reserve: "reserve", check_add_tag: "add_tag", check_withdraw: "withdraw",
                  check_withdraw_once: "withdraw (idempotent)", check_withdraw_today: "withdraw_today"}
TWO = "distinct orders in which alice and bob's requests can reach DynamoDB)"
FIRST_FAILING_ORDER = {  # checker: what its exhaustive stage reports about the notebook's starting code, every run
    check_book_seat: "alice: GetItem -> bob: GetItem -> alice: PutItem -> bob: PutItem: 2 clients were told they hold "
                     f"seat 14C (alice, bob); the table says bob (in 2 of the 4 {TWO}",
    check_book_seat_retry: "alice: GetItem -> alice (retry): GetItem -> carol: GetItem -> alice: PutItem -> "
                           "alice (retry): PutItem -> carol: PutItem: 2 clients were told they hold seat 14C (alice, "
                           "carol); the table says carol (in 14 of the 21 distinct orders in which alice, alice "
                           "(retry) and carol's requests can reach DynamoDB)",
    check_signup: "alice: GetItem -> bob: GetItem -> alice: PutItem -> bob: PutItem: u_4821 was told 'u_4821' owns "
                  f"ana@example.com; the table says 'u_4822' (in 2 of the 4 {TWO}",
    check_reserve: "alice: GetItem -> bob: GetItem -> alice: UpdateItem -> bob: UpdateItem: stock 7 after 2 "
                   f"reservations of 2 from 9, which leave 5 (in 2 of the 4 {TWO}",
    check_add_tag: "alice: GetItem -> bob: GetItem -> alice: PutItem -> bob: PutItem: tags ['tag-00'] were lost: the "
                   f"profile holds ['tag-07'] after adding ['tag-00', 'tag-07'] (in 2 of the 4 {TWO}",
    check_withdraw: "alice: GetItem -> bob: GetItem -> alice: UpdateItem -> bob: UpdateItem: balance -60 after 2 "
                    f"withdrawals of 80 from 100 (in 2 of the 4 {TWO}",
    check_withdraw_once: "alice: GetItem -> alice: UpdateItem -> alice: PutItem -> bob: GetItem -> bob: UpdateItem -> "
                         f"bob: PutItem: w-0 was paid 2 times (its request was sent 2 times) (in 8 of the 8 {TWO}",
    check_withdraw_today: "alice: GetItem -> bob: GetItem -> alice: UpdateItem -> bob: UpdateItem: 240 withdrawn on "
                          "2026-12-01 by 2 withdrawals told True; the daily limit is 200 (in 2 of the 4 "
                          f"{TWO}",
}
FIRST_WHY = {  # checker: the Why its first failing order is told (the anomaly or fault it shows)
    check_add_tag: (
        "bob's GetItem read user#ana/PROFILE as the setup left it; alice's PutItem wrote a newer version; bob's "
        "PutItem wrote user#ana/PROFILE over alice's: a lost update (Elle: lost-update, a G-single-item cycle). A "
        "read and then a write are two requests: put the check in the write itself, a ConditionExpression "
        "(attribute_not_exists, or version = :read), so that it is refused once another write came between"),
    check_book_seat: (
        "bob's GetItem read seat#14C/SEAT as the setup left it; alice's PutItem wrote a newer version; bob's "
        "PutItem wrote seat#14C/SEAT over alice's: a lost update (Elle: lost-update, a G-single-item cycle). A "
        "read and then a write are two requests: put the check in the write itself, a ConditionExpression "
        "(attribute_not_exists, or version = :read), so that it is refused once another write came between"),
    check_book_seat_retry: (
        "alice (retry)'s GetItem read seat#14C/SEAT as the setup left it; alice's PutItem wrote a newer version; "
        "alice (retry)'s PutItem wrote seat#14C/SEAT over alice's: a lost update (Elle: lost-update, a "
        "G-single-item cycle). A read and then a write are two requests: put the check in the write itself, a "
        "ConditionExpression (attribute_not_exists, or version = :read), so that it is refused once another write "
        "came between"),
    check_reserve: (
        "bob's GetItem read sku#KB-104/STOCK as the setup left it; alice's UpdateItem wrote a newer version; "
        "bob's UpdateItem wrote sku#KB-104/STOCK over alice's: a lost update (Elle: lost-update, a G-single-item "
        "cycle). A read and then a write are two requests: put the check in the write itself, a "
        "ConditionExpression (attribute_not_exists, or version = :read), so that it is refused once another write "
        "came between"),
    check_signup: (
        "bob's GetItem read email#ana@example.com/EMAIL as absent; alice's PutItem wrote a newer version; bob's "
        "PutItem wrote email#ana@example.com/EMAIL over alice's: a lost update (Elle: lost-update, a "
        "G-single-item cycle). A read and then a write are two requests: put the check in the write itself, a "
        "ConditionExpression (attribute_not_exists, or version = :read), so that it is refused once another write "
        "came between"),
    check_withdraw: (
        "bob's GetItem read WALLET#alice/WALLET as the setup left it; alice's UpdateItem wrote a newer version; "
        "bob's UpdateItem wrote WALLET#alice/WALLET over alice's: a lost update (Elle: lost-update, a "
        "G-single-item cycle). A read and then a write are two requests: put the check in the write itself, a "
        "ConditionExpression (attribute_not_exists, or version = :read), so that it is refused once another write "
        "came between"),
    check_withdraw_once: (
        "bob's UpdateItem wrote WALLET#alice/WALLET after alice's UpdateItem had, and nothing refused it: it had "
        "no ConditionExpression; its GetItem before it was a request of its own, and another client's write came "
        "between them. Put the check in the write's ConditionExpression (attribute_not_exists on what must be "
        "absent, or version = :read) and answer from its refusal"),
    check_withdraw_today: (
        "bob's GetItem read WALLET#alice/DAY#2026-12-01 as absent; alice's UpdateItem wrote a newer version; "
        "bob's UpdateItem wrote WALLET#alice/DAY#2026-12-01 over alice's: a lost update (Elle: lost-update, a "
        "G-single-item cycle). A read and then a write are two requests: put the check in the write itself, a "
        "ConditionExpression (attribute_not_exists, or version = :read), so that it is refused once another write "
        "came between"),
}
ORDERS_OF_SOLUTIONS = {check_book_seat: 4, check_book_seat_retry: 12, check_signup: 2, check_reserve: 2,
                       check_add_tag: 4, check_withdraw: 2, check_withdraw_once: 8, check_withdraw_today: 2}
FAULTS_INCLUDED = {check_withdraw_once: ", and in all 132 distinct orders with lost responses and crashes"}


@pytest.mark.parametrize("notebook, starting, solution, checker", EXERCISES, ids=IDS)
def test_the_notebooks_solution_passes_both_stages(lab, notebook, starting, solution, checker):
    correct, = notebook_functions(notebook, solution)
    report = checker(correct)
    assert report.passed, report.message
    assert str(report).startswith("PASS ")
    assert report.message.endswith(f"and in all {ORDERS_OF_SOLUTIONS[checker]} distinct orders of the exhaustive stage"
                                   f"{FAULTS_INCLUDED.get(checker, '')}")


@pytest.mark.parametrize("notebook, starting, solution, checker", EXERCISES, ids=IDS)
def test_the_exhaustive_stage_catches_the_starting_code_in_the_same_order(lab, run, notebook, starting, solution,
                                                                         checker):
    broken, = notebook_functions(notebook, starting)
    report = checker(broken)
    assert not report.passed
    assert report.message == f"{FIRST_FAILING_ORDER[checker]}. Why: {FIRST_WHY[checker]}"
    steps = report.orders[~report.orders["ok"]].iloc[0]["steps"]
    assert report.schedule == tuple(step.split(": ")[0] for step in steps)
    assert report.message.startswith(" -> ".join(steps) + ": ")


def book_seat_without_deciding_again(table, seat, who):
    current = table.get_item(Key=SEAT, ConsistentRead=True)["Item"]
    if current["holder"] is not None:
        return current["holder"] == who
    try:
        table.put_item(Item={**current, "holder": who, "version": current["version"] + 1},
                       ConditionExpression="version = :seen", ExpressionAttributeValues={":seen": current["version"]})
        return True
    except ClientError as error:
        if not refused(error):
            raise
        return False


def signup_ignoring_case(table, email, user_id):
    try:
        table.put_item(Item={"PK": f"email#{email}", "SK": "EMAIL", "userId": user_id},
                       ConditionExpression="attribute_not_exists(PK)")
        return user_id
    except ClientError as error:
        if not refused(error):
            raise
        return table.get_item(Key={"PK": f"email#{email}", "SK": "EMAIL"}, ConsistentRead=True)["Item"]["userId"]


def reserve_then_read_the_stock(table, sku, qty):
    try:
        table.update_item(Key=STOCK, UpdateExpression="SET stock = stock - :q", ConditionExpression="stock >= :q",
                          ExpressionAttributeValues={":q": qty})
    except ClientError as error:
        if not refused(error):
            raise
        return None
    return table.get_item(Key=STOCK, ConsistentRead=True)["Item"]["stock"]


def add_tag_giving_up_after_a_conflict(table, tag):
    key = {"PK": "user#ana", "SK": "PROFILE"}
    profile = table.get_item(Key=key, ConsistentRead=True)["Item"]
    try:
        table.put_item(Item={**profile, "tags": sorted(set(profile["tags"]) | {tag}), "version": profile["version"] + 1},
                       ConditionExpression="version = :seen", ExpressionAttributeValues={":seen": profile["version"]})
    except ClientError as error:
        if not refused(error):
            raise


def withdraw_writing_the_computed_balance(table, amount):
    balance = table.get_item(Key=WALLET, ConsistentRead=True)["Item"]["balance"]
    if balance < amount:
        return False
    table.put_item(Item={**WALLET, "balance": balance - amount})
    return True


def withdraw_with_the_condition_only(table, withdrawal_id, amount):
    try:
        table.update_item(Key=WALLET, UpdateExpression="SET balance = balance - :amt",
                          ConditionExpression="balance >= :amt", ExpressionAttributeValues={":amt": amount})
        return "paid"
    except ClientError as error:
        if not refused(error):
            raise
        return "insufficient funds"


def withdraw_in_two_writes(table, withdrawal_id, amount):
    if withdraw_with_the_condition_only(table, withdrawal_id, amount) != "paid":
        return "insufficient funds"
    try:
        table.put_item(Item={"PK": WALLET["PK"], "SK": f"WITHDRAWAL#{withdrawal_id}", "amount": amount},
                       ConditionExpression="attribute_not_exists(PK)")
        return "paid"
    except ClientError as error:
        if not refused(error):
            raise
        return "already paid"


def withdraw_blaming_the_balance_first(table, withdrawal_id, amount):
    try:
        table.meta.client.transact_write_items(TransactItems=[
            {"Update": {"TableName": table.name, "Key": WALLET, "UpdateExpression": "SET balance = balance - :amt",
                        "ConditionExpression": "balance >= :amt", "ExpressionAttributeValues": {":amt": amount}}},
            {"Put": {"TableName": table.name,
                     "Item": {"PK": WALLET["PK"], "SK": f"WITHDRAWAL#{withdrawal_id}", "amount": amount},
                     "ConditionExpression": "attribute_not_exists(PK)"}},
        ])
        return "paid"
    except ClientError as error:
        wallet, _ = (reason["Code"] for reason in error.response["CancellationReasons"])
        return "insufficient funds" if wallet == "ConditionalCheckFailed" else "already paid"


def test_a_booking_that_does_not_decide_again_is_race_safe_but_fails_its_retried_holder(lab):
    assert check_book_seat(book_seat_without_deciding_again).passed
    report = check_book_seat_retry(book_seat_without_deciding_again)
    assert not report.passed
    assert report.message.startswith("alice: GetItem -> alice (retry): GetItem -> alice: PutItem -> alice (retry): "
                                     "PutItem -> carol: GetItem: alice holds seat 14C but was told it is taken on 1 "
                                     "of its 2 attempts "
                                     "(in 4 of the 12 distinct orders")


def withdraw_today_without_a_first_withdrawal(table, day, amount):
    try:
        table.update_item(Key=DAY_TOTAL, UpdateExpression="SET withdrawn = if_not_exists(withdrawn, :zero) + :amt",
                          ConditionExpression="withdrawn <= :room",
                          ExpressionAttributeValues={":zero": 0, ":amt": amount, ":room": 200 - amount})
        return True
    except ClientError as error:
        if not refused(error):
            raise
        return False


def withdraw_recording_first(table, withdrawal_id, amount):
    """Records the ledger item, then debits, and removes the record when the debit is refused: right whenever every
    request is answered once, broken by a lost response the SDK resends or a crash between the writes."""
    record = {"PK": WALLET["PK"], "SK": f"WITHDRAWAL#{withdrawal_id}"}
    try:
        table.put_item(Item={**record, "amount": amount}, ConditionExpression="attribute_not_exists(PK)")
    except ClientError as error:
        if not refused(error):
            raise
        return "already paid"
    try:
        table.update_item(Key=WALLET, UpdateExpression="SET balance = balance - :amt", ConditionExpression="balance >= :amt",
                          ExpressionAttributeValues={":amt": amount})
    except ClientError as error:
        if not refused(error):
            raise
        table.delete_item(Key=record)
        return "insufficient funds"
    return "paid"


def withdraw_today_writing_the_computed_total(table, day, amount):
    so_far = table.get_item(Key=DAY_TOTAL, ConsistentRead=True).get("Item", {}).get("withdrawn", 0)
    if so_far + amount > 200:
        return False
    table.put_item(Item={**DAY_TOTAL, "withdrawn": so_far + amount})
    return True


CLASSIC_BUGS = [  # (checker, a classic bug, how its report starts: the first order that breaks, and what broke)
    (check_signup, signup_ignoring_case, "alice: PutItem -> bob: PutItem: 2 items claim ana@example.com "
                                         "(email#Ana@Example.com, email#ana@example.com)"),
    (check_reserve, reserve_then_read_the_stock, "alice: UpdateItem -> bob: UpdateItem -> alice: GetItem -> bob: "
                                                 "GetItem: buyers were told [5, 5] left; each must hear the stock its "
                                                 "own reservation left ([5, 7])"),
    (check_add_tag, add_tag_giving_up_after_a_conflict, "alice: GetItem -> bob: GetItem -> alice: PutItem -> bob: "
                                                        "PutItem: tags ['tag-07'] were lost"),
    (check_withdraw, withdraw_writing_the_computed_balance, "alice: GetItem -> bob: GetItem -> alice: PutItem -> bob: "
                                                            "PutItem: 2 withdrawals of 80 paid out 160 but the balance "
                                                            "went down by 80 (a lost update)"),
    (check_withdraw_once, withdraw_with_the_condition_only, "alice: UpdateItem -> bob: UpdateItem: w-0 was paid 2 "
                                                            "times"),
    (check_withdraw_once, withdraw_in_two_writes, "alice: UpdateItem -> alice: PutItem -> bob: UpdateItem -> bob: "
                                                  "PutItem: balance 40 after 1 recorded withdrawal of 30 from 100"),
    (check_withdraw_today, withdraw_today_without_a_first_withdrawal, "alice: UpdateItem -> bob: UpdateItem: a "
                                                                      "withdrawal of 120 was refused, yet the day "
                                                                      "ended with 0 of 200 withdrawn"),
    (check_withdraw_today, withdraw_today_writing_the_computed_total, "alice: GetItem -> bob: GetItem -> alice: "
                                                                      "PutItem -> bob: PutItem: the withdrawals told "
                                                                      "True add up to 240, but the day's total is 120"),
]


@pytest.mark.parametrize("checker, broken, finding", CLASSIC_BUGS, ids=[bug.__name__ for _, bug, _ in CLASSIC_BUGS])
def test_classic_bugs_are_caught_in_their_first_failing_order(lab, checker, broken, finding):
    report = checker(broken)
    assert not report.passed
    assert report.message.startswith(finding)


def test_a_withdrawal_recorded_then_debited_is_caught_by_a_resent_debit(lab):
    if lab.kind != "embedded":
        pytest.skip("the explorer loses responses on the lab server only")
    report = check_withdraw_once(withdraw_recording_first)
    assert not report.passed
    assert report.message == (
        "alice: PutItem -> alice: UpdateItem (response lost, the SDK retries) -> alice: UpdateItem -> bob: PutItem: "
        "balance 40 after 1 recorded withdrawal of 30 from 100 (in 20 of the 32 distinct orders in which alice and "
        "bob's requests can reach DynamoDB). Why: "
        "alice's UpdateItem was applied and its response lost; the SDK sent it again and it was applied a second "
        "time. A write must refuse its own repeat: a condition on something unique to the request (an id it "
        "writes), or TransactWriteItems with a ClientRequestToken")
    assert broken_by_a_crash_alone(report), "a crash between the record and the debit breaks it too"
    panel = report.replay()
    assert panel.history[1] == "alice: UpdateItem (response lost, the SDK retries)" and panel.stepper.ok is False


@pytest.mark.stress
def test_a_retry_blamed_on_the_balance_is_caught_by_the_concurrent_stage(lab, run):
    """This answer lies two ways: a retry of a paid withdrawal hears 'insufficient funds', and a transaction cancelled
    for a conflict (transactions in flight, as the concurrent stage runs them) hears 'already paid' though nothing was
    paid. Which one a run meets first depends on timing; either is reported."""
    report = check_withdraw_once(withdraw_blaming_the_balance_first)
    assert not report.passed
    assert ("its retry was told 'insufficient funds' instead of 'already paid' (with " in report.message
            or "was not paid, yet an attempt was told ['already paid'] (with " in report.message)


def test_the_example_from_the_issue_reads_as_promised(lab):
    broken, = notebook_functions("32-wallet-interview.ipynb", "withdraw")
    report = check_withdraw(broken)
    assert report.message.startswith("alice: GetItem -> bob: GetItem -> alice: UpdateItem -> bob: UpdateItem: "
                                     "balance -60 after 2 withdrawals of 80 from 100")
    assert report.figure().layout.title.text == "2 of 4 distinct orders break withdraw"
    panel = report.replay()
    assert panel.history == ["alice: GetItem", "bob: GetItem", "alice: UpdateItem", "bob: UpdateItem"]
    assert panel.stepper.ok is False
    assert panel.verdict == "all done: alice → True, bob → True · the invariant is BROKEN"


@pytest.mark.parametrize("notebook, starting, solution, checker", EXERCISES, ids=IDS)
def test_a_solution_that_swallows_every_error_fails_naming_the_error_it_hid(lab, notebook, starting, solution,
                                                                             checker):
    correct, = notebook_functions(notebook, solution)
    report = checker(swallowing(correct))
    assert not report.passed
    assert report.message.startswith(hidden_missing_table(EXERCISE_NAMES[checker]))


def book_seat_if_no_holder_attribute(table, seat, who):
    """Broken: the free seat is stored with holder: NULL, and a NULL attribute exists."""
    try:
        table.update_item(Key=SEAT, UpdateExpression="SET holder = :who", ConditionExpression="attribute_not_exists(holder)",
                          ExpressionAttributeValues={":who": who})
        return True
    except ClientError as error:
        if not refused(error):
            raise
        return False


def reserve_refusing_the_last(table, sku, qty):
    """Broken: `stock > :q` refuses the reservation that takes the last units."""
    try:
        return table.update_item(Key=STOCK, UpdateExpression="SET stock = stock - :q", ConditionExpression="stock > :q",
                                 ExpressionAttributeValues={":q": qty}, ReturnValues="UPDATED_NEW")["Attributes"]["stock"]
    except ClientError as error:
        if not refused(error):
            raise
        return None


def withdraw_refusing_to_empty(table, amount):
    """Broken: `balance > :amt` refuses the withdrawal that empties the wallet."""
    try:
        table.update_item(Key=WALLET, UpdateExpression="SET balance = balance - :amt", ConditionExpression="balance > :amt",
                          ExpressionAttributeValues={":amt": amount})
        return True
    except ClientError as error:
        if not refused(error):
            raise
        return False


def withdraw_read_then_put(table, amount):
    """Broken: the condition stops an overdraw, but the write sets the balance it computed from an earlier read."""
    balance = table.get_item(Key=WALLET, ConsistentRead=True)["Item"]["balance"]
    try:
        table.update_item(Key=WALLET, UpdateExpression="SET balance = :left", ConditionExpression="balance >= :amt",
                          ExpressionAttributeValues={":left": balance - amount, ":amt": amount})
        return True
    except ClientError as error:
        if not refused(error):
            raise
        return False


def test_a_null_holder_taken_for_a_missing_one_is_named(lab):
    report = check_book_seat(book_seat_if_no_holder_attribute)
    assert not report.passed
    assert "nobody holds seat 14C after 2 booking attempts, each told it is taken. Why: the free seat is stored with " \
           "holder: NULL, and a NULL attribute exists" in report.message


def test_a_reservation_refused_at_exactly_zero_is_caught(lab):
    report = check_reserve(reserve_refusing_the_last)
    assert not report.passed
    assert report.message == ("3 of 5 buyers were turned away with 3 in stock: a reservation that leaves exactly 0 "
                              "must succeed (stock >= :q, not stock > :q) (with 5 concurrent calls)")


def test_a_withdrawal_refused_at_exactly_zero_is_caught(lab):
    report = check_withdraw(withdraw_refusing_to_empty)
    assert not report.passed
    assert report.message == ("1 of 2 withdrawals of 50 from a balance of 100 were paid; exactly 2 can be: a "
                              "withdrawal that leaves exactly 0 must be paid (balance >= :amt, not balance > :amt) "
                              "(with 2 concurrent calls)")


def test_a_lost_update_shows_when_two_withdrawals_fit(lab):
    report = check_withdraw(withdraw_read_then_put)
    assert not report.passed
    assert "(a lost update)" in report.message
