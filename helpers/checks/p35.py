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
    mapping hands a batch over again after its invocation failed or died. Explored: three payments, one batch, in
    every behaviour, with the invocation dying after each write and (on the lab server) each write's response lost;
    then, as weak as DynamoDB, 24 payments in batches of 5, each batch's first invocation failing after add_payment did
    its work."""
    if not callable(add_payment):
        raise TypeError(f"Pass your function itself (e.g. add_payment), not {add_payment!r}.")
    lab = connect(quiet=True)

    def handler(table):
        """The Lambda handler: add_payment for each record of the batch, in order."""
        def handle(event, context):
            for record in event["Records"]:
                add_payment(table, record)
        return handle

    def consume(table, batch_size):
        """Drain the payments stream into `table`, as one Lambda function would; its invocations."""
        return EventSourceMapping(lab, PAYMENTS, handler(table), batch_size=batch_size).drain()

    def invariant(table, log):
        if log["error"].iloc[0]:
            return f"the consumer stopped: {log['error'].iloc[0]}"
        given_up = stuck(log["result"].iloc[0]) if log["result"].iloc[0] is not None else None
        if given_up:
            return f"a batch kept failing, so its records were never added: {given_up}"
        return totals_problem(table, PAYMENTS_EXPLORED)

    faults = ("crash", "lost_response") if lab.kind == "embedded" else ("crash",)  # only the lab server loses one
    report, held = exhaustive("add_payment", consume, lambda: payments_table(PAYMENTS_EXPLORED),
                              lambda table: [(table, len(PAYMENTS_EXPLORED))], invariant, faults=faults,
                              names=("the consumer",))
    if report:
        report.message += why(report)
        return report
    with tracing(False):
        problem, deliveries = stress(lab, add_payment)
        if problem:
            stage = (f"{STRESS_PAYMENTS} payments in batches of {STRESS_BATCH}, each batch's first invocation failing "
                     "after its records were added, as weak as DynamoDB")
            return Report("add_payment", False, f"{problem} ({stage})", STRESS_PAYMENTS, None, deliveries=deliveries)
        hidden = hidden_error("add_payment", add_payment, lambda: payments_table(PAYMENTS_EXPLORED),
                              lambda table, n: [(table, sample_record(lab))])
    if hidden:
        return Report("add_payment", False, hidden, 1, None)
    return Report("add_payment", True, f"every total right after {STRESS_PAYMENTS} payments in batches of "
                                       f"{STRESS_BATCH}, each batch handed over twice{held}", STRESS_PAYMENTS, None,
                  deliveries=deliveries)


def why(report):
    """The likely mistake behind a failing order of the exhaustive stage, from its fault and what went wrong, or ''."""
    faults = {place for _, kind, place in map(explore.parse_move, report.schedule) if kind == "!"}
    if "crash" in faults:
        return DIED_BETWEEN if "never added" in report.message else DIED_TWICE
    if "lost" in faults:
        return RESENT
    return SHARED if "never added" in report.message else ""


def stress(lab, add_payment):
    """Deliver stress_payments() as weak as DynamoDB, every batch's first invocation failing after add_payment ran on
    all its records (a timeout after the work was done); (what went wrong or None, the invocations)."""
    payments = stress_payments()
    table = payments_table(payments)
    failed = set()

    def handle(event, context):
        for record in event["Records"]:
            add_payment(table, record)
        first = event["Records"][0]["dynamodb"]["SequenceNumber"]
        if first not in failed:
            failed.add(first)
            raise TimeoutError("the invocation timed out after its records were handled")

    with as_weak_as(lab):
        deliveries = EventSourceMapping(lab, PAYMENTS, handle, batch_size=STRESS_BATCH).drain()
    given_up = stuck(deliveries)
    if given_up:
        return f"a batch kept failing, so its records were never added: {given_up}", deliveries
    return totals_problem(table, payments), deliveries


def sample_record(lab):
    """One record of the payments stream, as the handler is given it."""
    records = []
    EventSourceMapping(lab, PAYMENTS, lambda event, context: records.extend(event["Records"]), batch_size=1).drain()
    return records[0]
