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
        return f"acquire raised {errors.iloc[0]} {when}"
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
            return f"acquire raised {early['error'].dropna().iloc[0]} at now=1001"
        taken = int((early["result"] == True).sum())  # noqa: E712  (True, not just truthy)
        if taken:
            return f"{taken} of {n} workers took the lock at now=1001 while its lease ran to 1002"
        return one_winner(table, run_at_once(acquire, [(table, NAME, f"late-{i}", TAKEOVER) for i in range(n)]),
                          TAKEOVER_WHEN)

    return attack("acquire", acquire, lambda: fresh_table(TABLE),
                  lambda table, n: [(table, NAME, f"worker-{i}", 1000) for i in range(n)], invariant,
                  orders_of=lambda table: [(table, NAME, f"taker-{i}", TAKEOVER) for i in range(2)],
                  explore_setup=expired_lock)


def answers(log):
    """What each token's write was answered, in words: 'the writes were answered: token 1 True, token 2 False'."""
    told = sorted((args[1], error or repr(result)) for args, result, error in zip(log["args"], log["result"], log["error"]))
    return "the writes were answered: " + ", ".join(f"token {token} {answer}" for token, answer in told)


def check_write_fenced(write_fenced):
    """Attack write_fenced(table, token, text): holders of tokens 1 and 2 write in every order, then holders with
    tokens 1..n at once in random order; the report must end with the highest token, and a late write with
    token 1 must be refused and change nothing, and a second write with the newest token must be accepted."""
    def calls(table, n):
        return [(table, token, f"report {token}") for token in random.sample(range(1, n + 1), n)]

    def invariant(table, log):
        errors = log["error"].dropna()
        if len(errors):
            return f"write_fenced raised {errors.iloc[0]} (instead of returning False)"
        n = len(log)
        report = table.get_item(Key=REPORT, ConsistentRead=True).get("Item", {})
        if report.get("fence") != n or report.get("text") != f"report {n}":
            stored = "no report" if not report else f"token {report.get('fence')} ({report.get('text')!r})"
            return f"after tokens 1 to {n} the report holds {stored}; {answers(log)}"
        newest = [result for args, result in zip(log["args"], log["result"]) if args[1] == n]
        if newest != [True]:
            return f"the holder of the newest token {n} was answered {newest[0]!r}, not True"
        late = run_at_once(write_fenced, [(table, 1, "late report 1")])
        result, error = next(zip(late["result"], late["error"]))
        after = table.get_item(Key=REPORT, ConsistentRead=True).get("Item", {})
        if error or result is not False or after != report:
            return (f"a late write with token 1 after token {n} was answered {error or result!r} "
                    f"and left {after.get('text')!r}")
        again = run_at_once(write_fenced, [(table, n, f"report {n}, revised")])
        result, error = next(zip(again["result"], again["error"]))
        after = table.get_item(Key=REPORT, ConsistentRead=True).get("Item", {})
        if error or result is not True or after.get("text") != f"report {n}, revised":
            return (f"the holder of token {n} wrote a second time with the same token and was answered "
                    f"{error or result!r}, leaving {after.get('text')!r}: the lock holder's own next write must be "
                    "accepted (fence <= :token, not fence < :token)")
        return None

    return attack("write_fenced", write_fenced, lambda: fresh_table(TABLE), calls, invariant,
                  orders_of=lambda table: [(table, token, f"report {token}") for token in (1, 2)])


def claim(job, worker, expires_at):
    """The claim item of `job`, held by `worker` until `expires_at`."""
    return {"PK": f"CLAIM#{job}", "SK": "CLAIM", "worker": worker, "expiresAt": expires_at}


def queue(table, n):
    """job-0 claimed by a live worker until 2000; jobs 1..n alternately with a claim that ran out at 1002, and free.

    Returns the job ids in order.
    """
    jobs = [f"job-{i}" for i in range(n + 1)]
    with table.batch_writer() as batch:
        batch.put_item(Item=claim("job-0", "busy", 2000))
        for i in range(1, n + 1, 2):
            batch.put_item(Item=claim(f"job-{i}", "crashed", 1002))
    return jobs


def check_claim_job(claim_job):
    """Attack claim_job(table, jobs, worker, now, lease=30): at now=1003, two workers share job-1 (its claim ran
    out at 1002) and job-2 (never claimed) in every order; then n workers share n such jobs at once, beside job-0,
    whose claim runs to 2000. No job may go to two workers or be taken from a live claim, and no worker may be
    told that nothing is free while a job still is."""
    def invariant(table, log):
        errors = log["error"].dropna()
        if len(errors):
            return f"claim_job raised {errors.iloc[0]}"
        now = log["args"].iloc[0][3]
        claims = {item["PK"].split("#", 1)[1]: item for item in table.scan(ConsistentRead=True)["Items"]}
        results = [None if result is None or result != result else result for result in log["result"]]  # NaN: None
        told = {}
        for args, result in zip(log["args"], results):
            if result is not None:
                told.setdefault(result, []).append(args[2])
        for job, workers in sorted(told.items()):
            holder = claims.get(job, {}).get("worker")
            if len(workers) > 1 or holder != workers[0]:
                return (f"{len(workers)} worker{'s were' if len(workers) > 1 else ' was'} told {job} is theirs "
                        f"({', '.join(sorted(workers))}); its claim names {holder}")
        if claims.get("job-0", {}).get("worker", "busy") != "busy":
            return f"{claims['job-0']['worker']} took job-0 from busy, whose claim ran to 2000"
        free = sorted(job for job in log["args"].iloc[0][1] if job not in claims or claims[job]["expiresAt"] < now)
        idle = [args[2] for args, result in zip(log["args"], results) if result is None]
        if idle and free:
            left = claims.get(free[0])
            why = f"its claim by {left['worker']} ran out at {left['expiresAt']}" if left else "it has no claim"
            return f"{idle[0]} was told no job is free at now={now}, but {free[0]} is: {why}"
        return None

    def two_jobs():
        """job-1, whose claim ran out at 1002, and job-2, never claimed."""
        table = fresh_table(TABLE)
        table.put_item(Item=claim("job-1", "crashed", 1002))
        return table

    def calls(table, n):
        """n workers at now=1003 for the n + 1 jobs of queue(table, n)."""
        jobs = queue(table, n)
        return [(table, jobs, f"worker-{i}", TAKEOVER) for i in range(n)]

    return attack("claim_job", claim_job, lambda: fresh_table(TABLE), calls, invariant, sizes=(2, 5, 10, 20), tries=2,
                  orders_of=lambda table: [(table, ["job-1", "job-2"], f"worker-{i}", TAKEOVER) for i in range(2)],
                  explore_setup=two_jobs)
