"""Exercise checkers: attack a learner's function the way production would, report the first failing run.

A checker module (one per notebook, e.g. helpers/checks/p22.py) describes an attack: how to set up
fresh state, which calls to fire at once, and the invariant that must hold afterwards. `attack` first runs two
calls (by default) in every order their requests can reach DynamoDB (helpers.explore; with consistency="dynamodb",
the default, also every answer DynamoDB's consistency allows their reads and every moment their transactions' items
can become visible), and reports the plainest order that breaks the invariant, the same every run, with its likely
cause (a wrong answer's first failing orders end the exploration once SHOWN have run). Once every order without a
fault held, the quicker checks of one call at a time come before the orders with faults: the checker's probe (a
boundary a right answer reaches), and one call that meets a table that does not exist (an error that is not a
refusal must come out of the learner's function, not be swallowed into an answer). Last, the slowest stage: it fires
calls at growing concurrency, as real threads released together (with consistency="dynamodb", on a server as weak as
DynamoDB), and stops at the first run that breaks it.
"""
import builtins
import dis
import functools
import html
import re
import threading
import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field

import pandas as pd
import plotly.graph_objects as go
from botocore.exceptions import ClientError

from .. import explore
from ..views import plots
from ..lab.backend import connect
from ..lab.gate import GATED, Gate, attach as attach_gate
from ..lab.knobs import AS_WEAK_AS_DYNAMODB, knobs
from ..lab.trace import tracing
from ..views.widgets import step_through
from .why import own_why, why

SIZES = (2, 5, 10, 20, 50)
TRIES = 3
CLIENT_NAMES = ("alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi")
STRONG = ", every read strongly consistent"  # what a report adds when its orders were explored with less than DynamoDB
SHOWN = 45  # orders a failing exploration runs at least (explored): a scenario of as many is explored whole, and its
# report counts its failing orders among them all; in a larger one a wrong answer's first failing order ends it
STALE_BOUND = 2  # stale answers per order explored when a scenario has more orders than a checker runs (explored):
# a decision on one stale read needs one, a stale read-back of what a lagging index listed two
MISSING_TABLE = "p99-no-such-table"
FAULT_WORDS = {("lost_response",): "lost responses", ("crash",): "crashes",
               ("crash", "lost_response"): "lost responses and crashes"}


@dataclass
class Report:
    """What a checker found: a pass, or the first failing order (or smallest failing run) and what went wrong."""

    exercise: str
    passed: bool
    message: str
    calls: int
    log: pd.DataFrame = field(repr=False)
    schedule: tuple = ()
    scenario: object = field(default=None, repr=False)
    orders: pd.DataFrame = field(default=None, repr=False)
    consistency: str = field(default=explore.DEFAULT_CONSISTENCY, repr=False)  # what the orders were explored with
    faults: tuple = field(default=(), repr=False)
    deliveries: pd.DataFrame = field(default=None, repr=False)  # a stream consumer's invocations (helpers.consumer)

    def __post_init__(self):
        """Record this run in the learner's progress file (helpers.progress)."""
        from ..teaching.progress import record
        record(self)

    def __str__(self):
        verdict = "PASS" if self.passed else "FAIL"
        return f"{verdict} {self.exercise}: {self.message}"

    def _repr_markdown_(self):
        verdict, colour = ("PASS", "#2e7d32") if self.passed else ("FAIL", "#c62828")
        return f'<b style="color:{colour}">{verdict}</b> **{as_markdown(self.exercise)}**: {as_markdown(self.message)}'

    def figure(self):
        """Every order of the exhaustive stage when it failed; a stream consumer's invocations, record by record; else a
        timeline of the reported run, one lane per call."""
        if self.orders is not None:
            return plots.orders(self.orders, f"break {self.exercise}", outcome=self.scenario.outcome)
        if self.deliveries is not None:
            return plots.deliveries(self.deliveries)
        verdict = "PASS: the last run" if self.passed else "FAIL: the smallest failing run"
        return run_timeline(self.log, f"{self.exercise}, {verdict}<br><sup>{self.message}</sup>")

    def replay(self):
        """The failing order in a step-through panel, played to its end (Reset there to play it yourself)."""
        if self.scenario is None:
            raise ValueError(f"{self.exercise} found no failing order to replay: {self.message}")
        panel = step_through(self.scenario.clients, self.scenario.reset, self.scenario.check, orders=self.orders,
                             title=f"{self.exercise}: the failing order, step by step", consistency=self.consistency,
                             faults=self.faults)
        panel.replay(self.schedule)
        return panel


