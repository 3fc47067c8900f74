"""Checkers for the practice notebooks: 30 (seat booking), 31 (three conditions), 32 (the wallet, its daily limit).

Each exhaustive stage runs two calls in every order (calls(state, 2), unless the checker names its own
`orders_of`): two calls are enough to break each invariant, so a broken function is caught the same way
every run.
"""
from boto3.dynamodb.conditions import Key

from ..lab.tables import fresh_table
from ..lab.trace import plain
from . import attack

SEATS = "p30-seat-booking"
CONDITIONS = "p31-three-conditions"
WALLETS = "p32-wallet"
SEAT = {"PK": "seat#14C", "SK": "SEAT"}
EMAIL_KEY = "email#ana@example.com"
EMAIL_SPELLINGS = ("ana@example.com", "Ana@Example.com", "ANA@EXAMPLE.COM")
STOCK = {"PK": "sku#KB-104", "SK": "STOCK"}
PROFILE = {"PK": "user#ana", "SK": "PROFILE"}
WALLET = {"PK": "WALLET#alice", "SK": "WALLET"}
WITHDRAWAL_ANSWERS = ("paid", "already paid", "insufficient funds")
DAY = "2026-12-01"
DAY_TOTAL = {"PK": "WALLET#alice", "SK": f"DAY#{DAY}"}
DAILY_LIMIT = 200
DAY_AMOUNTS = (120, 50, 80, 30, 60, 20)  # the stress stage's withdrawals in turn (the first meets the missing table)
BOOKERS = ("alice", "bob")
RETRIED_BOOKERS = ("alice", "alice", "carol")  # alice's booking, sent twice, and carol's
RETRIED_CLIENTS = ("alice", "alice (retry)", "carol")  # how the exhaustive stage names them
PAIRED_SIZES = (2, 4, 10, 20, 50)
RETRY_LOOP_SIZES = (2, 4, 10, 20)


def calls_of(log):
    """The run's calls as plain dicts (Python values, not numpy ones), in call order."""
    return log.to_dict("records")


def first_exception(log, function, expected):
    """What went wrong when the learner's function raised instead of answering; None if it never did."""
    errors = log["error"].dropna()
    if len(errors):
        return f"{function} raised {errors.iloc[0]} (instead of returning {expected})"
    return None


def fresh_seat():
    """Seat 14C free at version 1, as notebook 30 starts it."""
    table = fresh_table(SEATS)
    table.put_item(Item={**SEAT, "holder": None, "version": 1})
    return table


def seat_problem(table, log):
    """Exactly the holder's calls must be told True, and somebody must hold the seat."""
    problem = first_exception(log, "book_seat", "True or False")
    if problem:
        return problem
    seat = table.get_item(Key=SEAT, ConsistentRead=True)["Item"]
    holder = seat.get("holder")
    if holder is None:
        return f"nobody holds seat 14C after {len(log)} booking attempts{null_hint(seat, log)}"
    calls = calls_of(log)
    told_yes = sorted({call["args"][2] for call in calls if call["result"] is True})
    if told_yes != [holder]:
        return (f"{len(told_yes)} clients were told they hold seat 14C ({', '.join(told_yes) or 'nobody'}); "
                f"the table says {holder}")
    attempts = [call["result"] for call in calls if call["args"][2] == holder]
    refused = sum(result is not True for result in attempts)
    if refused:
        return f"{holder} holds seat 14C but was told it is taken on {refused} of its {len(attempts)} attempts"
    return None


def null_hint(seat, log):
    """Why every booking of a free seat stored as holder: NULL was refused, when that is what happened; else ''."""
    if "holder" not in seat or (log["result"] == True).any():  # noqa: E712  (True, not just truthy)
        return ""
    return (", each told it is taken. Why: the free seat is stored with holder: NULL, and a NULL attribute exists, so "
            "attribute_not_exists(holder) is false for it. Test the value instead: holder = :null (with "
            "{':null': None}), or attribute_type(holder, :NULL) with {':NULL': 'NULL'}")


