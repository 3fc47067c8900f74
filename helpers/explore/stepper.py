"""One order played by hand (Stepper, behind the step-through panel), and replay(): one schedule with its
transcript."""
from contextlib import contextmanager

from ..lab import trace
from ..lab.backend import connect
from .errors import ExplorationError
from .histories import history
from .hold import LATEST, install_hold, new_session, strays_error, watched
from .model import model_server, start_state
from .moves import FAULT_WORDS, batch_item, parse_move
from .orders import check_clients, check_faults
from .reduction import Keys
from .run import Run
from .settings import CLIENT_TIMEOUT, DEFAULT_CONSISTENCY
from .steps import Arrival, Choice, Reveal
from .threads import Workers


def step_note(step):
    """What the transcript's line over a step adds to its client: the item a BatchGetItem read and what the model or a
    fault did to a request (" reads {PK: 'A'} (stale: ...)"); nothing for an item made visible, a record entering or
    a choice, which the step's own line says."""
    if isinstance(step, (Reveal, Arrival, Choice)):
        return ""
    return step.label[len(f"{step.client}: {step.operation}"):]


def replay(clients, reset, schedule, check=None, *, lab=None, timeout=CLIENT_TIMEOUT,
           consistency=DEFAULT_CONSISTENCY, faults=()):
    """Run one schedule with its transcript printed, each request under the client that sent it; return results.

    With `check`, returns (results, ok).
    """
    stepper = Stepper(clients, reset, check, lab=lab, timeout=timeout, consistency=consistency, faults=faults,
                      watch_streams=streams_in([schedule]))
    try:
        for name in schedule:
            request = stepper.step(name)
            with trace.TRACER.lock:
                trace.TRACER.flush()
                print(f"--- {request.client}{step_note(request)} ---\n{request.block}\n")
        if not stepper.done:
            raise ExplorationError(f"After {' -> '.join(schedule)}, clients {', '.join(stepper.enabled)} still "
                                   "hold requests: a schedule names every step until all clients are done.")
        return (stepper.results, stepper.ok) if check else stepper.results
    finally:
        stepper.close()


def streams_in(schedules):
    """True when a stream record's arrival is a move of some schedule: the exploration watched the streams."""
    return any(parse_move(move)[0] == "stream" for schedule in schedules for move in schedule)