CODE_SPAN = re.compile(r"(`[^`]*`)")
MARKDOWN_MARK = re.compile(r"([\\*_\[\]])")


def as_markdown(text):
    """`text` shown as written in markdown: '<customer>' stays visible (not taken for an HTML tag), '*' and '_' stay
    characters; a `code span` is left as it is (markdown shows it literally)."""
    return "".join(part if CODE_SPAN.fullmatch(part) else MARKDOWN_MARK.sub(r"\\\1", html.escape(part, quote=False))
                   for part in CODE_SPAN.split(text))


class CheckInterrupted(KeyboardInterrupt):
    """A checker stopped by the learner (Kernel > Interrupt): said in one line, recorded as no attempt."""

    def _render_traceback_(self):
        """The one line IPython shows instead of a traceback."""
        return [f"KeyboardInterrupt: {self}"]


def interruptible(check):
    """The checker `check`, which says in one line that it was interrupted, instead of a traceback through the lab."""
    @functools.wraps(check)
    def run(*args, **kwargs):
        try:
            return check(*args, **kwargs)
        except CheckInterrupted:
            raise
        except KeyboardInterrupt:
            raise CheckInterrupted("the check was interrupted before it finished, and nothing was recorded: run the "
                                   "cell again to check your function") from None
    return run


class Scenario:
    """A checker's attack as an exploration: clients that call the learner's function, reset, and a check."""

    def __init__(self, learner, setup, arguments, invariant, names=CLIENT_NAMES):
        self.learner, self.setup, self.arguments, self.invariant = learner, setup, arguments, invariant
        self.state, self.calls, self.problem, self.last_log = None, [], None, None
        self.reset()
        self.clients = {names[i]: self.client(i) for i in range(len(self.calls))}

    def client(self, i):
        """The function client i runs: the learner's function on this schedule's i-th arguments."""
        return lambda: self.learner(*self.calls[i])

    def reset(self):
        """Fresh state and fresh arguments for the next schedule."""
        self.state = self.setup()
        self.calls = list(self.arguments(self.state))

    def log(self, results):
        """The results of one schedule as the log an invariant reads (as run_at_once logs a run); a client that
        crashed was told nothing: its result and error are None, its `crashed` True."""
        rows = []
        for i, (name, result) in enumerate(results.items()):
            error, crashed = None, isinstance(result, explore.Crashed)
            if crashed:
                result = None
            elif isinstance(result, Exception):
                result, error = None, error_words(result)
            rows.append({"call": i, "args": self.calls[i], "result": result, "error": error, "crashed": crashed,
                         "start_ms": float("nan"), "end_ms": float("nan"), "sent_ms": float("nan"),
                         "answered_ms": float("nan")})
        return log_frame(rows)

    def check(self, results):
        """True when the invariant holds after this schedule; the problem and the log it read are kept for the report."""
        self.last_log = self.log(results)
        self.problem = self.invariant(self.state, self.last_log)
        return self.problem is None

    def outcome(self, results):
        """How a schedule ended, in words: what each client returned or raised."""
        return ", ".join(f"{name} {explore.describe(result)}" for name, result in results.items())


@interruptible
def exhaustive(exercise, learner, setup, arguments, invariant, max_orders=explore.MAX_SCHEDULES,
               consistency=explore.DEFAULT_CONSISTENCY, faults=(), names=CLIENT_NAMES, telling=None, quick=None):
    """Run the calls `arguments(state)` in every order, then, if every one held and there are `faults`, in every order
    again with every lost response and crash the explorer can make; a failing Report for the plainest order that
    breaks, or None. A function that breaks without a fault is reported without one, counted among the orders
    without faults, and the faults are not explored: they would only add orders to wait for. Faults are explored
    on the same consistency as the orders without them (DynamoDB's model, by default): a wrong answer may need a
    resent request and a stale read together. quick() -> a failing Report or None: checks quicker than the faults'
    orders, made once every order without a fault held.

    Returns (report or None, how many orders held, as words to end the passing message with).
    """
    report, orders = explored(exercise, learner, setup, arguments, invariant, max_orders, consistency, (), names,
                              telling)
    report = report or (quick() if quick else None)
    if report or not faults:
        return report, "" if report else held_in(orders, consistency=consistency)
    report, faulted = explored(exercise, learner, setup, arguments, invariant, max_orders, consistency, faults, names,
                               telling)
    if report:
        return report, ""
    if consistency == "strong":
        return None, held_in(faulted, faults, consistency)
    with_faults = FAULT_WORDS[tuple(sorted(faults))]
    return None, (f"{held_in(orders)}, and in all {len(faulted)} distinct orders with {with_faults}"
                  f"{bound_words(faulted)}")