def check_book_seat(book_seat):
    """Attack book_seat(table, seat, who): alice and bob in every order, then many clients at once; one told True."""
    return attack("book_seat", book_seat, fresh_seat,
                  lambda table, n: [(table, "14C", f"client-{i}") for i in range(n)], seat_problem,
                  orders_of=lambda table: [(table, "14C", who) for who in BOOKERS])


def check_book_seat_retry(book_seat):
    """Attack book_seat with every request sent twice at once (a lost response, retried): the holder hears True.

    In the exhaustive stage "alice (retry)" sends alice's booking again, beside alice and carol.
    """
    return attack("book_seat (retried)", book_seat, fresh_seat,
                  lambda table, n: [(table, "14C", f"client-{i // 2}") for i in range(n)], seat_problem,
                  sizes=PAIRED_SIZES, orders_of=lambda table: [(table, "14C", who) for who in RETRIED_BOOKERS],
                  names=RETRIED_CLIENTS)


def check_signup(signup):
    """Attack signup(table, email, user_id): users claim ana@example.com in any case at once; one owner, all told who."""
    def invariant(table, log):
        problem = first_exception(log, "signup", "the owner's user id")
        if problem:
            return problem
        claims = [item for item in table.scan(ConsistentRead=True)["Items"] if item["PK"].lower() == EMAIL_KEY]
        if len(claims) != 1:
            keys = ", ".join(sorted(item["PK"] for item in claims)) or "none"
            return f"{len(claims)} items claim ana@example.com ({keys}); emails differ only in case, so there must be one"
        owner = claims[0].get("userId")
        for call in calls_of(log):
            if call["result"] != owner:
                return f"{call['args'][2]} was told {call['result']!r} owns ana@example.com; the table says {owner!r}"
        return None

    return attack("signup", signup, lambda: fresh_table(CONDITIONS),
                  lambda table, n: [(table, EMAIL_SPELLINGS[i % 3], f"u_{4821 + i}") for i in range(n)], invariant)


