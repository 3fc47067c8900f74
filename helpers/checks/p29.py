"""Checkers for notebook 29 (distributed locking)."""
import random
import time
from dataclasses import dataclass

from botocore.exceptions import ClientError

from ..lab.tables import fresh_table
from . import attack, error_words

TABLE = "p29-distributed-locking"
NAME = "invoice-run"
TAKEOVER = 1003
RAN_OUT = 1002
CONFLICT_ATTEMPTS = 10


@dataclass
class Lock:
    """A scenario's lock: its table and name, the worker it was granted to, and that grant's fencing token."""

    table: object
    name: str
    holder: str
    fence: int = 0

    def key(self):
        """The lock item's key."""
        return {"PK": f"LOCK#{self.name}", "SK": "LOCK"}

    def item(self):
        """The lock item as stored now (strongly consistent), or None."""
        return self.table.get_item(Key=self.key(), ConsistentRead=True).get("Item")


def granted(name, holder, fence=0):
    """A fresh table whose lock `name` is held by `holder` (with token `fence`, if any); its lease ran out at 1002."""
    lock = Lock(fresh_table(TABLE), name, holder, fence)
    tokens = {"fence": fence} if fence else {}
    lock.table.put_item(Item={**lock.key(), "owner": holder, "expiresAt": RAN_OUT, **tokens})
    return lock


def through_conflicts(write):
    """write(), sent again after a jittered backoff while it meets an ongoing transaction. DynamoDB refuses a plain
    write naming an item of an ongoing TransactWriteItems with TransactionConflictException, and botocore does not
    retry it: the checker's own clients handle it, as a learner's must, so that a release written as a transaction
    is judged by what it does, not by the checker's takeover giving up. Raises after CONFLICT_ATTEMPTS conflicts."""
    for attempt in range(CONFLICT_ATTEMPTS):
        try:
            return write()
        except ClientError as error:
            if error.response["Error"]["Code"] != "TransactionConflictException" or attempt + 1 == CONFLICT_ATTEMPTS:
                raise
            time.sleep(random.uniform(0, 0.005 * 2 ** attempt))


def take_over(table, name, owner, now, lease=2):
    """The page's acquire: True if the lock was free or its lease ran out before `now`, else False (a conflict with an
    ongoing transaction is sent again)."""
    try:
        through_conflicts(lambda: table.put_item(
            Item={"PK": f"LOCK#{name}", "SK": "LOCK", "owner": owner, "expiresAt": now + lease},
            ConditionExpression="attribute_not_exists(PK) OR expiresAt < :now",
            ExpressionAttributeValues={":now": now}))
        return True
    except ClientError as error:
        if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
            raise
        return False


def take_over_with_token(table, name, owner, now, lease=2):
    """The page's acquire_with_token: the new fencing token if the lock was free or ran out before `now`, else None (a
    conflict with an ongoing transaction is sent again)."""
    try:
        granted_now = through_conflicts(lambda: table.update_item(
            Key={"PK": f"LOCK#{name}", "SK": "LOCK"},
            UpdateExpression="SET #o = :me, expiresAt = :later ADD fence :one",
            ConditionExpression="attribute_not_exists(expiresAt) OR expiresAt < :now",
            ExpressionAttributeNames={"#o": "owner"},
            ExpressionAttributeValues={":me": owner, ":later": now + lease, ":now": now, ":one": 1},
            ReturnValues="UPDATED_NEW"))
        return int(granted_now["Attributes"]["fence"])
    except ClientError as error:
        if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
            raise
        return None


TAKERS = {"acquire": take_over, "acquire_with_token": take_over_with_token}


def playing(exercise, learner):
    """One function for every client: a call ("renew", ...) runs the learner's function, ("acquire", ...) the page's."""
    if not callable(learner):
        raise TypeError(f"Pass your function itself (e.g. {exercise}), not {learner!r}.")

    def play(role, *args):
        return learner(*args) if role == exercise else TAKERS[role](*args)
    return play


def once(function, *args):
    """function(*args) called once: (its result, None) or (None, what it raised in words)."""
    try:
        return function(*args), None
    except Exception as failure:  # a learner's bug is a finding, not a crash of the checker
        return None, error_words(failure)


def shown(item):
    """The lock item in words: 'owner worker-C, expiresAt 1005, fence 2', or 'no lock item'."""
    if not item:
        return "no lock item"
    fields = [f"{name} {item[name]}" for name in ("owner", "expiresAt", "fence") if name in item]
    return ", ".join(fields) or "a lock item with nothing but its key"


