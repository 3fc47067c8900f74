"""Checkers for notebook 28 (GSIs are eventually consistent): the index trails the table in the stress stage, and in
every exhaustive stage any index read may be answered from before the writes that precede it."""
from contextlib import nullcontext

from boto3.dynamodb.conditions import Attr
from botocore.exceptions import BotoCoreError, ClientError

from ..lab.backend import connect
from ..lab.knobs import knobs, set_knobs
from ..lab.tables import fresh_table
from . import CLIENT_NAMES, SIZES, attack, error_words

TABLE = "p28-gsi-consistency"
LAG = [0.05, 0.3]
CONTESTED = "oracle"


def lagged_attack(exercise, learner, calls, invariant, seed, **options):
    """attack() on a table seed(fresh table) fills while the index is instant, the lab server's index then lagging
    by LAG in the stress stage. The exhaustive stage sets no lag: it explores the index's lag as order (every
    answer DynamoDB may give an index read), or, with consistency="strong", reads the index as current; a lag in
    time would make its orders not repeat."""
    lab = connect(quiet=True)
    embedded = lab.kind == "embedded"

    def table(lag, size):
        """A fresh table seeded with `size`, the lab server's index then lagging by `lag` (None: no lag in time)."""
        if embedded:
            set_knobs(lab, quiet=True, gsi_lag=None)
        seeded = seed(fresh_table(TABLE), size)
        if embedded:
            set_knobs(lab, quiet=True, gsi_lag=lag)
        return seeded

    with knobs(lab, quiet=True) if embedded else nullcontext():
        return attack(exercise, learner, lambda: table(LAG, max(options.get("sizes", SIZES))), calls, invariant,
                      explore_setup=lambda: table(None, 2), **options)


def order(n, status="open"):
    """Order O-n with `status`, listed under STATUS#<status> in GSI1."""
    return {"PK": f"ORDER#O-{n}", "SK": "ORDER", "order": f"O-{n}", "status": status,
            "GSI1PK": f"STATUS#{status}", "GSI1SK": f"ORDER#O-{n}"}


def seed_orders(table, n, status="open"):
    """Orders O-1..O-n with `status`, written in batches; the table."""
    with table.batch_writer() as batch:
        for i in range(1, n + 1):
            batch.put_item(Item=order(i, status))
    return table


def closing(n):
    """How the shop closes O-n: an odd order ships, an even one is cancelled."""
    return "shipped" if n % 2 else "cancelled"


def close(table, n):
    """Close O-n: shipping changes its status and index key, cancelling deletes it."""
    key = {"PK": f"ORDER#O-{n}", "SK": "ORDER"}
    if closing(n) == "shipped":
        table.update_item(Key=key, UpdateExpression="SET #s = :s, GSI1PK = :k",
                          ExpressionAttributeNames={"#s": "status"},
                          ExpressionAttributeValues={":s": "shipped", ":k": "STATUS#shipped"})
    else:
        table.delete_item(Key=key)


def listing_problem(n, result, still_open):
    """What is wrong with the list of the call made just after O-n was closed, or None."""
    closed, after = f"O-{n}", f"the call made just after O-{n} was {closing(n)}"
    if not isinstance(result, list) or not all(isinstance(name, str) for name in result):
        return f"{after} returned {result!r}, not a list of order ids such as ['O-1', 'O-3']"
    if closed in result:
        gone = "the table no longer holds it" if closing(n) == "cancelled" else "the table says shipped"
        return (f"{after} listed {closed} as open ({gone}): the index still showed it. Confirm every listed order "
                "with a strongly consistent read of the table (BatchGetItem, ConsistentRead=True) and drop those "
                "that are not open there")
    twice = sorted({name for name in result if result.count(name) > 1})
    if twice:
        return f"{after} listed {twice[0]} {result.count(twice[0])} times"
    missed = [name for name in still_open if name not in result]
    if missed:
        return (f"{after} did not list {missed[0]}, which nobody closed: it is open in the table and in the index "
                f"(open_orders returned {result!r}); drop only the orders the table says are not open")
    return None


def attempt(function, *args):
    """(function(*args), None), or (None, the error it raised in words, botocore's own parameter check included)."""
    try:
        return function(*args), None
    except (ClientError, BotoCoreError) as error:
        return None, " ".join(error_words(error).split())