class Stepper:
    """One schedule played by hand: step(name) releases that client's held request; reset() starts over."""

    def __init__(self, clients, reset, check=None, *, lab=None, timeout=CLIENT_TIMEOUT,
                 consistency=DEFAULT_CONSISTENCY, faults=(), watch_streams=True):
        check_clients(clients)
        check_faults(faults)
        self.faults, self.watch_streams = faults, watch_streams
        self.clients, self.reset_state, self.check, self.timeout = clients, reset, check, timeout
        self.lab = lab or connect(quiet=True)
        self.server = model_server(self.lab, consistency)
        install_hold(self.lab.client)
        self.run, self.workers, self.session = None, None, None
        self.reset()

    def reset(self):
        """Stop the current schedule, restore the starting state and hold every client at its first request."""
        self.close()
        self.workers = Workers(self.clients)
        self.session = new_session()
        with trace.tracing(False), self.turn():
            if self.server is not None:
                self.server.explore()
            start_state(self.reset_state, self.server)
            self.run = Run(self.clients, self.timeout, self.server, self.faults, keys=Keys(self.lab.client),
                           watch_streams=self.watch_streams)
            self.watching(lambda: self.run.start(self.workers))

    @contextmanager
    def turn(self):
        """The lab server paused when the block ends, so that a request sent between steps with a consistency knob on
        (a race as weak as DynamoDB) meets the copies as the knobs make them, not this panel's exploration."""
        try:
            yield
        finally:
            if self.server is not None and self.session == LATEST["session"]:
                self.server.pause()

    def step(self, move):
        """Make one move ("alice", "alice~1", "alice+0": moves.py names them) and wait until every client is
        held again or done; return the step."""
        with trace.tracing(False), self.turn():
            self.resume()
            name, kind, _ = parse_move(move)
            if name not in self.clients and kind != "#":
                raise ValueError(f"No client named {name!r}; the clients are {', '.join(self.clients)}.")
            if name not in self.run.held and kind != "#":
                state = "has finished" if name in self.run.results else "holds no request"
                raise ValueError(f"{name} {state}; clients with a request to send: "
                                 f"{', '.join(self.enabled) or 'none'}.")
            possible = self.run.moves()
            if move not in possible:
                raise ValueError(f"{move!r} is not a move now; the moves are {', '.join(possible)}.")
            return self.watching(lambda: self.run.release(move))

    def watching(self, act):
        """act() on the run, noting requests no client sends; then the records nobody watches enter their streams, and a
        stray request or a client's problem is raised (the run stopped on any failure). What act() returned."""
        try:
            with watched(self.run):
                made = act()
            self.run.deliver_unwatched()
            if self.run.strays:
                raise strays_error(self.run)
            if self.run.problem:
                raise self.run.problem
            return made
        except BaseException:
            self.run.stop()
            raise

    def observe(self, function):
        """function() (a panel's view of the tables) with the lab server where this panel's steps left it."""
        with trace.tracing(False), self.turn():
            self.resume()
            return function()

    def resume(self):
        """If another exploration or panel has used the tables and the lab server since this one started, or a request
        as weak as DynamoDB came while it was paused, start over and make the moves made so far again (the scenario
        repeats itself), so play goes on where it was."""
        if self.session == LATEST["session"] and (self.server is None or self.server.resume()):
            return
        taken = list(self.run.taken)
        self.reset()
        for move in taken:
            self.step(move)
        if self.server is not None:
            self.server.resume()  # each step paused it again

    def replay(self, schedule):
        """Start over and play `schedule` (a sequence of client names) step by step; streams are watched as they were
        where it was explored."""
        self.watch_streams = streams_in([schedule])
        self.reset()
        for name in schedule:
            self.step(name)

    @property
    def held(self):
        """{client: the request it is about to send}, for the clients holding one."""
        return {name: self.run.held[name] for name in self.run.enabled}

    def moves(self):
        """{move: what it does}, for every move possible now (the step-through panel's buttons)."""
        with trace.tracing(False), self.turn():
            self.resume()
            possible = self.run.moves()
        return {move: move_words(self.run, move) for move in possible}

    @property
    def enabled(self):
        """Clients holding a request, in the scenario's order."""
        return self.run.enabled

    @property
    def steps(self):
        """The requests released so far, in order."""
        return list(self.run.steps)

    @property
    def done(self):
        """True when every client has finished."""
        return len(self.run.results) == len(self.clients)

    @property
    def history(self):
        """The steps taken so far as a history in Elle's shape (histories.py), as explore's frame holds each order's;
        None off the lab server's model."""
        return history(self.run.steps) if self.run.modelled else None

    @property
    def results(self):
        """{client: what it returned or raised}, for the clients that have finished."""
        return {name: self.run.results[name] for name in self.clients if name in self.run.results}

    @property
    def ok(self):
        """check(results) once every client is done and nothing is on its way to a stream or a Region (None before, or
        without a check): a verdict with an arrival still to play would judge an order that has not ended."""
        if not self.done or self.run.pending or self.check is None:
            return None
        with trace.tracing(False):
            return bool(self.check(self.results))

    def close(self):
        """Release the held client threads and let them end; the copies agree again."""
        if self.run is not None:
            self.run.stop()
            self.workers.close()
            if self.server is not None:
                self.server.sampled()


def move_words(run, move):
    """What a move possible now in `run` does, in the words of the step-through panel's button."""
    name, kind, place = parse_move(move)
    if kind == "#":
        return run.event(move)["label"]
    if kind == "?":
        return f"{run.held[name].what}: {run.held[name].options[place]}"
    held, item = run.held[name], batch_item(move)
    if item is not None:
        choices = held.item_choices[item]
        answered = f", answered {choices[place if kind == '~' else 0]['label']}" if len(choices) > 1 else ""
        return f"{held.operation}: read {held.items[item]}{answered}"
    if kind == "+":
        return held.summary if held.replicating else f"{held.request.operation}: make {held.items[place]} visible"
    if kind == "!":
        return f"{held.summary}, {FAULT_WORDS[place]}"
    if held.choices and len(held.choices) > 1:
        return f"{held.summary}, answered {held.choices[place]['label']}"
    return held.summary