def held_in(orders, faults=(), consistency=explore.DEFAULT_CONSISTENCY):
    """', and in all 24 orders of the exhaustive stage' (with the faults they included, and what the reads were if
    less than DynamoDB's): a pass's last words."""
    included = f", {FAULT_WORDS[tuple(sorted(faults))]} included" if faults else ""
    every = f"all {len(orders)} distinct orders" if len(orders) > 1 else "the one order"
    return f", and in {every} of the exhaustive stage{included}{strong_words(consistency)}{bound_words(orders)}"


def bound_words(orders):
    """', each with at most 2 stale answers, of more than 1,000 orders in all' when an exploration ran only the orders
    with at most STALE_BOUND reads answered older than the newest (explored), or ', each with no stale answer' when it
    looked for plainer failing orders (ordered); else ''."""
    bound = orders.attrs.get("max_stale")
    if bound is None:
        return ""
    more = f", of more than {orders.attrs['max_orders']:,} orders in all" if "max_orders" in orders.attrs else ""
    return f", each with {stale_count(bound)}{more}"


def stopped_words(orders):
    """'; the rest were left unexplored: one failing order is enough' when the first failing orders ended an
    exploration, and '; every order with no stale answer holds' when plainer orders were explored and held (ordered)."""
    words = "; the rest were left unexplored: one failing order is enough" if orders.attrs.get("stopped") else ""
    plainer = orders.attrs.get("plainer")
    return words + ("" if plainer is None else f"; every order with {stale_count(plainer)} holds")


def stale_count(bound):
    """'no stale answer', 'at most 1 stale answer', 'at most 2 stale answers'."""
    if bound == 0:
        return "no stale answer"
    return f"at most {bound} stale answer{'' if bound == 1 else 's'}"


def strong_words(consistency):
    """', every read strongly consistent' when the orders were explored so, for a report to say it; else ''."""
    return STRONG if consistency == "strong" else ""


def explored(exercise, learner, setup, arguments, invariant, max_orders=explore.MAX_SCHEDULES,
             consistency=explore.DEFAULT_CONSISTENCY, faults=(), names=CLIENT_NAMES, telling=None):
    """(a failing Report for the plainest order that breaks, or None; every order explored) of one exploration.

    The orders are run depth first from the plainest (every client in turn, every read answered with the newest), where
    a wrong answer meets its first failing orders (ordered): once SHOWN orders have been run, the first that fails
    ends the exploration, and the plainest failing order is then looked for among the orders with fewer stale answers
    (plainer). A right answer is explored whole. A scenario with more than max_orders orders on the lab server's model
    is explored again with only the orders in which at most STALE_BOUND reads get an older answer than the newest
    (explore's max_stale, as CHESS bounds its preemptions): the plainest failing order has the fewest stale answers
    anyway, and the reports say so."""
    with tracing(False):
        scenario = Scenario(learner, setup, arguments, invariant, names)
    problems = {}  # id of an order's results -> (problem, log): rows the explorer drops when it starts over stay out

    def check(results):
        held = scenario.check(results)
        problems[id(results)] = (scenario.problem, scenario.last_log)
        return held

    def run(**bounds):
        """The orders explored (within `bounds`), the first failing one ending them once SHOWN have been run."""
        return explore.explore(scenario.clients, scenario.reset, check, consistency=consistency, faults=faults,
                               stop_after=SHOWN, **bounds)

    try:
        orders = ordered(run, max_schedules=max_orders)
    except explore.TooManyOrders:
        if consistency != "dynamodb" or connect(quiet=True).kind != "embedded":
            raise  # no read is answered stale there: bounding them would leave as many orders
        orders = ordered(run, max_schedules=max_orders, max_stale=STALE_BOUND)
        orders.attrs.setdefault("max_stale", STALE_BOUND)
        orders.attrs["max_orders"] = max_orders
    if orders["ok"].all():
        return None, orders
    place = min(orders.index[~orders["ok"]], key=lambda row: plainness(orders["schedule"][row]))
    first = orders.loc[place]
    problem, log = problems[id(orders["results"][place])]
    *others, last = scenario.clients
    names = f"{', '.join(others)} and {last}" if others else last
    broken = int((~orders["ok"]).sum())
    among = (one_client_words(orders, names) if len(scenario.clients) == 1
             else f"distinct orders in which {names}'s requests can reach DynamoDB")
    message = (f"{' -> '.join(told(first)) or 'before any request'}: {problem} (in {broken} of the "
               f"{'first ' if orders.attrs['stopped'] else ''}{len(orders)} {among}{strong_words(consistency)}"
               f"{bound_words(orders)}{stopped_words(orders)})"
               f"{why(first, **(telling or {})) or own_why(problem)}")
    return Report(exercise, False, message, len(scenario.clients), log, first["schedule"], scenario, orders,
                  consistency, faults), orders


