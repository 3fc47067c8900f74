"""Checkers for notebook 24 (atomic counters)."""
from decimal import Decimal

from ..tables import fresh_table
from . import attack

TABLE = "p24-atomic-counters"
STOCK = {"PK": "PRODUCT#widget", "SK": "STOCK"}
INVOICE = {"PK": "SEQUENCE#invoice", "SK": "COUNTER"}
STARTING_STOCK = 10


def check_buy(buy):
    """Attack buy(table): up to 50 shoppers at once take from 10 in stock; never below zero, every sale counted."""
    def setup():
        table = fresh_table(TABLE)
        table.put_item(Item={**STOCK, "stock": STARTING_STOCK})
        return table

    def invariant(table, log):
        if log["error"].notna().any():
            return f"buy raised {log['error'].dropna().iloc[0]!r} instead of returning False"
        sold = int((log["result"] == True).sum())  # noqa: E712  (True, not just truthy)
        stock = table.get_item(Key=STOCK, ConsistentRead=True)["Item"]["stock"]
        if stock != STARTING_STOCK - sold or sold != min(len(log), STARTING_STOCK):
            return f"{sold} shoppers were told they bought one, and the stock went from {STARTING_STOCK} to {stock}"
        return None

    return attack("buy", buy, setup, lambda table, n: [(table,)] * n, invariant)


def check_next_invoice(next_invoice):
    """Attack next_invoice(table): n concurrent callers must get exactly the numbers 1..n, each once."""
    def setup():
        return fresh_table(TABLE)

    def invariant(table, log):
        if log["error"].notna().any():
            return f"next_invoice raised {log['error'].dropna().iloc[0]!r}"
        odd = [r for r in log["result"] if not isinstance(r, (int, Decimal)) or isinstance(r, bool)]
        if odd:
            return f"next_invoice returned {odd[0]!r}; return the new number itself"
        numbers = sorted(int(r) for r in log["result"])
        if numbers != list(range(1, len(log) + 1)):
            repeated = sorted({n for n in numbers if numbers.count(n) > 1})
            return (f"{len(log)} callers got {numbers}" + (f": {repeated} handed out twice" if repeated else ""))
        return None

    return attack("next_invoice", next_invoice, setup, lambda table, n: [(table,)] * n, invariant)