def said(result, error):
    """What a call answered, in words: its error, or its result's repr."""
    return error or repr(result)


def call_words(args):
    """A call of a scenario in words: "worker-A's renew at now=1002", "worker-A's release with token 1"."""
    role, _, _, owner, last = args[:5]
    if role == "release":
        return f"{owner}'s release with token {last}"
    if role == "renew":
        return f"{owner}'s renew at now={last}"
    return f"{owner}'s takeover at now={last}"


def raised(log):
    """'worker-A's renew at now=1002 raised ...' for the first call of the run that raised, or None."""
    for args, error in zip(log["args"], log["error"]):
        if error:
            return f"{call_words(args)} raised {error}"
    return None


def renew_calls(lock, n):
    """The holder renews at now=1002, the last second of its lease, while others take over or renew at 1003."""
    others = [("acquire", lock.table, lock.name, f"taker-{i}", TAKEOVER) if i % 2 else
              ("renew", lock.table, lock.name, f"zombie-{i}", TAKEOVER) for i in range(1, n)]
    return [("renew", lock.table, lock.name, lock.holder, RAN_OUT), *others]


def renewal_follow_ups(renew, lock, holder, loser):
    """After the race: the loser's renew is refused, the holder's renews work up to the last second of its lease and
    with the lease it asks for, and its renew after the lease ran out is refused; None or what went wrong."""
    item = lock.item()
    end = item["expiresAt"]
    result, error = once(renew, lock.table, lock.name, loser, end - 1)
    after = lock.item()
    if error or result is not False or after != item:
        return (f"then {loser}, who does not hold lock {lock.name!r} ({holder} does, until {end}), renewed at "
                f"now={end - 1} and was answered {said(result, error)}, leaving {shown(after)}: a renew must check the "
                "owner (#o = :me) in its condition")
    until = end
    for now, lease, why in ((end - 1, 3, "asking for lease=3"), (end + 2, 2, "the last second of its lease")):
        result, error = once(renew, lock.table, lock.name, holder, now, lease)
        after = lock.item() or {}
        if error or result is not True or after.get("owner") != holder or after.get("expiresAt") != now + lease:
            boundary = (" (the lease still runs at now = expiresAt: acquire takes over only once expiresAt < now, so "
                        "renew needs expiresAt >= :now, not expiresAt > :now)" if now == until else "")
            useless = " (a renew that refuses its own holder is safe but useless: every lock is lost when its first " \
                      "lease ends)" if result is False and not boundary else ""
            return (f"then {holder}, which holds lock {lock.name!r} until {until}, renewed at now={now} ({why}) and "
                    f"was answered {said(result, error)}, leaving {shown(after)}: the holder's renew must succeed and "
                    f"set expiresAt to now + lease = {now + lease}{boundary}{useless}")
        until = now + lease
    result, error = once(renew, lock.table, lock.name, holder, until + 1)
    final = lock.item()
    if error or result is not False or final != after:
        return (f"then {holder}, whose lease ran out at {until}, renewed at now={until + 1} and was answered "
                f"{said(result, error)}, leaving {shown(final)}: once expiresAt < now the lock is free for anyone to "
                "take, so a renew must refuse it (expiresAt >= :now in the condition) and its worker must stop and "
                "acquire again")
    return None


def check_renew(renew):
    """Attack renew(table, name, owner, now, lease=2): worker-A renews at now=1002, the last second of its lease, while
    worker-C takes the lock over at 1003, in every order; then the holder and takers or zombies at once, on another
    lock. One worker may be told it holds the lock, the one the item names; then the loser's renew must be refused,
    the holder's must extend the lease (up to its last second), and a renew after the lease ran out refused."""
    def invariant(lock, log):
        problem = raised(log)
        if problem:
            return problem
        told = [args for args, result in zip(log["args"], log["result"]) if result is True]
        item = lock.item() or {}
        if len(told) != 1 or item.get("owner") != told[0][3]:
            who = ", ".join(call_words(args) for args in told) or "nobody"
            why = (": a renew must check the owner and the lease in the same write as it extends it "
                   "(ConditionExpression), not in a read before it" if told else
                   ": the lease was extended but nobody was told so; renew must answer True when its write succeeded")
            return f"{len(told)} workers were told they hold the lock ({who}); the lock item holds {shown(item)}{why}"
        now, lease = told[0][4], 2
        if item.get("expiresAt") != now + lease:
            return (f"{call_words(told[0])} was answered True but left {shown(item)}, not expiresAt {now + lease} "
                    "(now + lease)")
        holder = told[0][3]
        loser = lock.holder if holder != lock.holder else next(args[3] for args in log["args"] if args[3] != holder)
        return renewal_follow_ups(renew, lock, holder, loser)

    return attack("renew", playing("renew", renew), lambda: granted("migration", "worker-B"), renew_calls, invariant,
                  orders_of=lambda lock: [("renew", lock.table, lock.name, lock.holder, RAN_OUT),
                                          ("acquire", lock.table, lock.name, "worker-C", TAKEOVER)],
                  explore_setup=lambda: granted(NAME, "worker-A"))


