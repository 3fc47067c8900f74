"""Checkers for notebook 23 (optimistic locking)."""
import threading
import time

from botocore.exceptions import ClientError

from ..lab.tables import fresh_table
from . import attack

TABLE = "p23-optimistic-locking"
ACCOUNT = {"PK": "ACCOUNT#a1", "SK": "META"}
PLAYLIST = {"PK": "PLAYLIST#p1", "SK": "META"}
SIZES = (2, 5, 10, 20)
START_BALANCE = 100
ATTEMPTS = 25  # the exercise: "give up (raise) after 25 attempts: with at most 20 callers a correct loop never needs
# more"
RIVAL_DEPOSIT = 10
WRITES = ("PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems")
PATIENCE = 10  # seconds a probed call may take; one that sleeps longer between attempts is given the benefit of doubt


def fresh_account():
    """The exercise table holding one account: balance 100 at version 1."""
    table = fresh_table(TABLE)
    table.put_item(Item={**ACCOUNT, "balance": START_BALANCE, "version": 1})
    return table


def raised(log):
    """The first error a call raised, as a message, or None."""
    errors = log["error"].dropna()
    return f"a call raised {errors.iloc[0]}" if len(errors) else None


def ledger_problem(table, writes, balance):
    """What is wrong with the account after `writes` successful writes that should leave `balance`, or None."""
    item = table.get_item(Key=ACCOUNT, ConsistentRead=True)["Item"]
    if item.get("balance") != balance:
        return (f"the balance is {item.get('balance')}, but {writes} calls reported success "
                f"and should have left {balance}")
    if item.get("version") != 1 + writes:
        return (f"the version is {item.get('version')} after {writes} successful writes from version 1: "
                "each write must be conditional on the version it read and raise it by one")
    return None


def check_deposit(deposit):
    """Attack deposit(table, amount): 2 deposits of 10 in every order, then many at once; every one must land."""
    def invariant(table, log):
        if raised(log):
            return raised(log)
        if not (log["result"] == True).all():  # noqa: E712  (True, not just truthy)
            return "a deposit returned something other than True"
        return ledger_problem(table, len(log), START_BALANCE + 10 * len(log))

    return attack("deposit", deposit, fresh_account, lambda table, n: [(table, 10)] * n, invariant, sizes=SIZES,
                  probe=lambda table: outlasted("deposit", deposit, table, 10))