def ordered(run, **bounds):
    """The orders run(**bounds) explored. When the first failing ones ended them early and had stale answers, the
    orders with one stale answer fewer than the fewest found are explored too (the plainest failing order has the
    fewest): if they hold, the orders first found are kept; if one fails, those orders are, looked at the same way
    while they too ended early. attrs: plainer, the most stale answers with which every order was explored and held
    (None if not known)."""
    orders = run(**bounds)
    complete = not orders.attrs["stopped"]
    while not complete:
        fewest = fewest_stale(orders)
        if not fewest:
            return orders
        plainer = run(**{**bounds, "max_stale": fewest - 1})
        if plainer["ok"].all():
            orders.attrs["plainer"] = fewest - 1
            return orders
        plainer.attrs["max_stale"] = fewest - 1
        orders, complete = plainer, not plainer.attrs["stopped"]
        if complete and fewest_stale(orders):  # the orders with fewer stale answers than its failing ones all held
            orders.attrs["plainer"] = fewest_stale(orders) - 1
    return orders


def fewest_stale(orders):
    """The fewest stale answers of an exploration's failing orders."""
    return min(stale_answers(orders["schedule"][row]) for row in orders.index[~orders["ok"]])


def stale_answers(schedule):
    """How many reads of an order were answered older than the newest."""
    return sum(explore.parse_move(move)[1] == "~" for move in schedule)


def one_client_words(orders, name):
    """What the behaviours explored for one client are (one client's requests have one order, so not orders): 'places
    a crash or a lost response can fall in the consumer's requests', or what else tells them apart."""
    varies = what_varies(orders)
    if varies.startswith("where ") and ", and " not in varies:
        return f"places {varies.removeprefix('where ').removesuffix(' falls')} can fall in {name}'s requests"
    return f"behaviours explored for {name}" + (f", which differ in {varies}" if varies else "")


def what_varies(orders):
    """'where a crash or a lost response falls, and the choices made for it': what tells the orders explored for one
    client apart ('' when nothing does)."""
    moves = {explore.parse_move(move)[1:] for schedule in orders["schedule"] for move in schedule}
    kinds = {kind for kind, _ in moves}
    faults = [words for fault, words in (("crash", "a crash"), ("lost", "a lost response")) if ("!", fault) in moves]
    varies = [f"where {' or '.join(faults)} falls"] if faults else []
    varies += ["which reads are answered stale"] if "~" in kinds else []
    varies += ["the choices made for it (the order a Kinesis stream hands records over in)"] if "?" in kinds else []
    return ", and ".join(varies)


def told(order):
    """An order's steps as a report tells them: a transaction's items made visible, and a BatchGetItem's item reads
    but the last, are left out where nothing came between them (told_moves), and so is a stream consumer's finding
    of its stream and shard (BOOKKEEPING: its reads of records, GetRecords, are told)."""
    return [step for step, move in zip(order["steps"], told_moves(order["schedule"]))
            if move and step.split(": ", 1)[-1] not in BOOKKEEPING]