def release_calls(lock, n):
    """The holder releases with its token while the same worker, restarted, takes the lock over at 1003, and zombies of
    its earlier grants release with older tokens."""
    others = [("acquire_with_token", lock.table, lock.name, lock.holder, TAKEOVER) if i % 2 else
              ("release", lock.table, lock.name, lock.holder, i % (lock.fence - 1) + 1) for i in range(1, n)]
    return [("release", lock.table, lock.name, lock.holder, lock.fence), *others]


def release_follow_ups(release, lock, holder, token):
    """After the race: a release with the grant before's token is refused, the holder's frees the lock and keeps the
    counter; None or what went wrong."""
    item = lock.item()
    result, error = once(release, lock.table, lock.name, holder, lock.fence)
    after = lock.item()
    if error or result is not False or after != item:
        return (f"then {holder}'s release with its old token {lock.fence} (from the grant before) was answered "
                f"{said(result, error)} and left {shown(after)}: the owner alone cannot tell two grants to the same "
                "worker apart; the condition must check the token too (fence = :token)")
    result, error = once(release, lock.table, lock.name, holder, token)
    after = lock.item()
    if error or result is not True or after != {**lock.key(), "fence": token}:
        why = ("deleting the item throws its fence counter away, and the next grant gets token 1 again: REMOVE owner "
               "and expiresAt, keep fence" if after is None else
               "the holder's release with its own token must free the lock: the condition needs #o = :me AND "
               "fence = :token, and nothing more"
               if result is not True else "a released lock keeps only its key and fence: REMOVE owner, expiresAt")
        return (f"then the holder {holder} released with its token {token} and was answered {said(result, error)}, "
                f"leaving {shown(after)}: {why}")
    return None


def check_release(release):
    """Attack release(table, name, owner, token): worker-A, whose token-1 lease ran out at 1002, releases while
    worker-A restarted takes the lock over at 1003 (token 2), in every order; then the same at once with zombies of
    older grants, on another lock. Exactly one takeover must be granted, with the next token, and keep its lock;
    then a release with the old token must be refused and the holder's must free the lock, keeping the counter."""
    def invariant(lock, log):
        problem = raised(log)
        if problem:
            return problem
        tokens = [(args, result) for args, result in zip(log["args"], log["result"])
                  if args[0] == "acquire_with_token" and result is not None]
        item = lock.item()
        if len(tokens) != 1 or tokens[0][1] != lock.fence + 1:
            given = ", ".join(f"{call_words(args)} got token {token}" for args, token in tokens) or "none was granted"
            why = (": the release deleted the lock item and its fence counter with it, so the next grant's "
                   "ADD fence :one counts from nothing and tokens repeat. REMOVE owner and expiresAt; keep fence"
                   if any(token <= lock.fence for _, token in tokens) else "")
            return f"the takeovers were answered: {given}, where exactly one should get token {lock.fence + 1}{why}"
        (args, token), = tokens
        if item != {**lock.key(), "owner": args[3], "expiresAt": TAKEOVER + 2, "fence": token}:
            return (f"{call_words(args)} got token {token}, but the lock item then holds {shown(item)}: a release "
                    f"with token {lock.fence} freed the newer grant; the condition must check the token "
                    "(fence = :token) in the same write")
        zombie = next((call_words(args) for args, result in zip(log["args"], log["result"])
                       if args[0] == "release" and args[4] < lock.fence and result is not False), None)
        if zombie:
            return f"{zombie}, from a grant before the current one, was not answered False"
        return release_follow_ups(release, lock, args[3], token)

    return attack("release", playing("release", release), lambda: granted("migration", "worker-B", 7), release_calls,
                  invariant,
                  orders_of=lambda lock: [("release", lock.table, lock.name, lock.holder, lock.fence),
                                          ("acquire_with_token", lock.table, lock.name, lock.holder, TAKEOVER)],
                  explore_setup=lambda: granted(NAME, "worker-A", 1))


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
