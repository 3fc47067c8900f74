"""Which order runs next. Optimal DPOR (reduction.py): each run follows the points of the order before it, then the
wake-up tree of the point it branches at (Guided), then the first possible move that does not sleep; after it, its
races fill the wake-up trees and the deepest point with a branch left is where the next run branches (Search). Every
exploration runs so, arrivals and transactions of several items included (Guided names arrivals the same in every
order). Walk is the plain depth-first search by sleep sets alone (Godefroid, 1996: a prefix of choices, then the
first move possible that does not sleep; next_prefix changes the deepest choice with an untried sibling, as CHESS
does), which tests/test_explore_optimal.py runs with nothing ever asleep to enumerate every order the reduction is
checked against."""
import json
from dataclasses import replace
from math import factorial, prod

from .errors import ExplorationError, TooManyOrders
from .hold import strays_error, watched
from .model import start_state
from .moves import FAULT_MOVES, batch_item, parse_move, transition, worth_trying
from .reduction import (EVERYTHING, STREAM_RECORDS, Branch, Keys, asleep, frees, happens_before, independent, insert,
                        races, reversed_race, wake, weak_initial)
from .run import Run
from .steps import Arrival


def run_schedule(clients, reset, prefix, timeout, workers, lab, server=None, faults=(), keys=None,
                 watch_streams=True, max_stale=None, search=None):
    """Run one schedule: follow `prefix` (or, given a Search, its points and wake-up trees: the walk is returned in
    place of the choices), then always the first move possible that does not sleep; return (run, choices).
    run.blocked is True when every possible move slept (the run repeats a behaviour already run).

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
            walk = Walk(run, prefix, choices, max_stale) if search is None else Guided(run, search, max_stale)
            run.play(workers, walk)
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
    return run, choices if search is None else walk


class Mover:
    """What Walk and Guided share: the explorer's moves in one run, made until one lets a client run (Run.play makes
    them on the clients' threads). pick() -> (the move, what take needs of the choice), the move None when none may
    be made; take(move, that) makes it and returns the client it lets run, or None."""

    def next(self):
        """Make moves until one lets a client run: its name; None once no client is held and nothing is on its way
        (the order has ended), or when no move may be made (run.blocked: a behaviour already run)."""
        run = self.run
        while True:
            if self.last is not None:
                self.after(*self.last)
            run.deliver_unwatched()
            if not run.pending:
                return None
            chosen, choice = self.pick()
            if chosen is None:
                run.blocked = True
                return None
            going = self.take(chosen, choice)
            if going is not None:
                return going


class Walk(Mover):
    """The explorer's moves in one run: the prefix's, then the first possible that does not sleep."""

    def __init__(self, run, prefix, choices, max_stale=None):
        self.run, self.prefix, self.choices, self.max_stale = run, prefix, choices, max_stale
        self.sleep, self.stale = [], 0  # stale: the reads given an older answer than the newest so far
        self.last = None  # (step, footprint, sleep entries as they stood before it) of the move made last

    def pick(self):
        """(the prefix's move, or the first possible that does not sleep; the siblings tried before it)."""
        return choose(self.run, self.prefix, self.choices, self.sleep,
                      newest_only=self.max_stale is not None and self.stale >= self.max_stale)

    def take(self, chosen, tried):
        """Make `chosen`, keeping the sleep entries as they stand before it; the client it lets run, or None."""
        run = self.run
        step, footprint = transition(chosen), run.footprint(chosen)
        sleeping = [(entry, every, run.footprint(entry, every)) for entry, every in self.sleep + tried
                    if transition(entry) != step]  # each as it stands now, before the move
        made, going = run.make(chosen, footprint)
        self.stale += parse_move(chosen)[1] == "~"
        self.last = (made, footprint, sleeping)
        return going

    def after(self, made, footprint, sleeping):
        """Once the clients have settled after a move: the sleep set and footprint it leaves."""
        self.last = None
        self.run.settled(made)
        footprint = as_made(footprint, made)
        self.sleep = wake(sleeping, footprint)
        self.run.prints.append(footprint)


def as_made(footprint, made):
    """The footprint of a move once made: a write refused by its condition, or a transaction cancelled, wrote nothing
    (DynamoDB answered an error: the lab server's x-lab-versions then names nothing it wrote): it only read its items.
    A response lost on its way back (botocore's ConnectionClosedError) may have been applied: still a write."""
    if footprint.writes and not footprint.fault and str(getattr(made, "answer", "OK")).endswith("Exception"):
        return replace(footprint, writes=False)  # not a response lost on its way back (ConnectionClosedError)
    return footprint


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


class Point:
    """One point of the order being run, for optimal DPOR: the moves asleep there ((move, footprint, refused)), its
    wake-up tree (the first branch being run), the moves offered there and the requests and items they make."""

    def __init__(self, sleep, tree):
        self.sleep, self.tree, self.new, self.fresh = sleep, tree, True, True  # new: reached first in this run
        self.offered, self.possible, self.made = (), frozenset(), None  # made: (footprint, refused) of its move


class Search:
    """Optimal DPOR over an exploration's runs: the points of the order run last (reduction.py)."""

    def __init__(self, rank):
        self.points, self.rank = [], rank
        self.arrivals = {}  # (by, item or move that sent it, k) -> the number of the arrival's move, for every run

    def point(self, depth, sleep):
        """The point at `depth`: the one the runs before reached, or a new one whose wake-up tree is what the branch
        being run at the point before holds below it."""
        if depth == len(self.points):
            self.points.append(Point(sleep, self.points[depth - 1].tree[0].after if depth else []))
        return self.points[depth]

    def enablers(self, steps):
        """Per step of an order ((move, footprint) pairs), the moves before it that it needs, as a bit set: the one that
        made it possible; for a stream record, every move before it that wrote its item (the one that made the record
        may have done so while an earlier record of the item was on its way), or its table when the record's item
        cannot be told, and every transaction's end; for a move that meets a transaction the item made visible last
        ended, the transaction's other items made visible (it ended once all were)."""
        found = []
        for place, (move, print_) in enumerate(steps):
            step, since = transition(move), place
            while since > 0 and step in self.points[since - 1].possible and transition(steps[since - 1][0]) != step:
                since -= 1
            needs = 1 << since - 1 if since else 0
            for stream in (stream for kind, stream in print_.items if kind == STREAM_RECORDS and step[1] == "#"):
                values = self.record_key(move)
                needs |= sum(1 << earlier for earlier, (_, other) in enumerate(steps[:place])
                             if other.frees or other.writes and any(
                                 same_table(item, stream) and (values is None or key_values(item[1]) in (values, None))
                                 for item in other.items))
            for ended in (earlier for earlier, (_, other) in enumerate(steps[:place]) if frees(other, print_)):
                needs |= revealed_with(steps, ended)
            found.append(needs)
        return found

    def record_key(self, move):
        """The key values of the item a stream record's move ("stream#3") is about, as strings, from the label the lab
        server gave its arrival ("{PK: 'ORDER#2'} into orders's stream"); None when they cannot be told."""
        number = parse_move(move)[2] if parse_move(move)[1] == "#" else None
        identity = next((identity for identity, known in self.arrivals.items()
                         if identity[0] == "stream" and str(known) == str(number)), None)
        if identity is None or not isinstance(identity[1], tuple) or len(identity[1]) != 2:
            return None
        key = identity[1][1].partition(" into ")[0]
        if not (key.startswith("{") and key.endswith("}")):
            return None
        return tuple(sorted(part.partition(": ")[2].strip("'") for part in key[1:-1].split(", ")))

    def finish(self, run, walk):
        """After a run: put the sequence each of its races asks for into the wake-up tree of the point before the race,
        and go to the deepest point with a branch left. The second move of a race is tried as its request's first answer
        (its others are branches where it is made: a read moved before a write has other answers there) and with its
        footprint as offered (the walk's: before it was made; a write refused where it ran may be applied there).
        Returns (whether a run is left, each move's place in the first of the orders equivalent to it, each point
        taking the first move possible in the scenario's order of clients)."""
        steps = list(zip(walk.taken, walk.prints))
        enablers = self.enablers(steps)
        before = happens_before(steps, enablers)
        for earlier, later in races(steps, enablers, before):
            sequence = reversed_race(steps, before, earlier, later)[:-1] + [(first_answer(walk.taken[later]),
                                                                             walk.offered[later])]
            point = self.points[earlier]
            if not any(weak_initial(move, print_, sequence) for move, print_, _ in point.sleep):
                insert(point.tree, sequence, self.rank, start=1)
        for point in self.points:
            point.new = False
        return self.advance(len(steps)), self.first_order(list(zip(run.taken, walk.prints)), before)

    def advance(self, made):
        """Put each finished branch to sleep at its point, from the deepest up, until one has a branch left."""
        del self.points[made:]
        while self.points:
            point = self.points[-1]
            done = point.tree.pop(0)
            point.sleep.append((done.move, *point.made))
            if point.tree:
                point.fresh = True
                return True
            self.points.pop()
        return False

    def first_order(self, steps, before):
        """The places of the steps in the first of their equivalent orders, each point taking the first move possible
        in the scenario's order (the order the sleep sets' depth-first search runs: arrivals by the lab server's
        numbers, as it offers them)."""
        order, placed = [], 0
        while len(order) < len(steps):
            ready = [place for place in range(len(steps)) if not placed >> place & 1 and not before[place] & ~placed]
            chosen = min(ready, key=lambda place: (self.rank(steps[place][0]), place))
            order.append(chosen)
            placed |= 1 << chosen
        return order


def ranking(clients, faults):
    """The key that orders moves as a point offers them: what may arrive first, then by client in the scenario's order,
    then by answer, fault, option or item."""
    names, words = list(clients), [FAULT_MOVES[fault] for fault in faults]

    def rank(move):
        name, kind, place = parse_move(move)
        item = batch_item(move)
        if kind == "#":
            return -1, 0, place
        client = names.index(name) if name in names else len(names)
        if item is not None:
            return client, item, place if kind == "~" else 0
        if kind == "!":
            return client, 0, 1 + words.index(place) if place in words else len(words) + 1
        return client, 0, place if isinstance(place, int) else 0
    return rank


def revealed_with(steps, last):
    """The other items made visible of the transaction whose last item step `last` made visible, as a bit set."""
    client, found = steps[last][1].client, 0
    for earlier in range(last - 1, -1, -1):
        if steps[earlier][1].client == client:
            if transition(steps[earlier][0])[1] != "+":
                return found
            found |= 1 << earlier
    return found


def key_values(key):
    """A footprint item's key ('["ORDER#2"]', '[{"S": "ORDER#2"}]') as its values' strings, sorted; None for a whole
    table ("*") or a key that cannot be read."""
    try:
        values = json.loads(key)
    except (TypeError, ValueError):
        return None
    if not isinstance(values, list):
        return None
    return tuple(sorted(str(next(iter(value.values()))) if isinstance(value, dict) and value else str(value)
                        for value in values))


def same_table(item, stream):
    """True when `item` ((place, key)) is in the table whose stream is `stream` ("<table> in <Region>")."""
    return item[0] in (stream, stream.partition(" in ")[0]) or item == EVERYTHING


def first_answer(move):
    """The first of the moves making the same request or item as `move`: "alice" for "alice~2" or "alice!lost",
    "alice?0" for "alice?1", "alice@1" for "alice@1~2"."""
    name, kind, _ = parse_move(move)
    if kind == "?":
        return f"{name}?0"
    if kind == "!":
        return name
    return first_level(move) if kind == "~" else move


def first_level(move):
    """The move a point offers before a read's answer is asked: "alice" for "alice~2" or "alice?1", "alice@1" for
    "alice@1~2"; others as they are."""
    name, kind, _ = parse_move(move)
    item = batch_item(move)
    if item is not None:
        return f"{name}@{item}"
    return name if kind in ("", "~", "?") else move


class Guided(Mover):
    """The explorer's moves in one run under optimal DPOR: each point's branch, the wake-up tree's below the point
    where it branches, then the first possible move that does not sleep."""

    def __init__(self, run, search, max_stale=None):
        self.run, self.search, self.max_stale = run, search, max_stale
        self.sleep, self.stale, self.last = [], 0, None
        self.offered = []  # each move's footprint as it was offered, before it was made (as_made)
        self.taken, self.prints = [], []  # the moves made and their footprints, arrivals named as the search names them
        self.named, self.served = {}, {}  # an arrival's move as the lab server names it -> the search's, and back
        self.identities = []  # of the arrivals named so far in this run: (by, item or move that sent it, k)

    def take(self, chosen, point):
        """Make `chosen` at `point`, keeping the point's sleep entries as they stand before it; the client it lets run,
        or None."""
        step, footprint = transition(chosen), self.footprint(chosen)
        sleeping = [(move, self.now(move, print_, refused), refused) for move, print_, refused in point.sleep
                    if transition(move) != step]
        made, going = self.run.make(self.served.get(chosen, chosen), footprint)
        self.stale += parse_move(chosen)[1] == "~"
        self.taken.append(chosen)
        self.last = (made, footprint, sleeping, point)
        return going

    def footprint(self, move):
        """What `move` touches, an arrival's as the search names it (its own client)."""
        if move not in self.served:
            return self.run.footprint(move)
        return replace(self.run.footprint(self.served[move]), client=move)

    def arrivals(self, moves):
        """`moves` with each arrival named as the search names it, the same in every order it is in: a stream record as
        the k-th of its item's records to reach its stream, a replicated write by the move that sent it (the lab
        server numbers both in the order they were made, which another order changes)."""
        creator = (transition(self.taken[-1]), sum(transition(move) == transition(self.taken[-1])
                                                    for move in self.taken)) if self.taken else ("start",)
        renamed = []
        for move in moves:
            if parse_move(move)[1] == "#" and move not in self.named:
                event = self.run.event(move)
                origin = (tuple(event["touches"][0]), event["label"].partition(" ")[2]) if event["by"] == "stream" \
                    else creator
                identity = (event["by"], origin, sum(known[:2] == (event["by"], origin) for known in self.identities))
                self.identities.append(identity)
                name = f"{event['by']}#{self.search.arrivals.setdefault(identity, len(self.search.arrivals) + 1)}"
                self.named[move], self.served[name] = name, move
            renamed.append(self.named.get(move, move))
        return renamed

    def now(self, move, print_, refused):
        """A sleeping move's footprint as it stands now (an item made visible frees its transaction only if last);
        a write refused where it was run stays a read."""
        if parse_move(move)[0] not in self.run.held:
            return print_
        current = self.run.footprint(move)
        return replace(current, writes=False) if refused and current.writes else current

    def after(self, made, footprint, sleeping, point):
        """Once the clients have settled after a move: its footprint as made, and what sleeps at the next point."""
        self.last = None
        self.run.settled(made)
        made_print = as_made(footprint, made)
        point.made = (made_print, made_print is not footprint)
        self.sleep = [(move, print_, refused) for move, print_, refused in sleeping if independent(print_, made_print)]
        self.prints.append(made_print)
        self.run.prints.append(replace(made_print, client=self.served[made_print.client])
                               if made_print.client in self.served else made_print)
        self.offered.append(footprint)

    def pick(self):
        """(the move to make, the point): the point's branch, else the first possible move that does not sleep (None
        when there is none)."""
        run, search = self.run, self.search
        everything = self.arrivals(run.moves(answers=False))
        offered = tuple(worth_trying(everything))
        point = search.point(len(run.taken), self.sleep)
        if not point.new and point.offered != offered:
            raise ExplorationError(not_repeatable([(move, ()) for move in run.taken], point.offered, offered))
        if not point.fresh:
            move = point.tree[0].move
            if move not in self.answers(first_level(move)):
                raise ExplorationError(not_repeatable([(move, ()) for move in run.taken], point.offered, offered))
            return move, point
        point.offered, point.possible = offered, frozenset(transition(move) for move in everything)
        move = self.branch(point, offered, everything)
        if move is None:
            return None, point
        point.fresh = False
        asleep_here = {entry for entry, _, _ in point.sleep}
        for other in offered:
            if transition(other) == transition(move):
                for alternative in self.answers(other):
                    if alternative != move and alternative not in asleep_here:
                        insert(point.tree, [(alternative, self.footprint(alternative))], search.rank, start=1)
        self.answers(first_level(move))  # the chosen request's answers, as make() reads them
        return move, point

    def branch(self, point, offered, everything):
        """The move of the point's first branch that can be made here (of `everything` possible, even an item of a
        transaction not offered first: worth_trying); a branch that cannot is dropped. At a new point without one, the
        first move offered that does not sleep, as its branch."""
        asleep_here = {entry for entry, _, _ in point.sleep}
        while point.tree:
            wanted = point.tree[0].move
            answers = self.answers(first_level(wanted)) if first_level(wanted) in everything else []
            awake = [move for move in ([wanted] if wanted in answers else answers) if move not in asleep_here]
            if awake:  # a read's answer not given here: its others are (each answer is a branch of its own)
                point.tree[0].move = awake[0]
                return awake[0]
            point.tree.pop(0)
        if not point.new:
            return None
        for first in offered:
            for move in self.answers(first):
                if move not in asleep_here:
                    point.tree.insert(0, Branch(move, self.footprint(move)))
                    return move
        return None

    def answers(self, first):
        """The moves making the offered move `first`: one per answer its read may get (within max_stale), else itself."""
        run = self.run
        moves = run.answers(first) if first in run.held or batch_item(first) is not None else [first]
        newest_only = self.max_stale is not None and self.stale >= self.max_stale
        return [move for move in moves if not (newest_only and parse_move(move)[1] == "~")]
