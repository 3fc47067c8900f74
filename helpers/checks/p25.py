"""Checkers for notebook 25 (transactions)."""
import random
import time
from decimal import Decimal

from botocore.exceptions import ClientError

from .. import explore
from ..lab.gate import is_conflict
from ..lab.tables import fresh_table
from ..lab.trace import tracing
from . import STRONG, Scenario, attack, explored
from .why import Broken

TABLE = "p25-transactions"
OPENING = {"A": 100, "B": 100, "C": 0}
CLOSED = "C"
STOCK = {"PK": "PRODUCT#widget", "SK": "STOCK"}
PROFILE = {"PK": "USER#alice", "SK": "PROFILE"}
ORDER_QTY = {f"o{i}": 1 + i % 3 for i in range(20)}
CONTENDED = {"sizes": (2, 5, 10, 20), "tries": 2}  # the stress stage of transactions that all meet on two or three
# items: a right answer spends its time there in its own backoff (50 transfers at once took 10 of a 21 s verdict),
# and the exhaustive stage has run every order of two calls, lost responses and crashes included


def account_key(name):
    """The key of account `name` in the transfer exercise."""
    return {"PK": f"ACCOUNT#{name}", "SK": "BALANCE"}


def order_key(order_id):
    """The key of an order in the place_order_once exercise."""
    return {"PK": "USER#alice", "SK": f"ORDER#{order_id}"}


def raised(log):
    """The first error a call raised, as a message, or None."""
    errors = log["error"].dropna()
    return f"a call raised {errors.iloc[0]}" if len(errors) else None


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


def two_that_both_fit(table):
    """60 from A to B and 70 from B to A (each holds 100): each fits in either order, so both must go through."""
    return [(table, "A", "B", 60), (table, "B", "A", 70)]


def check_transfer(transfer):
    """Attack transfer(table, source, target, amount): money is never created, lost or overdrawn, even when a
    response is lost (the SDK sends the request again) or a client crashes after one of its writes; and two transfers
    that both fit both go through, whichever meets the other in flight."""
    def invariant(table, log):
        if raised(log):
            return raised(log)
        told = log[~log["crashed"]]
        if not told["result"].map(lambda r: isinstance(r, bool)).all():
            return "transfer must return True or False"
        balances = {name: int(table.get_item(Key=account_key(name), ConsistentRead=True)["Item"]["balance"])
                    for name in OPENING}
        expected = dict(OPENING)
        for args, moved in zip(told["args"], told["result"]):
            if moved:
                expected = moved_by(expected, args)
        crashed = list(log["args"][log["crashed"]])
        if sum(balances.values()) != sum(OPENING.values()):
            half = (f"; {crash_words(crashed)} between its writes, leaving its transfer half done: make the debit "
                    "and the credit one TransactWriteItems") if crashed else ""
            return (f"the accounts hold {sum(balances.values())} in all, not {sum(OPENING.values())}: "
                    f"money was lost or created{half}")
        if any(balance < 0 for balance in balances.values()):
            return f"an account was overdrawn: {balances}"
        if balances[CLOSED] != 0:
            return f"closed account C received {balances[CLOSED]}"
        if balances != expected and balances not in [moved_by(expected, args) for args in crashed]:
            return f"the balances {balances} do not match the transfers that returned True ({expected})"
        return None

    def boundaries(table):
        """A transfer that empties A exactly, then one larger than A's new balance into A: both must go through."""
        for source, target, amount in (("A", "B", 100), ("B", "A", 150)):
            before = {name: table.get_item(Key=account_key(name), ConsistentRead=True)["Item"]["balance"]
                      for name in (source, target)}
            moved = transfer(table, source, target, amount)
            if moved is not True:
                return (f"a transfer of {amount} from {source} (holding {before[source]}) to {target} (holding "
                        f"{before[target]}) returned {moved!r}; it must go through. {over_refusal(source, target)}")
        return None

    def both_went_through(table, log):
        refused = [args for args, moved in zip(log["args"], log["result"]) if moved is False]
        if refused:
            _, source, target, amount = refused[0]
            return f"the transfer of {amount} from {source} to {target} returned False, though it fits in either order"
        return invariant(table, log)

    both, orders = explored("transfer", transfer, fresh_accounts, two_that_both_fit, both_went_through)
    if both:
        return both
    report = attack("transfer", transfer, fresh_accounts, transfers, invariant, orders_of=two_transfers_from_a,
                    faults=("lost_response", "crash"), probe=boundaries, **CONTENDED)
    if report.passed:
        report.message += f"; and first, A->B 60 and B->A 70 both went through in all {len(orders)} of their orders"
    return report


