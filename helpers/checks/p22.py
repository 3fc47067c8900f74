"""Checkers for notebook 22 (conditional writes)."""
from ..tables import fresh_table
from . import attack

TABLE = "p22-conditional-writes"
USERNAME = {"PK": "USERNAME#neo", "SK": "USERNAME"}
WALLET = {"PK": "USER#alice", "SK": "PROFILE"}


def check_register(register):
    """Attack register(table, username, user_id): many users claim 'neo' at once; exactly one may get it."""
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
    """Attack spend(table, amount): concurrent spends of 3 from 10 credits must never overdraw."""
    def setup():
        table = fresh_table(TABLE)
        table.put_item(Item={**WALLET, "credits": 10, "status": "active"})
        return table

    def invariant(table, log):
        if log["error"].notna().any():
            return f"spend raised {log['error'].dropna().iloc[0]!r} instead of returning False"
        accepted = int((log["result"] == True).sum())  # noqa: E712
        credits = table.get_item(Key=WALLET, ConsistentRead=True)["Item"]["credits"]
        if credits < 0 or credits != 10 - 3 * accepted or accepted != min(len(log), 3):
            return f"credits {credits} after {accepted} accepted spends of 3 from 10"
        return None

    return attack("spend", spend, setup, lambda table, n: [(table, 3)] * n, invariant)

