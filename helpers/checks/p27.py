"""Checkers for notebook 27 (idempotency keys)."""
import itertools
import threading
from contextlib import nullcontext

from boto3.dynamodb.conditions import Key

from ..backend import connect
from ..knobs import knobs, set_knobs
from ..tables import fresh_table
from ..trace import plain
from . import TRIES, attack, run_at_once

TABLE = "p27-idempotency-keys"
LEDGER = {"PK": "ACCOUNT#alice", "SK": "LEDGER"}
AMOUNT = 50
AMOUNTS = (AMOUNT, AMOUNT, 20)  # two requests of the same amount: a duplicate is the id, not the amount


class Card:
    """A fake payment provider that counts its charges (safe to call from many threads)."""

    def __init__(self):
        self.charges = []
        self.lock = threading.Lock()

    def __call__(self, amount):
        with self.lock:
            self.charges.append(amount)
            return {"chargeId": f"ch_{len(self.charges)}", "amount": amount}


def first_error(log):
    """The first error a run raised, or None."""
    errors = log["error"].dropna()
    return errors.iloc[0] if len(errors) else None


def check_charge_once(charge_once):
    """Attack charge_once(table, request_id, amount): two copies of one request in every order, then two copies of
    each of several requests (two of them for the same amount) at once; on the lab server the first UpdateItem's response is lost (in every order, and in the first run of
    each size), so the SDK resends it. The ledger must hold the charge once."""
    if not callable(charge_once):
        raise TypeError(f"Pass your function itself (e.g. charge_once), not {charge_once!r}.")
    lab = connect(quiet=True)
    losing = lab.kind == "embedded"
    runs = itertools.count()

    def ledger(lose):
        """A fresh ledger; on the lab server, the next UpdateItem's response lost if `lose` (the knob counts)."""
        table = fresh_table(TABLE)
        table.put_item(Item={**LEDGER, "charges": [], "total": 0})
        if losing:
            set_knobs(lab, quiet=True, lose_response="UpdateItem" if lose else None)
        return table

    def setup():
        return ledger(next(runs) % TRIES == 0)

    def invariant(table, log):
        error = first_error(log)
        if error:
            return f"charge_once raised {error}; a duplicate must be answered, not raised"
        ledger = plain(table.get_item(Key=LEDGER, ConsistentRead=True)["Item"])
        requests = dict(sorted({args[1]: args[2] for args in log["args"]}.items()))
        wanted = sorted(requests.values())
        if sorted(ledger["charges"]) != wanted or ledger["total"] != sum(wanted):
            sent = ", ".join(f"{request_id} of {amount}" for request_id, amount in requests.items())
            sent = (f"requests ({sent}), {len(log)} calls in all," if len(requests) > 1
                    else f"one request ({sent}), sent {times(len(log))},")
            return (f"{sent} left charges {ledger['charges']} (total {ledger['total']})"
                    f"{missed(ledger['charges'], wanted)}")
        return None

    with knobs(lab, quiet=True) if losing else nullcontext():
        return attack("charge_once", charge_once, setup, charge_requests, invariant, explore_setup=lambda: ledger(True))