def moved_by(balances, transfer):
    """The balances after one transfer's call arguments (table, source, target, amount) moved its money."""
    _, source, target, amount = transfer
    return {**balances, source: balances[source] - amount, target: balances[target] + amount}


def crash_words(crashed):
    """'the client moving 60 from A to B crashed', for each transfer whose client crashed."""
    return " and ".join(f"the client moving {amount} from {source} to {target} crashed"
                        for _, source, target, amount in crashed)


def over_refusal(source, target):
    """Why a transfer that fits was refused, as likely causes."""
    return (f"Check the condition on {source}: a transfer may leave exactly 0 (balance >= :a, not balance > :a); and "
            f"{target} needs no balance condition, only that it is open")


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
    """Attack place_order_once(table, order_id, qty): duplicates take stock once, stock never goes negative, even when
    a response is lost (the SDK sends the request again) or a client crashes after one of its writes."""
    def invariant(table, log):
        if raised(log):
            return raised(log)
        named = dict.fromkeys(order_id for _, order_id, _ in log["args"])  # a fresh shop: no other order can exist
        placed = {order_id for order_id in named
                  if "Item" in table.get_item(Key=order_key(order_id), ConsistentRead=True)}
        for (_, order_id, _), answer, crashed in zip(log["args"], log["result"], log["crashed"]):
            if not crashed and answer is not (order_id in placed):
                state = "exists" if order_id in placed else "does not exist"
                return f"a call for order {order_id!r} returned {answer!r}, but the order {state}"
        stock = table.get_item(Key=STOCK, ConsistentRead=True)["Item"]["stock"]
        count = table.get_item(Key=PROFILE, ConsistentRead=True)["Item"]["orderCount"]
        taken = sum(ORDER_QTY[order_id] for order_id in placed)
        if stock != 10 - taken or stock < 0:
            existing = ", ".join(sorted(placed)) or "none"
            return f"stock is {stock}, but the orders that exist ({existing}) take {taken} of 10"
        if count != len(placed):
            return f"orderCount is {count}, but {len(placed)} {'order exists' if len(placed) == 1 else 'orders exist'}"
        return None

    # Two calls are one order o0 sent twice (orders(table, 2)): the retry must not take stock again.
    # As weak as DynamoDB: a retried order can meet its own first attempt still in flight (TransactionConflict).
    def the_last_widgets(table):
        """Orders of 4 then 6 from 10 in stock: the second takes exactly what is left and must be placed."""
        for order_id, qty in (("big-1", 4), ("big-2", 6)):
            left = table.get_item(Key=STOCK, ConsistentRead=True)["Item"]["stock"]
            placed = place_order_once(table, order_id, qty)
            if placed is not True:
                return (f"an order of {qty} with {left} in stock returned {placed!r}; it must be placed (an order may "
                        "take the last widget: stock >= :q, not stock > :q)")
        return None

    return attack("place_order_once", place_order_once, fresh_shop, orders, invariant, orders_of=2,
                  faults=("lost_response", "crash"), probe=the_last_widgets, **CONTENDED)


SEATED = {f"b{n}": f"{n}A" for n in range(1, 7)}  # booking -> the seat it holds at the start
FREE_SEATS = ("7A", "8A", "9A")
SPARE_SEAT = "10A"  # free too, asked for only by requests from an out-of-date page


def seat_key(seat):
    """The key of a seat in the change_seat exercise."""
    return {"PK": f"SEAT#{seat}", "SK": "SEAT"}


def booking_key(booking):
    """The key of a booking in the change_seat exercise."""
    return {"PK": f"BOOKING#{booking}", "SK": "BOOKING"}


def seat_everyone(table):
    """Write bookings b1..b6 in seats 1A..6A and seats 7A to 10A free (no holder); return the table."""
    for booking, seat in SEATED.items():
        table.put_item(Item={**seat_key(seat), "holder": booking})
        table.put_item(Item={**booking_key(booking), "seat": seat})
    for seat in (*FREE_SEATS, SPARE_SEAT):
        table.put_item(Item=seat_key(seat))
    return table


def fresh_seats():
    """A fresh table with every booking seated."""
    return seat_everyone(fresh_table(TABLE))