def told_moves(schedule):
    """Each move of a schedule if a report tells it, else None. A transaction's items made visible are not told when
    all of them became visible back to back right after its client's own step (it behaved as one step); a
    BatchGetItem's item reads, when all were read back to back and none stale, are told once, by the last (it read
    them at one moment). A run split by another client's move, or with an item read stale, is told move by move."""
    moves = list(schedule)
    for run, after_step in runs_of_items(schedule):
        kind = explore.item_move(schedule[run[0]])[1]
        back_to_back = run == list(range(run[0], run[0] + len(run)))
        if kind == "+" and back_to_back and after_step:
            for place in run:
                moves[place] = None
        elif kind == "@" and back_to_back and not any(explore.parse_move(schedule[place])[1] == "~" for place in run):
            for place in run[:-1]:
                moves[place] = None
    return moves


def runs_of_items(schedule):
    """(places, whether the first comes right after its client's own step) of each transaction's items made visible
    and each BatchGetItem's items read: a client's moves of one kind between its other moves, split where an item
    repeats (its next request began)."""
    runs, open_runs, last_step = [], {}, {}
    for place, move in enumerate(schedule):
        name, kind, item = explore.item_move(move)
        current = open_runs.get(name)
        if kind not in ("+", "@"):
            open_runs.pop(name, None)
            last_step[name] = place
            continue
        if current is None or current[0] != kind or item in current[1]:
            current = (kind, set(), [])
            open_runs[name] = current
            runs.append((current[2], last_step.get(name) == place - 1))
        current[1].add(item)
        current[2].append(place)
    return runs


def plainness(schedule):
    """How plain an order is, to report the plainest failing one: fewest stale answers and faults, then fewest
    transactions seen half done and BatchGetItems read in parts; among equals, the first explored."""
    odd = sum(explore.parse_move(move)[1] in ("~", "!") for move in schedule)
    half_done = sum(explore.item_move(move)[1] in ("+", "@") for move in told_moves(schedule) if move)
    return odd, half_done


BOOKKEEPING = ("ListStreams", "DescribeStream", "GetShardIterator")  # a consumer finding its stream and shard


@interruptible
def attack(exercise, learner, setup, calls, invariant, sizes=SIZES, tries=TRIES, orders_of=2, explore_setup=None,
           max_orders=explore.MAX_SCHEDULES, consistency=explore.DEFAULT_CONSISTENCY, faults=(), probe=None,
           names=CLIENT_NAMES):
    """Explore `learner` in every order, then fire calls(n) at it concurrently for growing n; report the first break.

    setup() -> state; calls(state, n) -> list of argument tuples; invariant(state, log) -> None or a message.
    orders_of: how many calls the exhaustive stage runs in every order (calls(state, orders_of)), or a
    function state -> argument tuples for a scenario of its own. explore_setup: the exhaustive stage's
    setup when it must differ from the stress stage's (it must give the same state every time); max_orders:
    beyond this many orders the exhaustive stage is skipped, and the report says so. consistency="dynamodb" makes
    the attack as weak as DynamoDB: the exhaustive stage explores the consistency model (helpers.explore) and the
    stress stage runs with as_weak_as_dynamodb, each run starting from setup()'s state on every copy, as if it had
    been there a while (the default, as explore's); "strong" does neither. In the stress stage many calls meet on the
    same items, and a call may give up on a transaction conflict after its retries: one that raised right after a
    conflict told its caller it did nothing, so the invariant judges the run without it (whatever it did write counts).
    faults: ("lost_response", "crash") or either, for the exhaustive stage to explore those too (a crashed client's
    log row has `crashed` True and was told nothing). probe(state) -> None or a message: calls made one at a time on
    a fresh setup() once every order without a fault held, before the faults and the stress stage, that must succeed
    (liveness: a boundary a correct function reaches).
    names: the exhaustive stage's clients, in the order of its calls (a retry is named as its client's: "alice (retry)").
    """
    if not callable(learner):
        raise TypeError(f"Pass your function itself (e.g. {exercise}), not {learner!r}.")
    arguments = orders_of if callable(orders_of) else (lambda state: calls(state, orders_of))
    asked = []

    def quick():
        """The checks of one call at a time: the probe, then the missing table; a failing Report or None."""
        asked.append(True)
        with tracing(False):
            refused = probe(setup()) if probe else None
        if refused:
            return Report(exercise, False, f"{refused} (one call at a time)", 1, log_frame([]))
        hidden = hidden_error(exercise, learner, setup, calls)
        return Report(exercise, False, hidden, 1, log_frame([])) if hidden else None

    try:
        report, explored = exhaustive(exercise, learner, explore_setup or setup, arguments, invariant, max_orders,
                                      consistency, faults, names, quick=quick)
    except explore.TooManyOrders as error:
        report, explored = None, f"; the exhaustive stage did not run: {error}"
    report = report or (None if asked else quick())
    if report:
        return report
    log, lab, gave_up = None, connect(quiet=True), 0
    with tracing(False):
        for n in sizes:
            for _ in range(tries):
                state = setup()  # the run's starting state, there a while: written before the server turns weak
                with as_weak_as(lab) if consistency == "dynamodb" else nullcontext():
                    log = run_at_once(learner, calls(state, n))
                    gave_up += int(log["gave_up"].sum())
                    problem = invariant(state, log[~log["gave_up"]])
                if problem:
                    calls_word = "call" if n == 1 else "calls"
                    return Report(exercise, False, f"{problem} (with {n} concurrent {calls_word}){own_why(problem)}", n,
                                  log)
    total = sum(sizes) * tries
    return Report(exercise, True, f"held in {len(sizes) * tries} runs of up to {sizes[-1]} concurrent calls ({total} "
                                  f"calls in all{gave_up_words(gave_up)}){explored}", sizes[-1], log)