def check_open_orders(open_orders):
    """Attack open_orders(table): each call comes right after one order was shipped or cancelled; the list must not
    show that order, and must show every order nobody closed."""
    if not callable(open_orders):
        raise TypeError(f"Pass your function itself (e.g. open_orders), not {open_orders!r}.")
    lab = connect(quiet=True)
    embedded = lab.kind == "embedded"
    writer = lab.table(TABLE)  # not `table`: a missing table must reach open_orders, not the close

    def lag(value):
        """The lab server's index lag (no knob elsewhere)."""
        if embedded:
            set_knobs(lab, quiet=True, gsi_lag=value)

    def fresh():
        """A fresh table, the index instant."""
        lag(None)
        return fresh_table(TABLE)

    def close_then_list(table, n):
        """Close O-n, then ask the learner's function for the open orders."""
        close(writer, n)
        return open_orders(table)

    def calls(table, n):
        """n calls, call i closing O-i; O-1..O-(n+1) are seeded now that n is known (the index instant), then the
        index lags."""
        lag(None)
        seed_orders(table, n + 1)
        lag(LAG)
        return [(table, i) for i in range(1, n + 1)]

    def invariant(table, log):
        """Each call's list against its own close and the order nobody closed."""
        errors = log["error"].dropna()
        if len(errors):
            n = log["args"][errors.index[0]][1]
            return f"the call made just after O-{n} was {closing(n)} raised {errors.iloc[0]}"
        still_open = [f"O-{len(log) + 1}"]
        for (_, n), result in zip(log["args"], log["result"]):
            problem = listing_problem(n, result, still_open)
            if problem:
                return problem
        return None

    def boundaries(table):
        """No open order must give [] (and no BatchGetItem with no keys); 101 open ones, more than one BatchGetItem
        takes, must all be listed."""
        nothing, error = attempt(open_orders, seed_orders(table, 2, status="shipped"))
        if error or nothing != []:
            answered = f"raised {error}" if error else f"returned {nothing!r}"
            return (f"with no open order (two shipped), open_orders {answered} instead of returning [] (a "
                    "BatchGetItem needs at least one key: skip it when the index lists nothing)")
        listed, error = attempt(open_orders, seed_orders(fresh(), 101))
        if error:
            return (f"with 101 open orders, open_orders raised {error} (one BatchGetItem reads at most 100 keys: "
                    "confirm in chunks of 100)")
        if not isinstance(listed, list) or sorted(listed) != sorted(f"O-{i}" for i in range(1, 102)):
            count = len(set(listed)) if isinstance(listed, list) else listed
            return (f"with 101 open orders, open_orders listed {count} distinct ones: one BatchGetItem reads at "
                    "most 100 keys, so confirm in chunks of 100 (and read any UnprocessedKeys again)")
        return None

    # The exhaustive stage explores the index's lag as order: a Query may be answered by an index that has not yet
    # taken the close. The stress stage lags in time.
    with knobs(lab, quiet=True) if embedded else nullcontext():
        return attack("open_orders", close_then_list, fresh, calls, invariant, sizes=(2, 5, 10, 20), tries=2,
                      orders_of=lambda table: [(table, 1), (table, 2)],
                      explore_setup=lambda: seed_orders(fresh(), 3), probe=boundaries)


def name_key(name):
    """The key of the sentinel item that reserves a display name."""
    return {"PK": f"NAME#{name}", "SK": "NAME"}


def named_user(i, name):
    """User u<i> with display name `name`, indexed by it in GSI1."""
    return {"PK": f"USER#u{i}", "SK": "PROFILE", "name": name, "GSI1PK": f"NAME#{name}", "GSI1SK": f"USER#u{i}"}


def seed_names(table, n):
    """Users u0..u(n-1) in `table`, u<i> named name-<i>, each name reserved by its sentinel item; the table."""
    with table.batch_writer() as batch:
        for i in range(n):
            batch.put_item(Item=named_user(i, f"name-{i}"))
            batch.put_item(Item={**name_key(f"name-{i}"), "user_id": f"u{i}"})
    return table


