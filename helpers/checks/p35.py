"""Checkers for notebook 35 (streams and consumers)."""
from decimal import Decimal

from .. import explore
from ..backend import connect
from ..consumer import EventSourceMapping
from ..tables import fresh_table
from ..trace import tracing
from . import Report, as_weak_as, exhaustive, hidden_error

PAYMENTS, TOTALS = "p35-payments", "p35-totals"
# The exhaustive stage's payments: two of alice's of the same amount (two payments, not one sent twice), one of bob's.
PAYMENTS_EXPLORED = (("pay-1", "alice", 30), ("pay-2", "bob", 20), ("pay-3", "alice", 30))
CUSTOMERS = ("alice", "bob", "carol")
STRESS_PAYMENTS = 24
STRESS_BATCH = 5
THRESHOLD = 100  # add_and_notify: a customer is told once, when their total first reaches it
# add_and_notify's exhaustive stage: alice reaches 100 with her second payment, and pays again after; bob never does.
NOTIFY_EXPLORED = (("pay-1", "alice", 60), ("pay-2", "bob", 30), ("pay-3", "alice", 50), ("pay-4", "alice", 20))
DIED_TWICE = (". Why: the invocation died after that write and before its batch was checkpointed, so the mapping "
              "handed the whole batch over again, and add_payment met records it had added already. Make each record's "
              "effect happen once per eventID, in the same write (a condition on the total) or in one transaction "
              "with a marker item")
DIED_BETWEEN = (". Why: the invocation died between add_payment's writes, leaving a record marked as done without its "
                "amount, so its second delivery added nothing. Mark it and add its amount in one write or one "
                "transaction")
RESENT = (". Why: the write's response was lost and the SDK sent it again: a write that is not refused the second "
          "time (a condition on the record's eventID) is applied twice")
SHARED = (". Why: two different payments were taken for one. Remember the record's eventID, which no two records "
          "share, not what two payments may have in common")
NEVER_TOLD = (". Why: the invocation died after the payment was added and before the customer was told; the second "
              "delivery found the payment added already and told nobody. Decide from the total, whoever added the "
              "payment: when it has reached 100, write the notification, once")
TOLD_AGAIN = (". Why: each notification is written under a key of its own, so a second delivery, or a later payment, "
              "tells the customer again. Key it by the customer (NOTIFY#<customer>), refused when it exists")


def payments_table(payments):
    """A fresh payments table (with a NEW_IMAGE stream) holding `payments`, and a fresh totals table; the totals
    table."""
    source = fresh_table(PAYMENTS)
    for payment_id, customer, amount in payments:
        source.put_item(Item={"PK": f"PAYMENT#{payment_id}", "customer": customer, "amount": amount})
    return fresh_table(TOTALS)


def stress_payments():
    """STRESS_PAYMENTS payments, the customers in turn, amounts 10, 20, ... (two of each customer's of one amount)."""
    return [(f"pay-{n}", CUSTOMERS[n % len(CUSTOMERS)], 10 * (1 + n % 6)) for n in range(STRESS_PAYMENTS)]


def expected_totals(payments):
    """{customer: the sum of their payments}."""
    totals = {}
    for _, customer, amount in payments:
        totals[customer] = totals.get(customer, 0) + amount
    return totals


def totals_problem(totals, payments):
    """What is wrong with the totals table after every payment was delivered, in words, or None."""
    found = {item["PK"]: item.get("total") for item in totals.scan(ConsistentRead=True)["Items"]}
    for customer, expected in expected_totals(payments).items():
        total = found.get(f"TOTAL#{customer}")
        if total != expected:
            theirs = ", ".join(f"{payment_id} {amount}" for payment_id, who, amount in payments if who == customer)
            what = ("a payment was added more than once" if isinstance(total, Decimal) and total > expected
                    else "a payment was never added")
            return f"TOTAL#{customer} holds {total}, but {customer}'s payments ({theirs}) add up to {expected}: {what}"
    return None


def stuck(deliveries):
    """The outcome of an invocation after which the mapping gave records up, or None."""
    gave_up = [outcome for outcome in deliveries["outcome"]
               if "discarded" in outcome or "Lambda would retry it" in outcome]
    return gave_up[0] if gave_up else None


def check_add_payment(add_payment):
    """Attack add_payment(table, record): a consumer of the payments stream hands it each record, and the running total
    of each customer (TOTAL#<customer>, attribute `total`) must be the sum of that customer's payments, though the
    mapping hands a batch over again after its invocation failed or died (attack_consumer says how)."""
    return attack_consumer("add_payment", add_payment, PAYMENTS_EXPLORED, totals_problem, why)


def check_add_and_notify(add_and_notify):
    """Attack add_and_notify(table, record): add_payment's running total, and one notification item (its PK starting
    with NOTIFY#<customer>) for each customer whose total has reached 100, none for the others (attack_consumer says
    how)."""
    return attack_consumer("add_and_notify", add_and_notify, NOTIFY_EXPLORED, notified_problem, why_told)


