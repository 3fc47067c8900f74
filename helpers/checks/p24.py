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
            return f"buy raised {log['error'].dropna().iloc[0]} (instead of returning False)"
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
            return f"next_invoice raised {log['error'].dropna().iloc[0]}"
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


LIMIT = 3
MINUTE = 29_000_000  # the minute number (epoch seconds // 60) most of the rate limiter's requests fall in
USERS = ("alice", "bob")


def window_key(user, now):
    """The key of `user`'s rate-limit window for the minute that `now` (epoch seconds) falls in."""
    return {"PK": f"RATE#{user}", "SK": f"MINUTE#{int(now // 60)}"}


def windows(counted):
    """setup() for windows already counting requests: state is (table, {(user, minute): requests})."""
    def setup():
        table = fresh_table(TABLE)
        for (user, minute), requests in counted.items():
            table.put_item(Item={**window_key(user, minute * 60), "requests": requests})
        return table, counted
    return setup


def requests(state, n):
    """n requests from alice and bob in turn, every fifth one a minute later (a window of its own)."""
    table, _ = state
    return [(table, USERS[i % 2], MINUTE * 60 + (60 if i % 5 == 4 else 0) + i % 60 / 2) for i in range(n)]


def last_two(state):
    """Two requests from alice in a window that has room for one more."""
    table, _ = state
    return [(table, "alice", MINUTE * 60 + 10), (table, "alice", MINUTE * 60 + 20)]


def check_allow(allow):
    """Attack allow(table, user, now): no window ever lets more than LIMIT requests through, none refuses early."""
    def invariant(state, log):
        table, counted = state
        if log["error"].notna().any():
            return f"allow raised {log['error'].dropna().iloc[0]} (instead of returning True or False)"
        if not log["result"].map(lambda r: isinstance(r, bool)).all():
            return "allow must return True or False"
        groups = {}
        for (_, user, now), allowed in zip(log["args"], log["result"]):
            groups.setdefault((user, int(now // 60)), []).append(allowed)
        for (user, minute), answers in sorted(groups.items()):
            room = LIMIT - counted.get((user, minute), 0)
            allowed = sum(answers)
            stored = table.get_item(Key=window_key(user, minute * 60), ConsistentRead=True).get("Item", {})
            requests_counted = stored.get("requests", 0)
            if allowed != min(len(answers), room) or requests_counted != LIMIT - room + allowed:
                return (f"{allowed} of {len(answers)} requests in {user}'s window MINUTE#{minute} were allowed, with "
                        f"room for {room} (the window now counts {requests_counted}; the limit is {LIMIT})")
        return None

    # Two requests can pass the limit only when one more fits, so the exhaustive stage starts one short of it.
    return attack("allow", allow, windows({}), requests, invariant, orders_of=last_two,
                  explore_setup=windows({("alice", MINUTE): LIMIT - 1}))
