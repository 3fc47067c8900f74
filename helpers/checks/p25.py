"""Checkers for notebook 25 (transactions)."""
from ..tables import fresh_table
from . import attack

TABLE = "p25-transactions"
OPENING = {"A": 100, "B": 100, "C": 0}
CLOSED = "C"
STOCK = {"PK": "PRODUCT#widget", "SK": "STOCK"}
PROFILE = {"PK": "USER#alice", "SK": "PROFILE"}
ORDER_QTY = {f"o{i}": 1 + i % 3 for i in range(20)}


def account_key(name):
    """The key of account `name` in the transfer exercise."""
    return {"PK": f"ACCOUNT#{name}", "SK": "BALANCE"}


def order_key(order_id):
    """The key of an order in the place_order_once exercise."""
    return {"PK": "USER#alice", "SK": f"ORDER#{order_id}"}


def raised(log):
    """The first error a call raised, as a message, or None."""
    errors = log["error"].dropna()
    return f"a call raised {errors.iloc[0]!r}" if len(errors) else None


def fresh_accounts():
    """Accounts A and B open with 100 each; C is closed and holds 0."""
    table = fresh_table(TABLE)
    for name, balance in OPENING.items():
        table.put_item(Item={**account_key(name), "balance": balance,
                             "status": "closed" if name == CLOSED else "open"})
    return table


def transfers(table, n):
    """n transfers that overdraw A and B when checked outside the write, and some into closed C."""
    plan = [("A", "B", 60), ("B", "A", 70), ("A", "C", 10), ("B", "A", 40), ("A", "B", 90)]
    return [(table, *plan[i % len(plan)]) for i in range(n)]


def two_transfers_from_a(table):
    """Two transfers of 60 from A (which holds 100): both can pass a balance check made before either debit."""
    return [(table, "A", "B", 60), (table, "A", "B", 60)]


def check_transfer(transfer):
    """Attack transfer(table, source, target, amount): money is never created, lost or overdrawn."""
    def invariant(table, log):
        if raised(log):
            return raised(log)
        if not log["result"].map(lambda r: isinstance(r, bool)).all():
            return "transfer must return True or False"
        balances = {name: int(table.get_item(Key=account_key(name), ConsistentRead=True)["Item"]["balance"])
                    for name in OPENING}
        expected = dict(OPENING)
        for (_, source, target, amount), moved in zip(log["args"], log["result"]):
            if moved:
                expected[source] -= amount
                expected[target] += amount
        if sum(balances.values()) != sum(OPENING.values()):
            return (f"the accounts hold {sum(balances.values())} in all, not {sum(OPENING.values())}: "
                    "money was lost or created")
        if any(balance < 0 for balance in balances.values()):
            return f"an account was overdrawn: {balances}"
        if balances[CLOSED] != 0:
            return f"closed account C received {balances[CLOSED]}"
        if balances != expected:
            return f"the balances {balances} do not match the transfers that returned True ({expected})"
        return None

    return attack("transfer", transfer, fresh_accounts, transfers, invariant, orders_of=two_transfers_from_a)


def fresh_shop():
    """10 widgets in stock and a customer with no orders."""
    table = fresh_table(TABLE)
    table.put_item(Item={**STOCK, "stock": 10})
    table.put_item(Item={**PROFILE, "orderCount": 0})
    return table


def orders(table, n):
    """n calls: each order sent two or three times at once, as a client and its retries would."""
    ids = list(ORDER_QTY)[: max(1, n // 2)]
    return [(table, order_id, ORDER_QTY[order_id]) for order_id in (ids * 3)[:n]]


def check_place_order_once(place_order_once):
    """Attack place_order_once(table, order_id, qty): duplicates take stock once, stock never goes negative."""
    def invariant(table, log):
        if raised(log):
            return raised(log)
        placed = {order_id for order_id in ORDER_QTY
                  if "Item" in table.get_item(Key=order_key(order_id), ConsistentRead=True)}
        for (_, order_id, _), answer in zip(log["args"], log["result"]):
            if answer is not (order_id in placed):
                state = "exists" if order_id in placed else "does not exist"
                return f"a call for order {order_id!r} returned {answer!r}, but the order {state}"
        stock = table.get_item(Key=STOCK, ConsistentRead=True)["Item"]["stock"]
        count = table.get_item(Key=PROFILE, ConsistentRead=True)["Item"]["orderCount"]
        taken = sum(ORDER_QTY[order_id] for order_id in placed)
        if stock != 10 - taken or stock < 0:
            existing = ", ".join(sorted(placed)) or "none"
            return f"stock is {stock}, but the orders that exist ({existing}) take {taken} of 10"
        if count != len(placed):
            return f"orderCount is {count}, but {len(placed)} orders exist"
        return None

    # Two calls are one order o0 sent twice (orders(table, 2)): the retry must not take stock again.
    return attack("place_order_once", place_order_once, fresh_shop, orders, invariant, orders_of=2)