def gave_up_words(gave_up):
    """'; 3 calls gave up on a transaction conflict and raised, and it held without them', or '' for none."""
    if not gave_up:
        return ""
    calls = "call" if gave_up == 1 else "calls"
    return f"; {gave_up} {calls} gave up on a transaction conflict and raised, and it held without them"


@contextmanager
def as_weak_as(lab):
    """The block runs with the lab server as weak as DynamoDB (nothing to change on DynamoDB Local or AWS)."""
    if lab.kind != "embedded":
        yield
        return
    with knobs(lab, quiet=True, **AS_WEAK_AS_DYNAMODB):
        yield


def is_table(value):
    """True for a boto3 Table resource."""
    model = getattr(getattr(value, "meta", None), "resource_model", None)
    return getattr(model, "name", None) == "Table"


def hidden_error(exercise, learner, setup, calls):
    """Call the learner once with its table swapped for one that does not exist; a message if nothing was raised."""
    with tracing(False):
        arguments = calls(setup(), 1)[0]
        if not any(is_table(argument) for argument in arguments):
            return None
        missing = connect(quiet=True).table(MISSING_TABLE)
        try:
            answer = learner(*(missing if is_table(argument) else argument for argument in arguments))
        except Exception:  # any error that comes out is what we want: it was not hidden
            return None
    return (f"with its table missing, {exercise} returned {answer!r} instead of raising ResourceNotFoundException: "
            "it hides errors that are not refusals (catch only the refusal you expect, such as "
            "ConditionalCheckFailedException, and let every other error raise)")


def error_words(failure):
    """What a call raised, as a report says it: DynamoDB's code and message ('ValidationException: Invalid ...'),
    or the exception's type and text."""
    if isinstance(failure, ClientError):
        error = failure.response.get("Error", {})
        code, message = error.get("Code", type(failure).__name__), error.get("Message")
        return f"{code}: {message}" if message else code
    return f"{type(failure).__name__}: {failure}"


def first_error(log):
    """The first error a call of the run raised, in words, or None."""
    errors = log["error"].dropna()
    return errors.iloc[0] if len(errors) else None


LOG_COLUMNS = ("call", "args", "result", "error", "crashed", "start_ms", "end_ms", "sent_ms", "answered_ms")


def log_frame(rows):
    """A run's log as a DataFrame whose results stay Python values: a None stays None, never pandas' NaN (no rows: the
    log of no run, its columns all there)."""
    frame = pd.DataFrame(rows, columns=None if rows else LOG_COLUMNS)
    for column in ("args", "result", "error"):
        frame[column] = pd.Series([row[column] for row in rows], dtype=object)
    return frame


