"""Checkers for notebook 22 (conditional writes)."""
from ..tables import fresh_table
from . import attack

TABLE = "p22-conditional-writes"
USERNAME = {"PK": "USERNAME#neo", "SK": "USERNAME"}
WALLET = {"PK": "USER#alice", "SK": "PROFILE"}
CREDITS = 10


def check_register(register):
    """Attack register(table, username, user_id): 2 users claim 'neo' in every order, then many at once."""
    def setup():
        return fresh_table(TABLE)

    def invariant(table, log):
        winners = log[log["result"] == True]  # noqa: E712  (True, not just truthy)
        if log["error"].notna().any():
            return f"register raised {log['error'].dropna().iloc[0]!r} instead of returning False"
        owner = table.get_item(Key=USERNAME, ConsistentRead=True).get("Item", {}).get("user_id")
        told = sorted(args[2] for args in winners["args"])
        if len(winners) != 1 or told != [owner]:
            return f"{len(winners)} users were told they own 'neo' ({', '.join(told) or 'nobody'}); the table says {owner}"
        return None

    return attack("register", register, setup, lambda table, n: [(table, "neo", f"user-{i}") for i in range(n)], invariant)


def check_spend(spend):
    """Attack spend(table, amount): 2 spends of 6 from 10 credits in every order, then many spends of 3 at once."""
    def setup():
        table = fresh_table(TABLE)
        table.put_item(Item={**WALLET, "credits": CREDITS, "status": "active"})
        return table

    def invariant(table, log):
        if log["error"].notna().any():
            return f"spend raised {log['error'].dropna().iloc[0]!r} instead of returning False"
        amount = log["args"].iloc[0][1]
        accepted = int((log["result"] == True).sum())  # noqa: E712
        credits = table.get_item(Key=WALLET, ConsistentRead=True)["Item"]["credits"]
        if credits < 0 or credits != CREDITS - amount * accepted or accepted != min(len(log), CREDITS // amount):
            return f"credits {credits} after {accepted} accepted spends of {amount} from {CREDITS}"
        return None

    def two_that_can_overdraw(table):
        """Two spends of 6: either alone fits in 10 credits, both together overdraw."""
        return [(table, 6)] * 2

    return attack("spend", spend, setup, lambda table, n: [(table, 3)] * n, invariant, orders_of=two_that_can_overdraw)
