"""Checkers for notebook 29 (distributed locking)."""
import random

from ..tables import fresh_table
from . import attack, run_at_once

TABLE = "p29-distributed-locking"
NAME = "invoice-run"
LOCK = {"PK": f"LOCK#{NAME}", "SK": "LOCK"}
REPORT = {"PK": "REPORT#invoice-run", "SK": "REPORT"}
TAKEOVER = 1003
TAKEOVER_WHEN = "at now=1003 (the lease had run out at 1002)"


def one_winner(table, log, when):
    """None if exactly one caller was told it holds the lock and the lock item names it; else what went wrong."""
    errors = log["error"].dropna()
    if len(errors):
        return f"acquire raised {errors.iloc[0]!r} {when}"
    winners = sorted(args[2] for args, result in zip(log["args"], log["result"]) if result is True)
    owner = table.get_item(Key=LOCK, ConsistentRead=True).get("Item", {}).get("owner")
    if len(winners) != 1 or winners != [owner]:
        return (f"{len(winners)} workers were told they hold the lock {when} ({', '.join(winners) or 'nobody'}); "
                f"the lock item names {owner}")
    return None


def expired_lock():
    """A fresh table whose lock is held by a crashed worker, its lease run out at 1002."""
    table = fresh_table(TABLE)
    table.put_item(Item={**LOCK, "owner": "crashed", "expiresAt": 1002})
    return table


def check_acquire(acquire):
    """Attack acquire(table, name, owner, now, lease=2): two workers taking over an expired lease at now=1003
    in every order (one may win); then many workers at once at now=1000 (one may win), then at 1001 (none
    may win: the lease runs to 1002), then at 1003 (one may win)."""
    def invariant(table, log):
        n = len(log)
        if log["args"].iloc[0][3] == TAKEOVER:
            return one_winner(table, log, TAKEOVER_WHEN)
        problem = one_winner(table, log, "at now=1000 (no lock yet)")
        if problem:
            return problem
        early = run_at_once(acquire, [(table, NAME, f"early-{i}", 1001) for i in range(n)])
        if early["error"].notna().any():
            return f"acquire raised {early['error'].dropna().iloc[0]!r} at now=1001"
        taken = int((early["result"] == True).sum())  # noqa: E712  (True, not just truthy)
        if taken:
            return f"{taken} of {n} workers took the lock at now=1001 while its lease ran to 1002"
        return one_winner(table, run_at_once(acquire, [(table, NAME, f"late-{i}", TAKEOVER) for i in range(n)]),
                          TAKEOVER_WHEN)

    return attack("acquire", acquire, lambda: fresh_table(TABLE),
                  lambda table, n: [(table, NAME, f"worker-{i}", 1000) for i in range(n)], invariant,
                  orders_of=lambda table: [(table, NAME, f"taker-{i}", TAKEOVER) for i in range(2)],
                  explore_setup=expired_lock)


def check_write_fenced(write_fenced):
    """Attack write_fenced(table, token, text): holders of tokens 1 and 2 write in every order, then holders with
    tokens 1..n at once in random order; the report must end with the highest token, and a late write with
    token 1 must be refused and change nothing."""
    def calls(table, n):
        return [(table, token, f"report {token}") for token in random.sample(range(1, n + 1), n)]

    def invariant(table, log):
        errors = log["error"].dropna()
        if len(errors):
            return f"write_fenced raised {errors.iloc[0]!r} instead of returning False"
        n = len(log)
        report = table.get_item(Key=REPORT, ConsistentRead=True).get("Item", {})
        if report.get("fence") != n or report.get("text") != f"report {n}":
            return f"after tokens 1 to {n} the report holds token {report.get('fence')} ({report.get('text')!r})"
        newest = [result for args, result in zip(log["args"], log["result"]) if args[1] == n]
        if newest != [True]:
            return f"the holder of the newest token {n} was answered {newest[0]!r}, not True"
        late = run_at_once(write_fenced, [(table, 1, "late report 1")])
        result, error = next(zip(late["result"], late["error"]))
        after = table.get_item(Key=REPORT, ConsistentRead=True).get("Item", {})
        if error or result is not False or after != report:
            return (f"a late write with token 1 after token {n} was answered {error or result!r} "
                    f"and left {after.get('text')!r}")
        return None

    return attack("write_fenced", write_fenced, lambda: fresh_table(TABLE), calls, invariant,
                  orders_of=lambda table: [(table, token, f"report {token}") for token in (1, 2)])
