"""Checkers for notebook 22 (conditional writes)."""
from ..lab.tables import fresh_table
from . import attack
from .why import Broken

TABLE = "p22-conditional-writes"
USERNAME = {"PK": "USERNAME#neo", "SK": "USERNAME"}
COUPON = "SAVE10"


def check_register(register):
    """Attack register(table, username, user_id): 2 users claim 'neo' in every order, then many at once."""
    def setup():
        return fresh_table(TABLE)

    def invariant(table, log):
        winners = log[log["result"] == True]  # noqa: E712  (True, not just truthy)
        if log["error"].notna().any():
            return f"register raised {log['error'].dropna().iloc[0]} (instead of returning False)"
        owner = table.get_item(Key=USERNAME, ConsistentRead=True).get("Item", {}).get("user_id")
        told = sorted(args[2] for args in winners["args"])
        if len(winners) != 1 or told != [owner]:
            return f"{len(winners)} users were told they own 'neo' ({', '.join(told) or 'nobody'}); the table says {owner}"
        return None

    return attack("register", register, setup, lambda table, n: [(table, "neo", f"user-{i}") for i in range(n)], invariant,
                  orders_of=lambda table: [(table, "neo", who) for who in ("alice", "bob")])


def times(n):
    """'once', 'twice', '3 times'."""
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def redemption_key(code, user):
    """The item that records one user's use of one coupon."""
    return {"PK": f"COUPON#{code}", "SK": f"USER#{user}"}


def check_redeem(redeem):
    """Attack redeem(table, code, user, order): ana uses SAVE10 twice in every order, then many users twice each."""
    def setup():
        return fresh_table(TABLE)

    def uses(table, n):
        """n calls, two by each user (user-0, user-0, user-1, user-1, ...), each for its own order."""
        return [(table, COUPON, f"user-{i // 2}", f"order-{i}") for i in range(n)]

    def invariant(table, log):
        if log["error"].notna().any():
            return f"redeem raised {log['error'].dropna().iloc[0]} (instead of returning False)"
        for user, calls in log.groupby(log["args"].map(lambda args: args[2]), sort=True):
            told = [args[3] for args, result in zip(calls["args"], calls["result"]) if result == True]  # noqa: E712
            item = table.get_item(Key=redemption_key(COUPON, user), ConsistentRead=True).get("Item", {})
            if len(told) != 1 or told != [item.get("order_id")]:
                return (f"{user} got the {COUPON} discount {times(len(told))} ({', '.join(told) or 'on no order'}); "
                        f"the table records it for {item.get('order_id', 'no order')}")
        return None

    def one_user_twice(table):
        """ana redeems SAVE10 for two orders: exactly one may get the discount."""
        return [(table, COUPON, "ana", "order-1"), (table, COUPON, "ana", "order-2")]

    return attack("redeem", redeem, setup, uses, invariant, orders_of=one_user_twice)


SHARED = "GC-1"
SHARED_PAYMENT = 5  # the stress stage's payments on the shared card: two fit in its 10, the second leaving exactly 0
ANSWERS = ("ok", "unknown", "inactive", "expired", "insufficient")
CARDS = {  # card: (status, balance, expires_at)
    SHARED: ("active", 10, 2000),
    "GC-LAST": ("active", 3, 2000),
    "GC-EXPIRED": ("active", 10, 2000),
    "GC-BLOCKED": ("blocked", 10, 2000),
    "GC-SMALL": ("active", 5, 2000),
    "GC-DEAD": ("blocked", 10, 2000),
}
ONE_EACH = [  # (card, amount, now): one payment on each other card, and GC-NONE, which does not exist
    ("GC-LAST", 3, 1999),      # its whole balance in its last second: ok
    ("GC-EXPIRED", 1, 2000),   # now == expires_at: expired
    ("GC-BLOCKED", 1, 1000),   # would fit, but the card is blocked: inactive
    ("GC-SMALL", 7, 1000),     # 7 from 5: insufficient
    ("GC-NONE", 1, 1000),      # no such card: unknown
    ("GC-DEAD", 50, 2500),     # blocked, expired and too small at once: inactive comes first
]


def card_key(card):
    """The gift card's item key."""
    return {"PK": f"CARD#{card}", "SK": "CARD"}


def paid(card, amount, now):
    """One call in words, as a message names it: 'GC-1 paying 6 at now=1000'."""
    return f"{card} paying {amount} at now={now}"


def rule_words(card, due):
    """Why a card must refuse, in words: 'the card expires at 2000'."""
    if due == "unknown":
        return "the card does not exist"
    status, _, expires_at = CARDS[card]
    return f"the card's status is {status!r}" if due == "inactive" else f"the card expires at {expires_at}"