def display_names(table):
    """{user id: (name, GSI1PK)} of every user, read strongly consistently."""
    profiles = table.scan(FilterExpression=Attr("SK").eq("PROFILE"), ConsistentRead=True)["Items"]
    return {item["PK"].removeprefix("USER#"): (item.get("name"), item.get("GSI1PK")) for item in profiles}


def names_problem(names):
    """What breaks 'one user per name, each user indexed under its name', or None."""
    holders = {}
    for user_id, (name, index_key) in sorted(names.items(), key=lambda pair: int(pair[0][1:])):
        if index_key != f"NAME#{name}":
            return (f"{user_id} is named {name!r} but GSI1 lists it under {index_key!r}: set GSI1PK with the name, "
                    "in the same write")
        holders.setdefault(name, []).append(user_id)
    for name, user_ids in holders.items():
        if len(user_ids) > 1:
            return f"{len(user_ids)} users are named {name!r} ({', '.join(user_ids)})"
    return None


def answer_problem(user_id, result, name):
    """What is wrong with one call's answer (user_id asked for CONTESTED), given the name it ends with, or None."""
    if result is True and name != CONTESTED:
        return f"{user_id} was told {CONTESTED!r} is theirs but is named {name!r}"
    if result is False and name != f"name-{user_id[1:]}":
        return f"{user_id} was told {CONTESTED!r} is taken but is now named {name!r} (a refusal must change nothing)"
    return None


ONE_AT_A_TIME = (("u0", CONTESTED, True, "a free name"),
                 ("u1", "name-0", True, "the name u0 gave up just before"),
                 ("u0", CONTESTED, True, "the name it already has"),
                 ("u2", CONTESTED, False, "the name u0 holds"))
ONE_AT_A_TIME_HINTS = {
    "the name u0 gave up just before": (": release the old name in the same transaction that takes the new one (and "
                                        "an index query still lists u0 under it for a while)"),
    "the name it already has": (": no two actions of one transaction may target the same item, so answer this case "
                                "before writing")}
AFTER_ONE_AT_A_TIME = {"u0": CONTESTED, "u1": "name-0", "u2": "name-2"}


def check_set_display_name(set_display_name):
    """Attack set_display_name(table, user_id, name): two users take one free name in every order (a client may
    crash after a write), then many at once while the index lags; then one user at a time gives up a name, asks
    again for its own, and meets a name that is taken."""
    def invariant(table, log):
        """One holder of the contested name, every answer true to the table, every user indexed under its name."""
        errors = log["error"].dropna()
        if len(errors):
            _, user_id, name = log["args"][errors.index[0]]
            return f"set_display_name raised {errors.iloc[0]} for {user_id} -> {name!r} (instead of returning False)"
        strange = [result for result, crashed in zip(log["result"], log["crashed"])
                   if not crashed and not isinstance(result, bool)]
        if strange:
            return f"set_display_name returned {strange[0]!r}, not True or False"
        told = [args[1] for args, result in zip(log["args"], log["result"]) if result is True]
        if len(told) > 1:
            return (f"{len(told)} users were told {CONTESTED!r} is theirs ({', '.join(told)}): only a condition on an "
                    "item keyed by the name (attribute_not_exists(PK) on its sentinel) can refuse the second; an index "
                    "query cannot")
        names = display_names(table)
        for (_, user_id, _), result in zip(log["args"], log["result"]):
            problem = answer_problem(user_id, result, names[user_id][0])
            if problem:
                return problem
        problem = names_problem(names)
        if problem:
            return problem
        refused = [args[1] for args, result in zip(log["args"], log["result"]) if result is False]
        if refused and not any(name == CONTESTED for name, _ in names.values()):
            crashed = [CLIENT_NAMES[i] for i in log.index[log["crashed"]]]
            why = (f"{crashed[0]} crashed after a write: the name is reserved by one write and given by another, and "
                   "nothing gives it to anybody now; make them one transaction" if crashed else
                   "a condition that can never hold, or a refusal read from a lagging index?")
            return f"{refused[0]} was told {CONTESTED!r} is taken, but nobody is named {CONTESTED!r} ({why})"
        return None

    def contested(table, n):
        """Users u0..u(n-1) all asking for the same free name."""
        return [(table, f"u{i}", CONTESTED) for i in range(n)]

    def one_at_a_time(table):
        """u0 takes a free name, u1 takes u0's old one, u0 asks again for its own, u2 for u0's: yes, yes, yes, no."""
        for user_id, name, expected, what in ONE_AT_A_TIME:
            answer, error = attempt(set_display_name, table, user_id, name)
            if answer is not expected:
                said = f"raised {error}" if error else f"answered {answer!r}"
                hint = ONE_AT_A_TIME_HINTS.get(what, "")
                return f"{user_id} asking for {name!r}, {what}, {said}, not {expected}{hint}"
        names = display_names(table)
        wrong = [user_id for user_id, name in AFTER_ONE_AT_A_TIME.items() if names[user_id][0] != name]
        if wrong:
            return (f"after those four calls {wrong[0]} is named {names[wrong[0]][0]!r}, not "
                    f"{AFTER_ONE_AT_A_TIME[wrong[0]]!r}")
        return names_problem(names)

    return lagged_attack("set_display_name", set_display_name, contested, invariant,
                         seed_names, sizes=(2, 5, 10, 20), tries=2, faults=("crash",), probe=one_at_a_time)


