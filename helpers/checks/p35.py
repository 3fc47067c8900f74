"""Checkers for notebook 35 (streams and consumers)."""
from dataclasses import dataclass, replace
from decimal import Decimal

from ..lab.backend import connect
from ..runs.consumer import EventSourceMapping
from ..lab.tables import fresh_table
from ..lab.trace import tracing
from . import Report, as_weak_as, exhaustive, hidden_error, interruptible
from .why import Broken, own_why

PAYMENTS, TOTALS = "p35-payments", "p35-totals"
# The exhaustive stage's payments: two of alice's of the same amount (two payments, not one sent twice), one of bob's.
PAYMENTS_EXPLORED = (("pay-1", "alice", 30), ("pay-2", "bob", 20), ("pay-3", "alice", 30))
CUSTOMERS = ("alice", "bob", "carol")
STRESS_PAYMENTS = 24
STRESS_BATCH = 5
THRESHOLD = 100  # add_and_notify: a customer is told once, when their total first reaches it
# add_and_notify's exhaustive stage: alice passes 100 with her second payment, and pays again after; bob pays exactly 100.
NOTIFY_EXPLORED = (("pay-1", "alice", 60), ("pay-2", "bob", 100), ("pay-3", "alice", 50), ("pay-4", "alice", 20))
OLDER_LAST = ("a Kinesis data stream may hand a newer change over before an older one, and the same change twice: "
              "apply an image only if its version is newer than the one stored, in the write's ConditionExpression "
              "(`attribute_not_exists(PK) OR version < :v`), comparing numbers")
PRODUCTS, PRICES = "p35-products", "p35-prices"
# apply_price's exhaustive stage: PRODUCT#1 updated twice; versions 9 and 10 compare the wrong way as strings.
PRICES_EXPLORED = ((1, 9, 90), (1, 10, 100))
STRESS_PRODUCTS, STRESS_VERSIONS = 3, 8
REFUSAL_RAISED = (". Why: the refusal of your own condition came out of the function (ConditionalCheckFailedException), so "
                  "every delivery of the batch failed the same way. A refused write means this change, or a newer one, "
                  "is there already: catch that code and go on to the next record")
NO_SEQUENCE_NUMBER = (". Why: a record from a Kinesis data stream has no dynamodb.SequenceNumber, so every delivery of the "
                      "batch failed: Kinesis Data Streams for DynamoDB does not carry the DynamoDB Streams sequence "
                      "number, and a Kinesis record's own sequence number orders its shard, not the item's changes. Order "
                      "the changes by a version the writer keeps in the item")
KEPT_RAISING = (". Why: the function raised on every delivery of the batch (the error is named above), so the mapping "
                "handed it over again and again and the records after it waited: fix what raises it, and let a refusal "
                "that means 'done already' end quietly")


@dataclass(frozen=True)
class Feed:
    """What a checker's consumer reads: the stream's table, how to give it `items` (a function returning the table the
    learner writes to), the items of the exhaustive and of the stress stage, their noun, what a pass says is right,
    and whether the stream is read as a Kinesis data stream (helpers/consumer.py)."""

    stream: str
    setup: object
    explored: tuple
    stressed: object
    noun: str
    right: str
    kinesis: bool = False


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
            if isinstance(total, Decimal) and total > expected:
                return f"TOTAL#{customer} holds {total}, but {customer}'s payments ({theirs}) add up to {expected}: " \
                       "a payment was added more than once"
            return Broken(f"TOTAL#{customer} holds {total}, but {customer}'s payments ({theirs}) add up to {expected}: "
                          "a payment was never added", taken_for_one(customer, expected - (total or 0), payments))
    return None


def taken_for_one(customer, missing, payments):
    """Why a customer's total lacks `missing`: two of their payments of that very amount, one of them not added (taken
    for the other), or ''."""
    alike = [payment_id for payment_id, who, amount in payments if who == customer and amount == missing]
    if len(alike) < 2:
        return ""
    return (f"{' and '.join(alike)} are two different payments of {missing}, and only one was added: they were taken "
            "for one. Remember the record's eventID, which no two records share, not what two payments may have in "
            "common")


def stuck(deliveries):
    """The outcome of an invocation after which the mapping gave records up, or None."""
    gave_up = [outcome for outcome in deliveries["outcome"]
               if "discarded" in outcome or "Lambda would retry it" in outcome]
    return gave_up[0] if gave_up else None


