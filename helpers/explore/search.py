"""Which order runs next: one run follows a prefix of choices, then the first move possible that does not sleep
(Walk); the depth-first search changes the deepest choice with an untried sibling (next_prefix), as CHESS does."""
from dataclasses import replace
from math import factorial, prod

from .errors import ExplorationError, TooManyOrders
from .hold import strays_error, watched
from .model import start_state
from .moves import batch_item, parse_move, transition, worth_trying
from .reduction import Keys, asleep, wake
from .run import Run
from .steps import Arrival


def run_schedule(clients, reset, prefix, timeout, workers, lab, server=None, faults=(), keys=None,
                 watch_streams=True, max_stale=None):
    """Run one schedule: follow `prefix`, then always the first move possible that does not sleep; return (run,
    choices). run.blocked is True when every possible move slept (the run repeats a behaviour already run).

    run.cost is (write units, of which on refused writes) the clients' requests cost, as the lab server billed them
    (None elsewhere).

    prefix and choices are lists of (move chosen, moves that were possible); along the prefix the same
    moves must be possible as when it was first run, or the scenario does not repeat itself. Choosing a read
    is two decisions: which client, then (asked of the server only then) which of the read's answers. The moves
    possible at a point, less those that sleep there (reduction.py), are tried in order; a sibling tried before the
    one chosen sleeps below it until a move that does not commute with it is made. max_stale: once the run has given
    that many reads an older answer than the newest, its reads get the newest only (explore says why).
    """
    start_state(reset, server)
    run = Run(clients, timeout, server, faults, metered=lab.kind == "embedded", keys=keys or Keys(lab.client),
              watch_streams=watch_streams)
    choices = []
    try:
        with watched(run):
            run.play(workers, Walk(run, prefix, choices, max_stale))
        if run.blocked:
            run.stop()
            if server is not None:
                server.post({"settle": True})  # no transaction of the abandoned run stays ongoing
    except BaseException:
        run.stop()
        raise
    if run.strays:
        raise strays_error(run)
    if run.problem:
        raise run.problem
    return run, choices


class Walk:
    """The explorer's moves in one run: the prefix's, then the first possible that does not sleep (Run.play makes
    them on the clients' threads)."""

    def __init__(self, run, prefix, choices, max_stale=None):
        self.run, self.prefix, self.choices, self.max_stale = run, prefix, choices, max_stale
        self.sleep, self.stale = [], 0  # stale: the reads given an older answer than the newest so far
        self.last = None  # (step, footprint, sleep entries as they stood before it) of the move made last

    def next(self):
        """Make moves until one lets a client run: its name; None once no client is held and nothing is on its way
        (the order has ended), or when every possible move sleeps (run.blocked: a behaviour already run)."""
        run = self.run
        while True:
            if self.last is not None:
                self.after(*self.last)
            run.deliver_unwatched()
            if not run.pending:
                return None
            chosen, tried = choose(run, self.prefix, self.choices, self.sleep,
                                   newest_only=self.max_stale is not None and self.stale >= self.max_stale)
            if chosen is None:
                run.blocked = True
                return None
            step, footprint = transition(chosen), run.footprint(chosen)
            sleeping = [(entry, every, run.footprint(entry, every)) for entry, every in self.sleep + tried
                        if transition(entry) != step]  # each as it stands now, before the move
            made, going = run.make(chosen, footprint)
            self.stale += parse_move(chosen)[1] == "~"
            self.last = (made, footprint, sleeping)
            if going is not None:
                return going

    def after(self, made, footprint, sleeping):
        """Once the clients have settled after a move: the sleep set and footprint it leaves."""
        self.last = None
        self.run.settled(made)
        if footprint.writes and not footprint.fault and getattr(made, "answer", "OK") != "OK":
            footprint = replace(footprint, writes=False)  # refused or cancelled: it only read its items
        self.sleep = wake(sleeping, footprint)
        self.run.prints.append(footprint)


def choose(run, prefix, choices, sleep, newest_only=False):
    """The next move (prefix's while it lasts) among those possible that do not sleep, and the sleep entries of the
    siblings tried before it; (None, []) when every possible move sleeps. newest_only: a read's older answers are
    not possible."""
    possible = [move for move in worth_trying(run.moves(answers=False)) if not asleep(sleep, move)]
    if not possible:
        return None, []
    chosen = decide(tuple(possible), prefix, choices)
    tried = [(move, True) for move in possible[:possible.index(chosen)]]
    if chosen in run.held or batch_item(chosen) is not None:
        answers = [move for move in run.answers(chosen)
                   if not asleep(sleep, move, chosen) and not (newest_only and parse_move(move)[1] == "~")]
        if not answers:
            return None, []
        chosen = decide(tuple(answers), prefix, choices)
        tried += [(move, False) for move in answers[:answers.index(chosen)]]
    return chosen, tried


def decide(enabled, prefix, choices):
    """The move to make among `enabled`: the prefix's while it lasts (it must offer the same moves), else the first."""
    if len(choices) < len(prefix):
        chosen, expected = prefix[len(choices)]
        if enabled != expected:
            raise ExplorationError(not_repeatable(choices, expected, enabled))
    else:
        chosen = enabled[0]
    choices.append((chosen, enabled))
    return chosen


def not_repeatable(choices, expected, enabled):
    """Why a schedule could not be replayed: the scenario did not behave the same way twice."""
    done = " -> ".join(name for name, _ in choices) or "the start"
    return (f"The scenario did not repeat itself: after {done}, the clients with a request to send were "
            f"{', '.join(expected) or 'nobody'} the first time and {', '.join(enabled) or 'nobody'} this time. Make "
            "reset() restore every item the clients read, and make each client depend only on what DynamoDB answers "
            "(not on the clock, randomness or shared variables).")


def next_prefix(choices):
    """The next schedule of the depth-first search: change the deepest choice that has an untried sibling."""
    for depth in range(len(choices) - 1, -1, -1):
        chosen, enabled = choices[depth]
        later = enabled[enabled.index(chosen) + 1:]
        if later:
            return choices[:depth] + [(later[0], enabled)]
    return None


def too_many(max_schedules, first_run):
    """The ValueError for a scenario with more orders than max_schedules, with an estimate and the cure."""
    counts = {}
    for request in first_run.steps:
        name = "records entering streams" if isinstance(request, Arrival) else request.client
        counts[name] = counts.get(name, 0) + 1
    estimate = factorial(sum(counts.values())) // prod(factorial(n) for n in counts.values())
    per_client = ", ".join(f"{name} {n}" for name, n in counts.items())
    return TooManyOrders(
        f"This scenario has more than {max_schedules:,} possible orders (about {estimate:,} if every client always "
        f"made as many requests as in the first order: {per_client}). Use fewer clients or fewer requests per "
        "client (3 clients of 2 requests each have 90 orders; 3 of 3 have 1,680), or pass a larger max_schedules (or "
        "max_stale=1, for only the orders in which at most one read gets an older answer than the newest).")
