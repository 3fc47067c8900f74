"""Checkers for notebook 22 (conditional writes)."""
from ..tables import fresh_table
from . import attack

TABLE = "p22-conditional-writes"
USERNAME = {"PK": "USERNAME#neo", "SK": "USERNAME"}
WALLET = {"PK": "USER#alice", "SK": "PROFILE"}
CREDITS = 10
COUPON = "SAVE10"
SPEND = 5  # the stress stage's spends: two fit in 10 credits, leaving exactly 0


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


def check_spend(spend):
    """Attack spend(table, amount): 2 spends of 6 from 10 credits in every order, then many spends of 5 at once (two
    fit, the second leaving exactly 0)."""
    def setup():
        table = fresh_table(TABLE)
        table.put_item(Item={**WALLET, "credits": CREDITS, "status": "active"})
        return table

    def invariant(table, log):
        if log["error"].notna().any():
            return f"spend raised {log['error'].dropna().iloc[0]} (instead of returning False)"
        amount = log["args"].iloc[0][1]
        accepted = int((log["result"] == True).sum())  # noqa: E712
        credits = table.get_item(Key=WALLET, ConsistentRead=True)["Item"]["credits"]
        fit = min(len(log), CREDITS // amount)
        if credits < 0 or credits != CREDITS - amount * accepted or accepted > fit:
            return f"credits {credits} after {accepted} accepted spends of {amount} from {CREDITS}"
        if accepted < fit:
            why = (": a spend that leaves exactly 0 must be accepted (credits >= :a, not credits > :a)"
                   if credits == amount else "")
            return (f"only {accepted} of {len(log)} spends of {amount} were accepted from {CREDITS} credits, though "
                    f"{fit} fit; {credits} credits were left{why}")
        return None

    def two_that_can_overdraw(table):
        """Two spends of 6: either alone fits in 10 credits, both together overdraw."""
        return [(table, 6)] * 2

    return attack("spend", spend, setup, lambda table, n: [(table, SPEND)] * n, invariant, orders_of=two_that_can_overdraw)


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
