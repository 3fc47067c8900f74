"""Every order: a few clients' DynamoDB requests released one at a time, every interleaving run for real.

`explore({"alice": f, "bob": g}, reset=..., check=...)` runs each client function on its own thread.
A botocore `before-send` handler (emitted once per HTTP attempt, retries included) holds each request
until its turn, so the backend sees one request at a time in an order the explorer chooses; between
requests a client runs freely. Every distinct order is run once, each from a fresh `reset()` (a
stateless depth-first search over the choice points, as Microsoft's CHESS does), and the answer is one
row per order: the schedule, its steps, what each client returned and whether `check` held.

Two orders are the same (one behaviour) when they differ only by swapping neighbouring requests that commute:
requests on different items, or reads of an item that leave no trace (reduction.py). Nothing a learner can
see tells such orders apart, not an answer, a result or the final state, so the explorer runs one of them: by optimal
dynamic partial-order reduction (source sets and wake-up trees, Abdulla, Aronis, Jonsson and Sagonas, POPL 2014),
which starts no run that would repeat a behaviour, replicated writes and stream records arriving and transactions of
several items made visible included. Racy incrementers, each a GetItem
then a PutItem of one counter, have 6 orders for 2 clients and 90 for 3, of which 4 and 36 are distinct (their two
GetItems, answered the same in either order, commute); three optimistic-locking clients with retry loops have 60
behaviours, run in 60 runs (a write refused by its condition only read its item). Every count it gives is of
distinct orders; frame.attrs["runs"] says how many runs it took.

`Stepper` drives the same machinery by hand, one request at a time (the step-through panel uses it).

On the lab server the explorer also makes every choice DynamoDB's consistency leaves open
(helpers/labserver/model/consistency.py): which version an eventually consistent or index read answers with, and when
each item of a transaction becomes visible. Each such step is a move of its own (moves.py names every kind).

consistency="dynamodb", the default, makes those choices. consistency="strong" asks for less: every read answered
as if strongly consistent and each transaction applied at once, so only the orders of the requests are counted (a
notebook that asks for it says so). On DynamoDB Local or AWS the explorer can only choose the order of requests.

Where to look, in the order an exploration runs:
    orders.py       explore(): the depth-first loop over orders, one row per distinct order; doomed_steps
    search.py       where an order is chosen: run_schedule, Search and Guided (optimal DPOR's wake-up trees), Walk
                    and next_prefix (sleep sets alone, which the tests run to enumerate every order)
    threads.py      the workers that hold the client threads, one exploration at a time, one CPU
    hold.py         where a request is held (botocore's before-send) and its answer read (needs-retry); choice_point
    run.py          one order in progress (Run), with its mixins making.py (make a move), offers.py (the moves
                    possible now) and footprints.py (what each move touches)
    reduction.py    which moves commute, the races between them, wake-up trees and sleep sets
    model.py        the lab server's consistency model over HTTP, and each order's starting state
    steps.py        the steps of an order and their words; moves.py the move grammar; settings.py bounds and names
    stepper.py      one order played by hand (the step-through panel), replay()
    frames.py       an exploration's frame in a learner's words; errors.py what it raises
    histories.py    each order as a history in Elle's shape, for anomalies(frame) and why(history) (frames.py)
"""
from .errors import Crashed, ExplorationError, Stopped, TooManyOrders
from .frames import anomalies, describe, numbered, order_table, outcome_counts, why
from .hold import choice_point, install_hold
from .moves import FAULT_WORDS, batch_item, item_move, parse_move
from .orders import explore
from .settings import DEFAULT_CONSISTENCY, MAX_SCHEDULES, ONLY_ORDERS, WINDOW
from .stepper import Stepper, replay, streams_in

__all__ = ["anomalies", "why", "Crashed", "DEFAULT_CONSISTENCY", "ExplorationError", "FAULT_WORDS", "MAX_SCHEDULES", "ONLY_ORDERS",
           "Stepper", "Stopped", "TooManyOrders", "WINDOW", "batch_item", "choice_point", "describe", "explore",
           "install_hold", "item_move", "numbered", "order_table", "outcome_counts", "parse_move", "replay",
           "streams_in"]
