"""Checkers for notebook 28 (GSIs are eventually consistent): the index trails the table in both stages."""
from contextlib import nullcontext

from boto3.dynamodb.conditions import Attr

from ..backend import connect
from ..knobs import knobs, set_knobs
from ..tables import fresh_table
from . import attack

TABLE = "p28-gsi-consistency"
LAG = [0.05, 0.3]
EMAIL = "neo@x.com"


def lagged_attack(exercise, learner, calls, invariant, **options):
    """attack() with the lab server's index lagging by LAG in the stress stage. The exhaustive stage sets no lag:
    it explores the index's lag as order (every answer DynamoDB may give an index read), or, with
    consistency="strong", reads the index as current; a lag in time would make its orders not repeat."""
    lab = connect(quiet=True)
    embedded = lab.kind == "embedded"

    def table(lag):
        """A fresh table, the lab server's index lagging by `lag` (None: no lag in time)."""
        if embedded:
            set_knobs(lab, quiet=True, gsi_lag=lag)
        return fresh_table(TABLE)

    with knobs(lab, quiet=True) if embedded else nullcontext():
        return attack(exercise, learner, lambda: table(LAG), calls, invariant,
                      explore_setup=lambda: table(None), **options)


def user(n, email):
    """User n, indexed by email in GSI1."""
    return {"PK": f"USER#{n}", "SK": "PROFILE", "GSI1PK": f"EMAIL#{email}", "GSI1SK": f"USER#{n}"}


def check_find_user(find_user):
    """Attack find_user(table, email): each call comes right after its user was written; every call must find it."""
    if not callable(find_user):
        raise TypeError(f"Pass your function itself (e.g. find_user), not {find_user!r}.")

    writer = connect(quiet=True).table(TABLE)  # not `table`: a missing table must reach find_user, not the write

    def write_then_find(table, n):
        writer.put_item(Item=user(n, f"user{n}@x.com"))
        return find_user(table, f"user{n}@x.com")

    def invariant(table, log):
        errors = log["error"].dropna()
        if len(errors):
            return f"find_user raised {errors.iloc[0]}"
        missed = [(args[1], result) for args, result in zip(log["args"], log["result"])
                  if not any(item.get("GSI1SK") == f"USER#{args[1]}" for item in result or [])]
        if missed:
            return (f"{len(missed)} of {len(log)} calls did not find the user written just before "
                    f"(find_user returned {missed[0][1]!r})")
        return None

    # Only the lagging stress stage can catch a single query: with the index current, every order finds the user.
    return lagged_attack("find_user", write_then_find, lambda table, n: [(table, i) for i in range(n)], invariant,
                         sizes=(2, 5, 20), tries=2)


def check_register(register):
    """Attack register(table, user_id, email): two users take the same email in every order, then many at once;
    exactly one may get it."""
    def invariant(table, log):
        errors = log["error"].dropna()
        if len(errors):
            return f"register raised {errors.iloc[0]} (instead of returning False)"
        told = sorted(args[1] for args, result in zip(log["args"], log["result"]) if result is True)
        holders = table.scan(FilterExpression=Attr("GSI1PK").eq(f"EMAIL#{EMAIL}"), ConsistentRead=True)["Items"]
        owners = sorted(item["PK"] for item in holders)
        if len(told) != 1 or owners != [f"USER#{told[0]}"]:
            return (f"{len(told)} users were told {EMAIL} is theirs ({', '.join(told) or 'nobody'}); "
                    f"the table holds {len(owners)} users with it")
        return None

    return lagged_attack("register", register, lambda table, n: [(table, f"user-{i}", EMAIL) for i in range(n)],
                         invariant)


def ticket(n):
    """Open ticket T-n, listed under QUEUE#open in GSI1."""
    return {"PK": f"TICKET#T-{n}", "SK": "TICKET", "ticket": f"T-{n}",
            "GSI1PK": "QUEUE#open", "GSI1SK": f"TICKET#T-{n}"}


def check_assign_ticket(assign_ticket):
    """Attack assign_ticket(table, agent): two agents share two open tickets in every order (the index instant),
    then n agents take n tickets at once while the index lags; no ticket may go to two agents, and no agent may
    be told that nothing is open while a ticket still is."""
    lab = connect(quiet=True)
    embedded = lab.kind == "embedded"

    def lag(value):
        """The lab server's index lag (no knob elsewhere)."""
        if embedded:
            set_knobs(lab, quiet=True, gsi_lag=value)

    def seed(table, n):
        """n open tickets, written while the index is instant so that every query lists them; the table."""
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

    # Both stages decide on the base table; only the stress stage lags, because the lag is time, not order.
    with knobs(lab, quiet=True) if embedded else nullcontext():
        return attack("assign_ticket", assign_ticket, fresh, calls, invariant, sizes=(2, 5, 10, 20),
                      tries=2, orders_of=lambda table: [(table, "agent-0"), (table, "agent-1")],
                      explore_setup=lambda: seed(fresh(), 2))