def install_gate(arguments):
    """Register the gate's hooks on the boto3 client of every table (or client) among the calls' arguments."""
    for args in arguments:
        for argument in args:
            client = argument.meta.client if is_table(argument) else argument
            events = getattr(getattr(client, "meta", None), "events", None)
            if events is not None and hasattr(client, "_service_model"):
                attach_gate(client)


def run_at_once(learner, arguments):
    """Call learner(*args) for every args on its own thread, their first requests released together; return a log.

    The log has a row per call: its args, result, error (in words), and in ms since the threads were started:
    start_ms and end_ms of the call, sent_ms and answered_ms of its first request (NaN if it sent none); gave_up, True
    if it raised right after DynamoDB answered it with a transaction conflict. On the lab server, which lets the first
    requests in together, let_in_ms is when it did, in ms since it let in the first.
    """
    install_gate(arguments)
    lab = connect(quiet=True)
    gate = Gate(len(arguments), together_at=lab.endpoint if lab.kind == "embedded" else None)
    rows = [None] * len(arguments)
    origin = time.perf_counter()

    def since(moment):
        """ms from the start of the run to `moment` (NaN if None)."""
        return float("nan") if moment is None else (moment - origin) * 1000

    def one(i, args):
        GATED.gate, GATED.call = gate, i
        began = time.perf_counter()
        try:
            result, error = learner(*args), None
        except Exception as failure:  # a learner's bug is a finding, not a crash of the checker
            result, error = None, error_words(failure)
        finally:
            gate.arrive(i)
            GATED.gate = None
        rows[i] = {"call": i, "args": args, "result": result, "error": error, "crashed": False,
                   "start_ms": since(began), "end_ms": since(time.perf_counter()),
                   "sent_ms": since(gate.sent.get(i)), "answered_ms": since(gate.answered.get(i)),
                   "gave_up": error is not None and gate.last_was_conflict.get(i, False)}

    threads = [threading.Thread(target=one, args=(i, args)) for i, args in enumerate(arguments)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    first = min(gate.let_in.values(), default=None)
    for row in rows:
        let_in = gate.let_in.get(row["call"])
        row["let_in_ms"] = float("nan") if let_in is None else (let_in - first) * 1000
    return log_frame(rows)


def first_request_spread(log):
    """(how far apart the calls' first requests met DynamoDB, the median time one of them took to be answered), in
    ms: on the lab server, how far apart it let them in; elsewhere, how far apart they left."""
    met = log["let_in_ms"].dropna() if log["let_in_ms"].notna().any() else log["sent_ms"].dropna()
    return met.max() - met.min(), (log["answered_ms"] - log["sent_ms"]).median()


def run_timeline(log, title):
    """A plotly figure of one run: each call a bar from start to end, coloured by what it returned."""
    outcome = log["error"].fillna(log["result"].map(lambda result: f"returned {result!r}"))
    figure = go.Figure()
    for label, rows in log.groupby(outcome, sort=True):
        figure.add_bar(y=[f"call {c}" for c in rows["call"]], x=rows["end_ms"] - rows["start_ms"],
                       base=rows["start_ms"], orientation="h", name=label, showlegend=True,
                       text=[label] * len(rows), textposition="inside",
                       hovertext=[f"args={a} result={r}" for a, r in zip(rows["args"], rows["result"])])
    figure.update_layout(title=title, xaxis_title="time since release (ms)", yaxis_title="concurrent call",
                         legend_title="outcome", barmode="overlay", height=200 + 18 * len(log))
    return figure


def unbound_globals(function):
    """The global names `function` (and the functions and lambdas inside it) reads that neither its module nor
    builtins define: a cell run before the notebook's Setup, or a typo."""
    codes, names = [function.__code__], []
    while codes:
        code = codes.pop()
        codes.extend(const for const in code.co_consts if hasattr(const, "co_code"))
        names += [instruction.argval for instruction in dis.get_instructions(code) if instruction.opname == "LOAD_GLOBAL"]
    return [name for name in dict.fromkeys(names)
            if name not in function.__globals__ and not hasattr(builtins, name)]


def require_names(function):
    """Raise the NameError the learner's function would meet, before a checker runs it: not a finding to record, a
    cell to run first (the lab's kernels add which one: helpers/lab/kernel_hints.py)."""
    unbound = unbound_globals(function)
    if unbound:
        raise NameError(f"name {unbound[0]!r} is not defined, and {function.__name__} uses it", name=unbound[0])