def charge_requests(table, n):
    """n calls, each request sent twice: req-0 and req-1 of 50 each, req-2 of 20, req-3 of 50, ..."""
    return [(table, f"req-{i // 2}", AMOUNTS[(i // 2) % len(AMOUNTS)]) for i in range(n)]


def missed(charges, wanted):
    """Why some requests were never charged, when that is what happened; else ''."""
    if len(charges) >= len(wanted):
        return ""
    return (": a request was refused as a duplicate though it was not one. Deduplicate on the request id alone (not "
            "the amount), and only that id: NOT contains(requestIds, :id), not attribute_not_exists(requestIds)")


CLAIM = "ConditionExpression"  # a piece of every conditional write's body: the knob loses the first claim's answer
CLAIMS_LOST = ("PutItem", "UpdateItem", None)  # per stress run of a size: a claim by PutItem, by UpdateItem, neither


def check_handle(handle):
    """Attack handle(table, request_id, amount, charge_card): two copies of one request in every order, with any one
    write's response lost (on the lab server), then copies at once, the first conditional PutItem's response lost in
    the first run of each size, the first conditional UpdateItem's in the second: either way the SDK resends the claim.
    The card is charged once, every answer is that charge, only RuntimeError ("retry later") may be raised."""
    if not callable(handle):
        raise TypeError(f"Pass your function itself (e.g. handle), not {handle!r}.")
    lab = connect(quiet=True)
    losing = lab.kind == "embedded"
    runs = itertools.count()

    def request(lose):
        """A fresh table and card; on the lab server, the response of the next conditional `lose` (PutItem or
        UpdateItem: a claim) lost, or none when `lose` is None."""
        table = fresh_table(TABLE)
        if losing:
            set_knobs(lab, quiet=True, **({"lose_response": lose, "lose_count": 1, "lose_matching": CLAIM}
                                          if lose else {"lose_response": None}))
        return table, Card()

    def setup():
        return request(CLAIMS_LOST[next(runs) % TRIES])

    def invariant(state, log):
        table, card = state
        told_later = log["error"].notna().all() and log["error"].str.startswith("RuntimeError").all()
        if not card.charges and told_later and losing:
            return ("the card was never charged and every copy was told to retry later: the SDK resent a claim "
                    "whose response was lost, and the handler took its own claim for another copy's")
        if len(card.charges) != 1:
            return f"the card was charged {len(card.charges)} times for one request"
        charge = {"chargeId": "ch_1", "amount": AMOUNT}
        raised = [e for e in log["error"].dropna() if not e.startswith("RuntimeError")]
        if raised:
            return f"handle raised {raised[0]}; only RuntimeError ('retry later') may be raised"
        answers = [plain(r) for r, e in zip(log["result"], log["error"]) if e is None]
        if any(answer != charge for answer in answers):
            wrong = next(answer for answer in answers if answer != charge)
            return f"a caller was answered {wrong!r}, not the charge {charge!r}"
        retry = run_at_once(handle, [(table, "req-1", AMOUNT, card)])
        result, error = next(zip(retry["result"], retry["error"]))
        if error or plain(result) != charge or len(card.charges) != 1:
            return f"a retry after the first call finished got {error or plain(result)!r}, not the stored {charge!r}"
        return None

    with knobs(lab, quiet=True) if losing else nullcontext():
        report = attack("handle", handle, setup, lambda state, n: [(state[0], "req-1", AMOUNT, state[1])] * n,
                        invariant, explore_setup=lambda: request(None), faults=("lost_response",) if losing else ())
    if not losing and report.passed:
        report.message += (" (no claim's response was lost: only the lab server can lose one, so run this checker "
                           "there for the whole attack)")
    return report


def times(n):
    """'once', 'twice', '3 times'."""
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def check_on_order_paid(on_order_paid):
    """Attack on_order_paid(table, event_id, order_id): the webhook evt-1 (order-1 paid) delivered twice in every
    order, then many events delivered twice each, at once. Each order gets one shipment and one 'created'."""
    def setup():
        return fresh_table(TABLE)

    def deliveries(table, n):
        """n deliveries, each event twice: (evt-0, order-0), (evt-0, order-0), (evt-1, order-1), ..."""
        return [(table, f"evt-{i // 2}", f"order-{i // 2}") for i in range(n)]

    def invariant(table, log):
        error = first_error(log)
        if error:
            return f"on_order_paid raised {error}; a duplicate delivery must be answered, not raised"
        for order_id, calls in log.groupby(log["args"].map(lambda args: args[2]), sort=True):
            shipments = table.query(KeyConditionExpression=Key("PK").eq(f"ORDER#{order_id}"),
                                    ConsistentRead=True)["Items"]
            created = int((calls["result"] == "created").sum())
            if len(shipments) != 1 or created != 1:
                answered = "1 delivery was" if created == 1 else f"{created} deliveries were"
                return (f"{order_id} has {len(shipments)} shipments after its order.paid event "
                        f"({calls['args'].iloc[0][1]}) was delivered {times(len(calls))}, and {answered} answered "
                        "'created'")
        return None

    def one_event_twice(table):
        """evt-1 (order-1 paid) delivered twice."""
        return [(table, "evt-1", "order-1")] * 2

    return attack("on_order_paid", on_order_paid, setup, deliveries, invariant, orders_of=one_event_twice)
