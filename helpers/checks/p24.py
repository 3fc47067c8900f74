"""Checkers for notebook 24 (atomic counters)."""
from decimal import Decimal

from ..lab.tables import fresh_table
from . import CLIENT_NAMES, attack
from .why import Broken

TABLE = "p24-atomic-counters"
STOCK = {"PK": "PRODUCT#widget", "SK": "STOCK"}
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


PLAYERS_BEST = {"kim": 50}  # lee has no best yet
HIGH_SCORES = (("kim", 50), ("lee", 20), ("kim", 51), ("lee", 20), ("kim", 49))
OVERWRITTEN = ("a write replaces whatever best is there when it lands, unless its ConditionExpression refuses it: "
               "compare in that condition, not in code on a best read earlier")


def best_key(player):
    """The key of `player`'s best-score item."""
    return {"PK": f"PLAYER#{player}", "SK": "BEST"}


def leaderboard():
    """setup() for the high scores: kim's best is 50, lee has none; state is (table, {player: best})."""
    table = fresh_table(TABLE)
    for player, best in PLAYERS_BEST.items():
        table.put_item(Item={**best_key(player), "best": best})
    return table, dict(PLAYERS_BEST)


def scores(state, n):
    """n scores: kim's tie with her best, one just above it and one below; lee's first scores, each sent twice."""
    table, _ = state
    return [(table, player, score + 5 * (i // len(HIGH_SCORES)))
            for i, (player, score) in ((i, HIGH_SCORES[i % len(HIGH_SCORES)]) for i in range(n))]


def lees_first_two(state):
    """lee's first two scores, the higher one first."""
    table, _ = state
    return [(table, "lee", 90), (table, "lee", 70)]


def shown(value):
    """A stored number as a learner wrote it (70, not Decimal('70')); anything else as its repr."""
    if isinstance(value, Decimal) and value == value.to_integral_value():
        return str(int(value))
    return repr(value)


def called(log, i):
    """Call i of the run in words: "bob's record('kim', 70)" (calls past the eighth by number)."""
    _, player, score = log["args"][i]
    who = CLIENT_NAMES[i] if len(log) <= len(CLIENT_NAMES) else f"call {i}"
    return f"{who}'s record({player!r}, {score})"


def best_problem(table, player, before, log):
    """What broke the high-score contract for `player` (who had the best `before`, or None), or None."""
    rows = [(i, score, result) for i, ((_, who, score), result) in enumerate(zip(log["args"], log["result"]))
            if who == player]
    had = f"{player}'s best of {before}" if before is not None else f"{player}, who had no best yet"
    for i, score, result in rows:
        if result and before is not None and score <= before:
            why = ("a tie is not a new best: return False for a score equal to the best" if score == before
                   else "a lower score never becomes the best")
            return f"{called(log, i)} returned True on {had}: {why}"
    for score in sorted({score for _, score, _ in rows}):
        told = [called(log, i) for i, s, result in rows if s == score and result]
        if len(told) > 1:
            return (f"{' and '.join(told)} {'both' if len(told) == 2 else 'all'} returned True: only one {score} can "
                    f"become {player}'s best, a tie with it returns False")
    top = max(score for _, score, _ in rows)
    best = top if before is None else max(before, top)
    first_top = next(i for i, score, _ in rows if score == top)
    if (before is None or top > before) and not any(result for _, score, result in rows if score == top):
        missing = ("; a player with no best has no item: if your condition compares best, let a missing best "
                   "through with attribute_not_exists(best) OR ..." if before is None else "")
        return (f"{called(log, first_top)} returned False on {had}: record refused a new best (a score above the "
                f"best must be stored and return True){missing}")
    stored = table.get_item(Key=best_key(player), ConsistentRead=True).get("Item", {}).get("best")
    if stored is None:
        return f"{player} has no best stored after {called(log, first_top)} (it should be {best})"
    if stored != best:
        writers = [called(log, i) for i, score, _ in rows if score == stored]
        if isinstance(stored, Decimal) and stored < best and writers:
            return Broken(f"{player}'s best is {shown(stored)}, not {best}: {' or '.join(writers)} overwrote a higher "
                          "best with a lower score", OVERWRITTEN)
        return f"{player}'s best is {shown(stored)}, not {best}: store the score itself, as a number, in best"
    return None


def check_record(record):
    """Attack record(table, player, score): a best score only goes up, a new best returns True, a tie or less False."""
    def invariant(state, log):
        table, before = state
        errors = log["error"].dropna()
        if len(errors):
            return f"{called(log, errors.index[0])} raised {errors.iloc[0]} (instead of returning True or False)"
        odd = [i for i, result in enumerate(log["result"]) if not isinstance(result, bool)]
        if odd:
            return f"{called(log, odd[0])} returned {log['result'][odd[0]]!r}: return True or False"
        for player in sorted({player for _, player, _ in log["args"]}):
            problem = best_problem(table, player, before.get(player), log)
            if problem:
                return problem
        return None

    # A lower score can erase a higher one when both beat the best, here none yet: the two clients send 90 and 70.
    return attack("record", record, leaderboard, scores, invariant, orders_of=lees_first_two)


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