def reseating():
    """The exhaustive stage's setup: one fresh table, its items written again before every order."""
    with tracing(False):
        table = fresh_table(TABLE)
    return lambda: seat_everyone(table)


def seat_change(table, i):
    """Request i: a booking after a free seat, a different one each time; every fifth from an out-of-date page."""
    bookings = list(SEATED)
    booking = bookings[i % 6]
    if i % 5 == 4:
        return table, booking, SEATED[bookings[(i + 1) % 6]], SPARE_SEAT
    return table, booking, SEATED[booking], FREE_SEATS[(i + i // 6) % 3]


def seat_changes(table, n):
    """n requests of the six bookings for the free seats, as people clicking twice and stale pages send them."""
    return [seat_change(table, i) for i in range(n)]


def two_for_one_seat(table):
    """Bookings b1 and b2 both ask for free seat 7A."""
    return [(table, "b1", SEATED["b1"], "7A"), (table, "b2", SEATED["b2"], "7A")]


def one_booking_two_seats(table):
    """Booking b1 asks for free seats 7A and 8A at once, as a double click with two choices sends them: one move may
    go through, and the other must then find b1 no longer in 1A."""
    return [(table, "b1", SEATED["b1"], "7A"), (table, "b1", SEATED["b1"], "8A")]


def seating(table):
    """(booking -> its seat, seat -> its holder or None), read back from the table in one strongly consistent Scan."""
    items = {(item["PK"], item["SK"]): item for item in table.scan(ConsistentRead=True)["Items"]}

    def item(key):
        """The item stored under `key`."""
        return items[key["PK"], key["SK"]]

    bookings = {b: item(booking_key(b))["seat"] for b in SEATED}
    seats = [*SEATED.values(), *FREE_SEATS, SPARE_SEAT]
    holders = {s: item(seat_key(s)).get("holder") for s in seats}
    return bookings, holders


def calls_on(log, seat):
    """The calls that moved a booking into or out of `seat`, and what each was answered, in words."""
    words = [f"{booking} {from_seat}->{to_seat} answered {'an error' if error else repr(moved)}"
             for (_, booking, from_seat, to_seat), moved, error in zip(log["args"], log["result"], log["error"])
             if seat in (from_seat, to_seat)]
    return "the calls on it: " + "; ".join(words) if words else f"no call on {seat}"


def check_change_seat(change_seat):
    """Attack change_seat(table, booking, from_seat, to_seat): every booking holds exactly the seat it names."""
    def invariant(table, log):
        if raised(log):
            return raised(log)
        if not log["result"].map(lambda r: isinstance(r, bool)).all():
            return "change_seat must return True or False"
        bookings, holders = seating(table)
        for booking, seat in bookings.items():
            if holders[seat] != booking:
                return (f"booking {booking} says seat {seat}, but seat {seat} is held by {holders[seat] or 'nobody'}, "
                        f"after {calls_on(log, seat)}")
        for seat, holder in holders.items():
            if holder is not None and bookings[holder] != seat:
                return Broken(f"seat {seat} is held by {holder}, whose booking says seat {bookings[holder]}, after "
                              f"{calls_on(log, seat)}", moved_twice(log, holder))
        for (_, booking, from_seat, to_seat), moved in zip(log["args"], log["result"]):
            if moved and bookings[booking] != to_seat:
                return f"a call moving {booking} to {to_seat} returned True, but {booking} is in {bookings[booking]}"
            if not moved and holders[to_seat] is None and bookings[booking] == from_seat == SEATED[booking]:
                return (f"a call moving {booking} from {from_seat} to free seat {to_seat} returned False, and "
                        f"{booking} is still in {from_seat} with {to_seat} free")
        return None

    # One booking after two free seats at once: each move can see the booking in its old seat before either moves it.
    # Explored first, quietly, with each transaction applied at once (a few orders: conflicts are explored below).
    clicked = orders_held(change_seat, reseating(), one_booking_two_seats, invariant)
    if clicked is None:
        # Reported after two bookings after one seat, if that breaks too: the scenario the exercise's text names.
        return (explored("change_seat", change_seat, reseating(), two_for_one_seat, invariant)[0]
                or explored("change_seat", change_seat, reseating(), one_booking_two_seats, invariant,
                            consistency="strong")[0])
    # Two bookings after the same free seat: each can see it free before either takes it.
    report = attack("change_seat", change_seat, fresh_seats, seat_changes, invariant, orders_of=two_for_one_seat,
                    explore_setup=reseating())
    if report.passed and clicked:
        report.message += (f"; and first, b1 after 7A and 8A at once (a double click) in all {clicked} distinct "
                           f"orders of its requests{STRONG}")
    return report


def orders_held(learner, setup, arguments, invariant):
    """How many orders a scenario held in, explored quietly (no report) with each transaction applied at once; None
    if one broke; 0 if it has too many orders to explore."""
    with tracing(False):
        scenario = Scenario(learner, setup, arguments, invariant)
    try:
        orders = explore.explore(scenario.clients, scenario.reset, scenario.check, consistency="strong")
    except explore.TooManyOrders:
        return 0
    return len(orders) if orders["ok"].all() else None


def moved_twice(log, booking):
    """Why a booking holds a seat it left: more than one of `booking`'s moves was answered True; or ''."""
    moves = [f"{from_seat}->{to_seat}" for (_, moving, from_seat, to_seat), moved in zip(log["args"], log["result"])
             if moving == booking and moved]
    if len(moves) < 2:
        return ""
    return (f"both of {booking}'s moves ({' and '.join(moves)}) were answered True: guard the old seat in the "
            "transaction (holder = :b on the old seat's Update, or seat = :from on the booking's), so that the move "
            "that comes second is refused; a check made in code before the transaction guards nothing")


TOTAL = sum(OPENING.values())  # what A, B and C hold together: a transfer only moves money between them
MOVES = (("A", "B", 30), ("B", "A", 20), ("A", "B", 10))
MOVE_BACKOFF_CAP, MOVE_ATTEMPTS = 0.04, 60  # up to about 2 s of backoff for each of the checker's own transfers


def move(table, source, target, amount):
    """The auditing checker's own transfer: one TransactWriteItems, sent again after a jittered backoff (of at most
    MOVE_BACKOFF_CAP seconds: the movers are the checker's, and the verdict waits on them) while it meets another
    transaction; raises after MOVE_ATTEMPTS conflicts, having moved nothing."""
    actions = [{"Update": {"TableName": table.name, "Key": key, "UpdateExpression": "SET balance = balance + :a",
                           "ExpressionAttributeValues": {":a": change}}}
               for key, change in ((account_key(source), -amount), (account_key(target), amount))]
    for attempt in range(MOVE_ATTEMPTS):
        try:
            table.meta.client.transact_write_items(TransactItems=actions)
            return "moved"
        except ClientError as error:
            if not is_conflict(error.response):
                raise
            time.sleep(random.uniform(0, min(MOVE_BACKOFF_CAP, 0.01 * 2 ** attempt)))
    raise RuntimeError(f"the transfer of {amount} from {source} to {target} kept meeting other transactions")


def audits(table, n):
    """n calls, two audits (the first is one) for each transfer between A and B."""
    return [("audit", table) if i % 3 != 1 else ("move", table, *MOVES[i // 3 % len(MOVES)]) for i in range(n)]


def check_total_balance(total_balance):
    """Attack total_balance(table), the sum of the balances of A, B and C: while a transfer moves money between A and
    B, every total it returns is what the three hold at every moment."""
    if not callable(total_balance):
        raise TypeError(f"Pass your function itself (e.g. total_balance), not {total_balance!r}.")

    def client(role, table, *transfer):
        """The auditor calls total_balance; a mover makes a transfer of the checker's own."""
        return total_balance(table) if role == "audit" else move(table, *transfer)

    def invariant(table, log):
        if raised(log):
            return raised(log)
        for (role, *_), total in zip(log["args"], log["result"]):
            if role == "audit" and total != TOTAL:
                return (f"total_balance returned {number_words(total)}, but A, B and C hold {TOTAL} at every moment "
                        "(a transfer only moves money between them): it added up balances from before and after one")
        return None

    def quiet_total(table):
        """One audit with nothing else running: it must add up every balance."""
        total = total_balance(table)
        return (None if total == TOTAL else
                f"with no transfer running, total_balance returned {number_words(total)}, not {TOTAL}")

    return attack("total_balance", client, fresh_accounts, audits, invariant,
                  orders_of=lambda table: [("move", table, *MOVES[0]), ("audit", table)], probe=quiet_total,
                  names=("mover", "auditor"))


def number_words(value):
    """A number as a learner writes it (170, not Decimal('170')); anything else as its repr."""
    return str(value) if isinstance(value, (int, Decimal)) and not isinstance(value, bool) else repr(value)