def check_withdraw(withdraw):
    """Attack withdraw(table, amount): 2 withdrawals of 60 from 100 in every order, then many of 30 at once."""
    def invariant(table, log):
        if raised(log):
            return raised(log)
        amount = log["args"].iloc[0][1]
        accepted = int((log["result"] == True).sum())  # noqa: E712
        allowed = min(len(log), START_BALANCE // amount)
        if accepted != allowed:
            balance = table.get_item(Key=ACCOUNT, ConsistentRead=True)["Item"].get("balance")
            return (f"{accepted} withdrawals of {amount} from {START_BALANCE} reported success (exactly {allowed} "
                    f"can); the balance is {balance}")
        return ledger_problem(table, accepted, START_BALANCE - amount * accepted)

    def two_that_cannot_both_fit(table):
        """Two withdrawals of 60: either alone fits in 100, so the one that comes second must see 40 and refuse."""
        return [(table, 60)] * 2

    return attack("withdraw", withdraw, fresh_account, lambda table, n: [(table, 30)] * n, invariant, sizes=SIZES,
                  orders_of=two_that_cannot_both_fit, probe=lambda table: outlasted("withdraw", withdraw, table, -30))


class GaveUpWaiting(BaseException):
    """Raised in a probed call still running after PATIENCE, at its next request; not an Exception, so that
    `except Exception` cannot keep it."""


class Rival:
    """Another writer that wins every race against one thread's calls: before each write of that thread (an attempt),
    it deposits RIVAL_DEPOSIT and raises the version, so the attempt's version check is refused, until the thread has
    been refused ATTEMPTS times; its next attempt meets no rival. The thread's backoff sleeps are skipped (the rival
    writes at once anyway), so that a loop with a long backoff is judged as quickly as one without."""

    def __init__(self, table):
        self.table, self.client = table, table.meta.client
        self.thread, self.attempts, self.wins, self.writing, self.stopping = None, 0, 0, False, False

    def before_call(self, model, **_):
        """botocore before-call hook: on the rival's thread, count a write as an attempt and win the race before it."""
        if threading.current_thread() is not self.thread or self.writing:
            return
        if self.stopping:
            self.client.meta.events.unregister("before-call.dynamodb", self.before_call)
            raise GaveUpWaiting(f"still retrying after {PATIENCE} s")
        if model.name not in WRITES:
            return
        self.attempts += 1
        if self.attempts <= ATTEMPTS:
            self.writing = True
            try:
                self.table.update_item(Key=ACCOUNT, ExpressionAttributeValues={":d": RIVAL_DEPOSIT, ":o": 1},
                                       UpdateExpression="SET balance = balance + :d, version = version + :o")
            finally:
                self.writing = False
            self.wins += 1

    def run(self, call):
        """Run call() on a thread of its own against the rival; (its result, its exception or None). A call still
        running after PATIENCE (sleeping in a way the rival cannot skip) is left to end at its next request."""
        outcome = {"result": None, "error": None}

        def target():
            try:
                outcome["result"] = call()
            except Exception as error:  # what the learner's call raised is a finding
                outcome["error"] = error
            except GaveUpWaiting:
                pass

        sleep, self.thread = time.sleep, threading.Thread(target=target, daemon=True)
        time.sleep = lambda seconds: None if threading.current_thread() is self.thread else sleep(seconds)
        self.client.meta.events.register("before-call.dynamodb", self.before_call)
        try:
            self.thread.start()
            self.thread.join(PATIENCE)
        finally:
            time.sleep = sleep
        if self.thread.is_alive():
            self.stopping = True  # its next request raises GaveUpWaiting: it writes nothing more
        else:
            self.client.meta.events.unregister("before-call.dynamodb", self.before_call)
        return outcome["result"], outcome["error"]


def outlasted(exercise, learner, table, change):
    """Call learner(table, abs(change)) once, `change` being what it does to the balance, while another writer wins
    every race for ATTEMPTS attempts: a call that tries again after that many refusals is not bounded as the exercise
    asks (no writer in the other stages can win that many races in a row), and one that then returns instead of
    raising hides why it stopped; None or what went wrong."""
    rival = Rival(table)
    result, error = rival.run(lambda: learner(table, abs(change)))
    if rival.attempts > ATTEMPTS:
        answered = f"raised {type(error).__name__}" if error else f"returned {result!r}"
        return (f"another writer deposited {RIVAL_DEPOSIT} before each of {exercise}'s writes, so its version "
                f"check was refused {ATTEMPTS} times in a row, and {exercise} tried again instead of giving up "
                f"({rival.attempts} attempts in all, then {answered}): raise after {ATTEMPTS} attempts, as the "
                "exercise asks. A loop with no bound keeps its caller waiting as long as others keep winning; the "
                "error tells it to try later")
    if error is None and result is True:
        return ledger_problem(table, rival.wins + 1, START_BALANCE + RIVAL_DEPOSIT * rival.wins + change)
    if error is None and not rival.stopping:
        balance = table.get_item(Key=ACCOUNT, ConsistentRead=True)["Item"]["balance"]
        return (f"another writer deposited {RIVAL_DEPOSIT} before each of {exercise}'s writes, so its version "
                f"check was refused {rival.attempts} times in a row, and {exercise} returned {result!r}: raise after "
                f"{ATTEMPTS} attempts, as the exercise asks (an except that turns the error into a return value "
                "hides it too). The version check was refused because others wrote first, not because the "
                f"{exercise} cannot be made (the balance is {balance}): {result!r} tells the caller it was refused "
                "for good, where an error tells it to try later")
    return None


def fresh_playlist():
    """The exercise table holding one playlist: 'Road trip' with one song, at version 1."""
    table = fresh_table(TABLE)
    table.put_item(Item={**PLAYLIST, "title": "Road trip", "songs": ["song-0"], "version": 1})
    return table


def add_song(table, song, attempts=25):
    """The other client, written correctly: read the playlist, append a song, put it back if the version held."""
    for _ in range(attempts):
        item = table.get_item(Key=PLAYLIST, ConsistentRead=True)["Item"]
        try:
            table.put_item(Item={**item, "songs": item["songs"] + [song], "version": item["version"] + 1},
                           ConditionExpression="version = :v", ExpressionAttributeValues={":v": item["version"]})
            return True
        except ClientError as error:
            if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
    raise RuntimeError("add_song gave up after retries")


def check_rename(rename):
    """Attack rename(table, title) beside add_song: one of each in every order, then renames and adds at once."""
    if not callable(rename):
        raise TypeError(f"Pass your function itself (e.g. rename), not {rename!r}.")

    def client(action, *args):
        """Run one call of this scenario: the learner's rename or the checker's add_song."""
        return action(*args)

    def calls(table, n):
        """n calls alternating rename (to 'Mix 0', 'Mix 2', ...) and add_song ('song-1', 'song-3', ...)."""
        return [(rename, table, f"Mix {i}") if i % 2 == 0 else (add_song, table, f"song-{i}") for i in range(n)]

    def invariant(table, log):
        if raised(log):
            return raised(log)
        if not (log["result"] == True).all():  # noqa: E712  (True, not just truthy)
            return "a call returned something other than True"
        item = table.get_item(Key=PLAYLIST, ConsistentRead=True)["Item"]
        titles = [args[2] for args in log["args"] if args[0] is rename]
        songs = ["song-0"] + [args[2] for args in log["args"] if args[0] is add_song]
        lost = [song for song in songs if song not in item.get("songs", [])]
        if lost:
            return f"the playlist lost {', '.join(lost)}: a rename put back a copy read before the song was added"
        if item.get("title") not in titles:
            return (f"the title is {item.get('title')!r}, though the rename to {', '.join(map(repr, titles))} reported "
                    "success: a writer holding an older copy put the old title back")
        if item.get("version") != 1 + len(log):
            return (f"the version is {item.get('version')} after {len(log)} successful writes from version 1: a rename "
                    "must raise it too, or add_song, holding an older copy, passes its version check and puts the old "
                    "title back")
        return None

    def one_of_each(table):
        """alice renames the playlist to 'Summer' while bob adds 'song-1'."""
        return [(rename, table, "Summer"), (add_song, table, "song-1")]

    return attack("rename", client, fresh_playlist, calls, invariant, sizes=SIZES, orders_of=one_of_each)