def attack_consumer(exercise, function, explored_payments, problem, reason):
    """Run function(table, record) on the payments stream as a consumer's handler runs it, for each record of a batch.
    Explored: `explored_payments` in one batch, in every behaviour, with the invocation dying after each write and (on
    the lab server) each write's response lost; then, as weak as DynamoDB, 24 payments in batches of 5, each batch's
    first invocation failing after the function did its work; last, the function meets a table that does not exist.
    problem(table, payments) says what is wrong after every payment was delivered (None if nothing); reason(report)
    ends a failing exhaustive report with its likely cause."""
    if not callable(function):
        raise TypeError(f"Pass your function itself (e.g. {exercise}), not {function!r}.")
    lab = connect(quiet=True)

    def consume(table, batch_size):
        """Drain the payments stream into `table`, as one Lambda function would; its invocations."""
        return EventSourceMapping(lab, PAYMENTS, each_record(function, table), batch_size=batch_size).drain()

    def invariant(table, log):
        if log["error"].iloc[0]:
            return f"the consumer stopped: {log['error'].iloc[0]}"
        given_up = stuck(log["result"].iloc[0]) if log["result"].iloc[0] is not None else None
        if given_up:
            return f"a batch kept failing, so its records were never added: {given_up}"
        return problem(table, explored_payments)

    faults = ("crash", "lost_response") if lab.kind == "embedded" else ("crash",)  # only the lab server loses one
    report, held = exhaustive(exercise, consume, lambda: payments_table(explored_payments),
                              lambda table: [(table, len(explored_payments))], invariant, faults=faults,
                              names=("the consumer",))
    if report:
        report.message += reason(report)
        return report
    with tracing(False):
        found, deliveries = stress(lab, function, problem)
        if found:
            stage = (f"{STRESS_PAYMENTS} payments in batches of {STRESS_BATCH}, each batch's first invocation failing "
                     "after its records were handled, as weak as DynamoDB")
            return Report(exercise, False, f"{found} ({stage})", STRESS_PAYMENTS, None, deliveries=deliveries)
        hidden = hidden_error(exercise, function, lambda: payments_table(explored_payments),
                              lambda table, n: [(table, sample_record(lab))])
    if hidden:
        return Report(exercise, False, hidden, 1, None)
    return Report(exercise, True, f"every customer right after {STRESS_PAYMENTS} payments in batches of "
                                  f"{STRESS_BATCH}, each batch handed over twice{held}", STRESS_PAYMENTS, None,
                  deliveries=deliveries)


def each_record(function, table):
    """The Lambda handler: function(table, record) for each record of the batch, in order."""
    def handle(event, context):
        for record in event["Records"]:
            function(table, record)
    return handle


def notified_problem(table, payments):
    """What is wrong with the totals or the notifications after every payment was delivered, in words, or None."""
    wrong = totals_problem(table, payments)
    if wrong:
        return wrong
    keys = [item["PK"] for item in table.scan(ConsistentRead=True)["Items"]]
    for customer, total in expected_totals(payments).items():
        told = sum(key.startswith(f"NOTIFY#{customer}") for key in keys)
        if told != (total >= THRESHOLD):
            reached = f"reached {total}" if total >= THRESHOLD else f"is {total}, below {THRESHOLD},"
            return f"{customer}'s total {reached} and {customer} was {times_told(told)}"
    return None


def times_told(count):
    """'never told', 'told once', 'told 2 times'."""
    return {0: "never told", 1: "told once"}.get(count, f"told {count} times")


def why_told(report):
    """The likely mistake behind a failing order of add_and_notify's exhaustive stage, or ''."""
    if "NOTIFY" not in report.message and "told" not in report.message:
        return why(report)
    crashed = any(explore.parse_move(move)[1:] == ("!", "crash") for move in report.schedule)
    if "never told" in report.message and crashed:
        return NEVER_TOLD
    return "" if "never told" in report.message or "below" in report.message else TOLD_AGAIN


def why(report):
    """The likely mistake behind a failing order of the exhaustive stage, from its fault and what went wrong, or ''."""
    faults = {place for _, kind, place in map(explore.parse_move, report.schedule) if kind == "!"}
    if "crash" in faults:
        return DIED_BETWEEN if "never added" in report.message else DIED_TWICE
    if "lost" in faults:
        return RESENT
    return SHARED if "never added" in report.message else ""


def stress(lab, function, problem):
    """Deliver stress_payments() as weak as DynamoDB, every batch's first invocation failing after the function ran on
    all its records (a timeout after the work was done); (what went wrong or None, the invocations)."""
    payments = stress_payments()
    table = payments_table(payments)
    failed = set()
    handle_each = each_record(function, table)

    def handle(event, context):
        handle_each(event, context)
        first = event["Records"][0]["dynamodb"]["SequenceNumber"]
        if first not in failed:
            failed.add(first)
            raise TimeoutError("the invocation timed out after its records were handled")

    with as_weak_as(lab):
        deliveries = EventSourceMapping(lab, PAYMENTS, handle, batch_size=STRESS_BATCH).drain()
    given_up = stuck(deliveries)
    if given_up:
        return f"a batch kept failing, so its records were never added: {given_up}", deliveries
    return problem(table, payments), deliveries


def sample_record(lab):
    """One record of the payments stream, as the handler is given it."""
    records = []
    EventSourceMapping(lab, PAYMENTS, lambda event, context: records.extend(event["Records"]), batch_size=1).drain()
    return records[0]