def check_reserve(reserve):
    """Attack reserve(table, sku, qty): two buyers take 2 each from 9 in every order, then buyers take 3 each at once
    (three fit, the third leaving exactly 0); never below 0, each told what is left."""
    def setup():
        table = fresh_table(CONDITIONS)
        table.put_item(Item={**STOCK, "stock": 9})
        return table

    def invariant(table, log):
        problem = first_exception(log, "reserve", "the stock left, or None")
        if problem:
            return problem
        qty = log["args"].iloc[0][2]
        stock = table.get_item(Key=STOCK, ConsistentRead=True)["Item"]["stock"]
        told = sorted(plain(call["result"]) for call in calls_of(log) if call["result"] is not None)
        if stock < 0:
            return f"stock {stock} after {len(told)} reservations of {qty} from 9"
        if stock != 9 - qty * len(told):
            return f"stock {stock} after {len(told)} reservations of {qty} from 9, which leave {9 - qty * len(told)}"
        fit = min(len(log), 9 // qty)
        if len(told) != fit:
            why = (": a reservation that leaves exactly 0 must succeed (stock >= :q, not stock > :q)"
                   if stock == qty else "")
            return f"{len(log) - len(told)} of {len(log)} buyers were turned away with {stock} in stock{why}"
        expected = sorted(9 - qty * k for k in range(1, len(told) + 1))
        if told != expected:
            return f"buyers were told {told} left; each must hear the stock its own reservation left ({expected})"
        return None

    return attack("reserve", reserve, setup, lambda table, n: [(table, "KB-104", 3)] * n, invariant,
                  orders_of=lambda table: [(table, "KB-104", 2)] * 2)


def check_add_tag(add_tag):
    """Attack add_tag(table, tag): writers add tags to one profile at once, each tag twice; none lost, sorted, unique.

    The exhaustive stage adds two different tags (two writers of the same tag cannot lose it).
    """
    def setup():
        table = fresh_table(CONDITIONS)
        table.put_item(Item={**PROFILE, "tags": [], "version": 1})
        return table

    def invariant(table, log):
        problem = first_exception(log, "add_tag", "after storing the tag")
        if problem:
            return problem
        stored = list(table.get_item(Key=PROFILE, ConsistentRead=True)["Item"].get("tags", []))
        wanted = sorted({call["args"][1] for call in calls_of(log)})
        lost = sorted(set(wanted) - set(stored))
        if lost:
            return f"tags {lost} were lost: the profile holds {stored} after adding {wanted}"
        if stored != wanted:
            return f"the profile holds {stored}; it should hold each tag once, sorted: {wanted}"
        return None

    return attack("add_tag", add_tag, setup,
                  lambda table, n: [(table, f"tag-{(7 * (i // 2)) % 26:02d}") for i in range(n)], invariant,
                  sizes=RETRY_LOOP_SIZES, orders_of=lambda table: [(table, "tag-00"), (table, "tag-07")])


def fresh_wallet():
    """Alice's wallet with a balance of 100 and an empty ledger."""
    table = fresh_table(WALLETS)
    table.put_item(Item={**WALLET, "balance": 100})
    return table


def wallet_balance(table):
    """The wallet's balance as stored now."""
    return table.get_item(Key=WALLET, ConsistentRead=True)["Item"]["balance"]


def check_withdraw(withdraw):
    """Attack withdraw(table, amount): two withdrawals of 80 from 100 in every order (one fits), then withdrawals of
    50 at once (two fit, the second leaving exactly 0); never negative, every payout recorded, none lost."""
    def invariant(table, log):
        problem = first_exception(log, "withdraw", "True or False")
        if problem:
            return problem
        amount = log["args"].iloc[0][1]
        paid = sum(call["result"] is True for call in calls_of(log))
        balance = wallet_balance(table)
        if balance < 0:
            return f"balance {balance} after {paid} withdrawals of {amount} from 100"
        if 100 - balance != amount * paid:
            return (f"{paid} withdrawals of {amount} paid out {amount * paid} but the balance went down by "
                    f"{100 - balance} (a lost update)")
        fit = min(len(log), 100 // amount)
        if paid != fit:
            why = (": a withdrawal that leaves exactly 0 must be paid (balance >= :amt, not balance > :amt)"
                   if paid < fit and balance == amount else "")
            return (f"{paid} of {len(log)} withdrawals of {amount} from a balance of 100 were paid; exactly {fit} "
                    f"can be{why}")
        return None

    return attack("withdraw", withdraw, fresh_wallet, lambda table, n: [(table, 50)] * n, invariant,
                  orders_of=lambda table: [(table, 80)] * 2)


def check_withdraw_once(withdraw):
    """Attack withdraw(table, withdrawal_id, amount): each withdrawal of 30 from 100 sent twice at once; in every
    order, then with any one response lost (the SDK sends the request again) or a client crashed after a write."""
    def invariant(table, log):
        problem = first_exception(log, "withdraw", "'paid', 'already paid' or 'insufficient funds'")
        if problem:
            return problem
        calls = calls_of(log)
        for call in calls:
            if not call["crashed"] and call["result"] not in WITHDRAWAL_ANSWERS:
                return f"withdraw returned {call['result']!r}; answer one of {', '.join(WITHDRAWAL_ANSWERS)}"
        ledger = {item["SK"].removeprefix("WITHDRAWAL#") for item in table.query(
            KeyConditionExpression=Key("PK").eq(WALLET["PK"]) & Key("SK").begins_with("WITHDRAWAL#"),
            ConsistentRead=True)["Items"]}
        answers, crashed = {}, {call["args"][1] for call in calls if call["crashed"]}
        for call in calls:
            answers.setdefault(call["args"][1], [])
            if not call["crashed"]:
                answers[call["args"][1]].append(call["result"])
        for withdrawal, heard in sorted(answers.items()):
            problem = withdrawal_problem(withdrawal, heard, withdrawal in ledger, withdrawal in crashed)
            if problem:
                return problem
        balance = wallet_balance(table)
        if balance != 100 - 30 * len(ledger):
            split = (": a client crashed between its writes; debit the wallet and record the ledger item in one "
                     "TransactWriteItems") if crashed else ""
            return f"balance {balance} after {counted(len(ledger), 'recorded withdrawal')} of 30 from 100{split}"
        if len(ledger) != min(len(answers), 3):
            return f"only {len(ledger)} of {len(answers)} withdrawals of 30 were paid from a balance of 100"
        return None

    return attack("withdraw (idempotent)", withdraw, fresh_wallet,
                  lambda table, n: [(table, f"w-{i // 2}", 30) for i in range(n)], invariant, sizes=PAIRED_SIZES,
                  faults=("lost_response", "crash"))


def withdrawal_problem(withdrawal, heard, recorded, crashed):
    """What is wrong with the answers one withdrawal id got, given whether the ledger records it and whether one of
    its attempts crashed (and so was told nothing)."""
    paid = heard.count("paid")
    sent = f"its request was sent {len(heard) + crashed} times"
    if paid > 1:
        return f"{withdrawal} was paid {paid} times ({sent})"
    if paid and not recorded:
        return f"{withdrawal} was paid but the ledger has no WITHDRAWAL#{withdrawal} item"
    if recorded and not paid and not crashed:
        return f"the ledger records {withdrawal} but none of its {len(heard)} attempts was told 'paid'"
    if recorded and "insufficient funds" in heard:
        return f"{withdrawal} was paid, yet its retry was told 'insufficient funds' instead of 'already paid'"
    if not recorded and set(heard) - {"insufficient funds"}:
        return f"{withdrawal} was not paid, yet an attempt was told {sorted(set(heard))}"
    return None


def counted(n, word):
    """'1 withdrawal', '2 withdrawals': a number with its noun."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def withdrawn_today(table):
    """The day's total as stored now: 0 while the day's item (or its total) does not exist."""
    return table.get_item(Key=DAY_TOTAL, ConsistentRead=True).get("Item", {}).get("withdrawn", 0)


def daily_limit_problem(table, log):
    """The day's total never passes 200, it is the sum of what was allowed, and nothing was refused while it fitted."""
    problem = first_exception(log, "withdraw_today", "True or False")
    if problem:
        return problem
    calls = calls_of(log)
    for call in calls:
        if not isinstance(call["result"], bool):
            return f"withdraw_today returned {call['result']!r}; answer True (allowed) or False (over the limit)"
    total = withdrawn_today(table)
    allowed = [call["args"][2] for call in calls if call["result"] is True]
    if total > DAILY_LIMIT:
        return (f"{total} withdrawn on {DAY} by {counted(len(allowed), 'withdrawal')} told True; the daily limit is "
                f"{DAILY_LIMIT}")
    if total != sum(allowed):
        return f"the withdrawals told True add up to {sum(allowed)}, but the day's total is {total}"
    for call in calls:
        if call["result"] is False and total + call["args"][2] <= DAILY_LIMIT:
            return (f"a withdrawal of {call['args'][2]} was refused, yet the day ended with {total} of "
                    f"{DAILY_LIMIT} withdrawn")
    return None


def check_withdraw_today(withdraw_today):
    """Attack withdraw_today(table, day, amount): two of 120 in every order, then mixed amounts at once; 200 a day."""
    return attack("withdraw_today", withdraw_today, lambda: fresh_table(WALLETS),
                  lambda table, n: [(table, DAY, DAY_AMOUNTS[i % len(DAY_AMOUNTS)]) for i in range(n)],
                  daily_limit_problem, orders_of=lambda table: [(table, DAY, 120)] * 2)