def products_table(updates):
    """A fresh products table (with a NEW_IMAGE stream) given `updates` ((product, version, price), in the order they
    were made), and a fresh prices table; the prices table."""
    source = fresh_table(PRODUCTS)
    for product, version, price in updates:
        source.put_item(Item={"PK": f"PRODUCT#{product}", "version": version, "price": price})
    return fresh_table(PRICES)


def stress_updates():
    """STRESS_PRODUCTS products, each updated STRESS_VERSIONS times (versions 8, 9, ...: 10 and on sort before 9 as
    strings), the products in turn; price 10 times the version, plus the product."""
    return [(product, version, 10 * version + product) for version in range(8, 8 + STRESS_VERSIONS)
            for product in range(1, STRESS_PRODUCTS + 1)]


def prices_problem(table, updates):
    """What is wrong with the prices table after every update was delivered, in words, or None."""
    newest = {product: (version, price) for product, version, price in updates}
    found = {item["PK"]: item for item in table.scan(ConsistentRead=True)["Items"]}
    for product, (version, price) in newest.items():
        item = found.get(f"PRICE#{product}")
        if item is None:
            return f"PRICE#{product} was never written"
        if item.get("price") != price:
            stored = item.get("version")
            text = isinstance(stored, str)
            why = (f"the version was stored as a string, and as strings '{version}' comes before '{stored}': keep it "
                   "a number, as the record's NewImage has it (`N`)" if text and str(version) < stored else OLDER_LAST)
            return Broken(f"PRICE#{product} holds price {item.get('price')} (version "
                          f"{repr(stored) + ', a string' if text else stored}), but its newest version is {version}, "
                          f"price {price}: an older update was applied after a newer one", why)
    return None


PAYMENTS_FEED = Feed(PAYMENTS, payments_table, PAYMENTS_EXPLORED, stress_payments, "payments",
                     "every customer's total right")
PRICES_FEED = Feed(PRODUCTS, products_table, PRICES_EXPLORED, stress_updates, "price updates", "every price right",
                   kinesis=True)


@interruptible
def check_add_payment(add_payment):
    """Attack add_payment(table, record): a consumer of the payments stream hands it each record, and the running total
    of each customer (TOTAL#<customer>, attribute `total`) must be the sum of that customer's payments, though the
    mapping hands a batch over again after its invocation failed or died (attack_consumer says how)."""
    return attack_consumer("add_payment", add_payment, PAYMENTS_FEED, totals_problem)


@interruptible
def check_apply_price(apply_price):
    """Attack apply_price(table, record): a consumer of the products table's changes, read as a Kinesis data stream
    (in any order, some twice), hands it each record, and each product's price item (PRICE#<product>) must end with
    the price of the product's newest version (attack_consumer says how)."""
    return attack_consumer("apply_price", apply_price, PRICES_FEED, prices_problem)


@interruptible
def check_add_and_notify(add_and_notify):
    """Attack add_and_notify(table, record): add_payment's running total, and one notification item (its PK starting
    with NOTIFY#<customer>) for each customer whose total has reached 100, none for the others (attack_consumer says
    how)."""
    feed = replace(PAYMENTS_FEED, explored=NOTIFY_EXPLORED, right="every customer's total and notification right")
    return attack_consumer("add_and_notify", add_and_notify, feed, notified_problem)


