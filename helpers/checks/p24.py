"""Checkers for notebook 24 (atomic counters)."""
from decimal import Decimal

from ..tables import fresh_table
from . import attack

TABLE = "p24-atomic-counters"
STOCK = {"PK": "PRODUCT#widget", "SK": "STOCK"}
INVOICE = {"PK": "SEQUENCE#invoice", "SK": "COUNTER"}
STARTING_STOCK = 10
LAST_ONE = 1


def shop(stock):
    """setup() for a shop with `stock` widgets: state is (table, the starting stock)."""
    def setup():
        table = fresh_table(TABLE)
        table.put_item(Item={**STOCK, "stock": stock})
        return table, stock
    return setup


def check_buy(buy):
    """Attack buy(table): two shoppers for the last widget in every order, then up to 50 at once for 10."""
    def invariant(state, log):
        table, starting = state
        if log["error"].notna().any():
            return f"buy raised {log['error'].dropna().iloc[0]!r} instead of returning False"
        sold = int((log["result"] == True).sum())  # noqa: E712  (True, not just truthy)
        stock = table.get_item(Key=STOCK, ConsistentRead=True)["Item"]["stock"]
        if stock != starting - sold or sold != min(len(log), starting):
            return f"{sold} shoppers were told they bought one, and the stock went from {starting} to {stock}"
        return None

    # Two shoppers can oversell only the last widget, so the exhaustive stage starts with one in stock.
    return attack("buy", buy, shop(STARTING_STOCK), lambda state, n: [(state[0],)] * n, invariant,
                  explore_setup=shop(LAST_ONE))


def check_next_invoice(next_invoice):
    """Attack next_invoice(table): two callers in every order, then n at once, must get exactly 1..n, each once."""
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

    # Two callers on a counter that does not exist yet: both can read "none" and hand out 1.
    return attack("next_invoice", next_invoice, setup, lambda table, n: [(table,)] * n, invariant, orders_of=2)