def rule_refusal(card, now):
    """The refusal a card's status and expiry dictate, whatever the balance, or None if only the balance decides."""
    if card not in CARDS:
        return "unknown"
    status, _, expires_at = CARDS[card]
    if status != "active":
        return "inactive"
    return "expired" if now >= expires_at else None


def raised_problem(log):
    """What a call raised, with the likely cause, or None."""
    errors = log[log["error"].notna()]
    if not len(errors):
        return None
    (_, card, amount, now), error = errors["args"].iloc[0], errors["error"].iloc[0]
    answer = " (a refusal is an answer: return its reason)" if error.startswith("ConditionalCheckFailed") else ""
    why = ("a card that does not exist has no old item, so the refusal carries no 'Item': use "
           "error.response.get('Item')" if error.startswith("KeyError: 'Item'") else "")
    return Broken(f"redeem_gift_card raised {error} ({paid(card, amount, now)}){answer}", why)


def answer_problem(row_args, result):
    """Why one call's answer breaks the card's status and expiry rules (order: unknown, inactive, expired), or None."""
    _, card, amount, now = row_args
    if result not in ANSWERS:
        return f"{paid(card, amount, now)} returned {result!r}: return 'ok' or the reason, one of {', '.join(ANSWERS[1:])}"
    due = rule_refusal(card, now)
    if due and result != due:
        expired = ": a card is expired from its expires_at on (expires_at > :now, not >=)"
        why = "UpdateItem creates a missing item; a condition on the card's attributes refuses it"
        return Broken(f"{paid(card, amount, now)} was told {result!r}, but {rule_words(card, due)}: expected {due!r}"
                      f"{expired if due == 'expired' and result == 'ok' else ''}",
                      why if due == "unknown" and result == "ok" else "")
    if not due and result not in ("ok", "insufficient"):
        return (f"{paid(card, amount, now)} was told {result!r}, but the card is active and not expired at {now}: "
                "expected 'ok' or 'insufficient'")
    return None


def card_problem(table, card, calls):
    """Whether one card's balance is what its accepted payments left, and no refused payment fit; or None."""
    item = table.get_item(Key=card_key(card), ConsistentRead=True).get("Item")
    if card not in CARDS:
        return f"{paid(*calls[0][0][1:])} created card {card}, which did not exist" if item else None
    start = CARDS[card][1]
    accepted = [args[2] for args, result in calls if result == "ok"]
    if item is None:
        return f"card {card} no longer exists after {len(calls)} payments: a payment must never delete the card"
    balance = item["balance"]
    if balance < 0 or balance != start - sum(accepted):
        why = ("the balance was checked in code, not in the write's ConditionExpression (balance >= :amount)"
               if balance < 0 else "")
        return Broken(f"card {card} holds {balance} after {len(accepted)} accepted payments "
                      f"({', '.join(map(str, accepted)) or 'none'}) from {start}", why)
    for args, result in calls:
        if result == "insufficient" and args[2] <= balance:
            why = (": a payment that leaves exactly 0 must be accepted (balance >= :amount, not >)"
                   if args[2] == balance else "")
            none = "; no payment was accepted at all" if not accepted else ""
            return (f"{paid(*args[1:])} was refused as 'insufficient', though the card still held {balance} at the "
                    f"end{why}{none}")
    return None


def check_redeem_gift_card(redeem_gift_card):
    """Attack redeem_gift_card(table, card, amount, now): two payments of 6 from a card of 10 in every order, then
    many payments of 5 at once beside one payment on each card that must be refused (or accepted at a boundary)."""
    def setup():
        table = fresh_table(TABLE)
        for card, (status, balance, expires_at) in CARDS.items():
            table.put_item(Item={**card_key(card), "status": status, "balance": balance, "expires_at": expires_at})
        return table

    def payments(table, n):
        """Two payments on the shared card, one on each other card, then the rest on the shared card again."""
        shared = (table, SHARED, SHARED_PAYMENT, 1000)
        others = [(table, *call) for call in ONE_EACH]
        return ([shared, shared] + others + [shared] * n)[:n]

    def invariant(table, log):
        problem = raised_problem(log)
        if problem:
            return problem
        for args, result in zip(log["args"], log["result"]):
            problem = answer_problem(args, result)
            if problem:
                return problem
        calls = list(zip(log["args"], log["result"]))
        for card in dict.fromkeys(args[1] for args in log["args"]):
            problem = card_problem(table, card, [call for call in calls if call[0][1] == card])
            if problem:
                return problem
        return None

    def two_that_can_overdraw(table):
        """Two payments of 6: either alone fits in the card's 10, both together overdraw it."""
        return [(table, SHARED, 6, 1000)] * 2

    return attack("redeem_gift_card", redeem_gift_card, setup, payments, invariant, orders_of=two_that_can_overdraw)