def attack_consumer(exercise, function, feed, problem):
    """Run function(table, record) on the feed's stream as a consumer's handler runs it, for each record of a batch.
    Explored: the feed's explored items in one batch (in every order and with any one twice, for a Kinesis feed), in
    every behaviour, with the invocation dying after each write and (on the lab server) each write's response lost;
    then, as weak as DynamoDB, its stress items in batches of 5, each batch's first invocation failing after the
    function did its work; last, the function meets a table that does not exist. problem(table, items) says what is
    wrong after every item was delivered (None if nothing; Broken words carry their Why, told when the order tells
    none)."""
    if not callable(function):
        raise TypeError(f"Pass your function itself (e.g. {exercise}), not {function!r}.")
    lab = connect(quiet=True)

    def consume(table, batch_size):
        """Drain the feed's stream into `table`, as one Lambda function would; its invocations."""
        return EventSourceMapping(lab, feed.stream, each_record(function, table), batch_size=batch_size,
                                  kinesis=feed.kinesis).drain()

    def invariant(table, log):
        if log["error"].iloc[0]:
            return f"the consumer stopped: {log['error'].iloc[0]}"
        given_up = stuck(log["result"].iloc[0]) if log["result"].iloc[0] is not None else None
        if given_up:
            return f"a batch kept failing, so its records were never handled: {given_up}"
        return problem(table, feed.explored)

    faults = ("crash", "lost_response") if lab.kind == "embedded" else ("crash",)  # only the lab server loses one
    report, held = exhaustive(exercise, consume, lambda: feed.setup(feed.explored),
                              lambda table: [(table, len(feed.explored))], invariant, faults=faults,
                              names=("the consumer",), telling={"writer": "invocation", "first": given_up_why})
    if report:
        report.message = report.message.replace("(then the client crashes)", "(then the invocation dies)")
        return report
    items = feed.stressed()
    with tracing(False):
        found, deliveries = stress(lab, function, problem, feed, items)
        if found:
            kinesis = ", in any order and some twice" if feed.kinesis else ""
            stage = (f"{len(items)} {feed.noun} in batches of {STRESS_BATCH}{kinesis}, each batch's first invocation "
                     "failing after its records were handled, as weak as DynamoDB")
            return Report(exercise, False, f"{found} ({stage}){stuck_why(stuck(deliveries)) or own_why(found)}",
                          len(items), None, deliveries=deliveries)
        hidden = hidden_error(exercise, function, lambda: feed.setup(feed.explored),
                              lambda table, n: [(table, sample_record(lab, feed.stream))])
    if hidden:
        return Report(exercise, False, hidden, 1, None)
    return Report(exercise, True, f"{feed.right} once all {len(items)} {feed.noun} were handed over in batches of "
                                  f"{STRESS_BATCH}, each batch twice{held}", len(items), None, deliveries=deliveries)


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
        told = [key for key in keys if key.startswith(f"NOTIFY#{customer}")]
        if len(told) != (total >= THRESHOLD):
            reached = f"reached {total}" if total >= THRESHOLD else f"is {total}, below {THRESHOLD},"
            return Broken(f"{customer}'s total {reached} and {customer} was {times_told(len(told))}",
                          told_why(customer, total, told))
    return None


def told_why(customer, total, told):
    """Why a customer was told a wrong number of times, from their total and the notification items found, or ''."""
    if len(told) > 1:
        return (f"{customer}'s notifications are {len(told)} items, each written under a key of its own, so a second "
                "delivery, or a later payment, tells the customer again. Key it by the customer (NOTIFY#<customer>), "
                "refused when it exists")
    if not told and total == THRESHOLD:
        return (f"{customer}'s total is exactly {THRESHOLD}, which has reached {THRESHOLD}: compare with >= "
                f"{THRESHOLD}, not > {THRESHOLD}")
    return ""


def times_told(count):
    """'never told', 'told once', 'told 2 times'."""
    return {0: "never told", 1: "told once"}.get(count, f"told {count} times")


def stuck_why(given_up):
    """Why a batch kept failing, from the error its invocations raised (`given_up`, the mapping's words), or ''."""
    if not given_up:
        return ""
    if "ConditionalCheckFailedException" in given_up:
        return REFUSAL_RAISED
    return NO_SEQUENCE_NUMBER if "KeyError: 'SequenceNumber'" in given_up else KEPT_RAISING


def given_up_why(order):
    """Why the consumer of a failing order gave a batch up (its invocations kept raising), without '. Why: ', or ''."""
    deliveries = order["results"].get("the consumer")
    given_up = stuck(deliveries) if hasattr(deliveries, "columns") else None
    return stuck_why(given_up).removeprefix(". Why: ")


def stress(lab, function, problem, feed, items):
    """Deliver `items` on the feed's stream as weak as DynamoDB, every batch's first invocation failing after the
    function ran on all its records (a timeout after the work was done); (what went wrong or None, the invocations)."""
    table = feed.setup(items)
    failed = set()
    handle_each = each_record(function, table)

    def handle(event, context):
        handle_each(event, context)
        batch = frozenset(record["eventID"] for record in event["Records"])
        if batch not in failed:
            failed.add(batch)
            raise TimeoutError("the invocation timed out after its records were handled")

    with as_weak_as(lab):
        deliveries = EventSourceMapping(lab, feed.stream, handle, batch_size=STRESS_BATCH, kinesis=feed.kinesis).drain()
    given_up = stuck(deliveries)
    if given_up:
        return f"a batch kept failing, so its records were never handled: {given_up}", deliveries
    return problem(table, items), deliveries


def sample_record(lab, stream):
    """One record of the stream of table `stream`, as the handler is given it."""
    records = []
    EventSourceMapping(lab, stream, lambda event, context: records.extend(event["Records"]), batch_size=1).drain()
    return records[0]