def ticket(n):
    """Open ticket T-n, listed under QUEUE#open in GSI1."""
    return {"PK": f"TICKET#T-{n}", "SK": "TICKET", "ticket": f"T-{n}",
            "GSI1PK": "QUEUE#open", "GSI1SK": f"TICKET#T-{n}"}


def check_assign_ticket(assign_ticket):
    """Attack assign_ticket(table, agent): two agents share two open tickets in every order, each query answered
    by the index as it may lag, then n agents take n tickets at once while the index lags by time; no ticket may go
    to two agents, and no agent may be told that nothing is open while a ticket still is."""
    lab = connect(quiet=True)
    embedded = lab.kind == "embedded"

    def lag(value):
        """The lab server's index lag (no knob elsewhere)."""
        if embedded:
            set_knobs(lab, quiet=True, gsi_lag=value)

    def seed(table, n):
        """n open tickets, written while the index is instant so that every query lists them; the table."""
        lag(None)
        with table.batch_writer() as batch:
            for i in range(1, n + 1):
                batch.put_item(Item=ticket(i))
        return table

    def fresh():
        """A fresh table, the index instant."""
        lag(None)
        return fresh_table(TABLE)

    def calls(table, n):
        """n agents for n tickets, seeded now that n is known; then the index lags."""
        seed(table, n)
        lag(LAG)
        return [(table, f"agent-{i}") for i in range(n)]

    def invariant(table, log):
        errors = log["error"].dropna()
        if len(errors):
            return f"assign_ticket raised {errors.iloc[0]}"
        tickets = {item["ticket"]: item.get("assignee") for item in table.scan(ConsistentRead=True)["Items"]
                   if item["PK"].startswith("TICKET#")}
        results = [None if result is None or result != result else result for result in log["result"]]  # NaN: None
        strange = [result for result in results if result is not None and not isinstance(result, str)]
        if strange:
            return f"assign_ticket returned {strange[0]!r}, not a ticket id or None"
        told = {}
        for args, result in zip(log["args"], results):
            if result is not None:
                told.setdefault(result, []).append(args[1])
        for name, agents in sorted(told.items()):
            if len(agents) > 1 or tickets.get(name) != agents[0]:
                return (f"{len(agents)} agent{'s were' if len(agents) > 1 else ' was'} told ticket {name} is theirs "
                        f"({', '.join(sorted(agents))}); the ticket names {tickets.get(name)}")
        still_open = sorted(name for name, agent in tickets.items() if agent is None)
        empty = [args[1] for args, result in zip(log["args"], results) if result is None]
        if empty and still_open:
            return f"{empty[0]} was told no ticket is open, but {still_open[0]} still is"
        return None

    # The exhaustive stage makes the index lag a choice of each query; the stress stage sets the lag knob by time.
    with knobs(lab, quiet=True) if embedded else nullcontext():
        return attack("assign_ticket", assign_ticket, fresh, calls, invariant, sizes=(2, 5, 10, 20),
                      tries=2, orders_of=lambda table: [(table, "agent-0"), (table, "agent-1")],
                      explore_setup=lambda: seed(fresh(), 2))
