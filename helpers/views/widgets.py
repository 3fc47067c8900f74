"""ipywidgets panels: bounded controls, a Run button, a progress bar, and an output area for figures and tables."""
import html
import inspect
import signal
import threading
import time
from contextlib import nullcontext

import ipywidgets as widgets
import plotly.graph_objects as go
import plotly.io as pio
from botocore.exceptions import BotoCoreError, ClientError
from IPython import get_ipython
from IPython.core.interactiveshell import InteractiveShell
from IPython.display import display

from .. import explore
from . import plots
from ..runs import races
from ..lab.backend import BackendError, connect
from ..lab.knobs import AS_WEAK_AS_DYNAMODB, knobs

# ipywidgets marks a view whose kernel connection closed (a restarted kernel) with this class; the panel says so.
# The style is the panel's last child, so the panel's text form (what nbval compares) starts as before.
DISCONNECTED_NOTE = """<style>
.lab-panel.jupyter-widgets-disconnected::before {
  content: "This panel belongs to a kernel that has restarted: run the notebook from the top (Run → Run All Above Selected Cell), then its cell.";
  color: #b00; font-weight: bold; font-family: var(--jp-ui-font-family); margin-bottom: 4px;
}
</style>"""
BACKGROUND_RUNS = set()


class Interrupted(KeyboardInterrupt):
    """Kernel -> Interrupt during a panel's run; `shown` is what the run had to show by then."""

    def __init__(self, note, shown):
        super().__init__(note)
        self.shown = shown


def stop_background_runs(*_):
    """SIGINT handler while the kernel is idle: Kernel -> Interrupt stops every run a Run button started."""
    for panel in list(BACKGROUND_RUNS):
        panel.stop.set("interrupted")


def listen_for_interrupt():
    """Let Kernel -> Interrupt reach runs started by a Run button, which run while the kernel is idle.

    An idle ipykernel ignores SIGINT, and around each message it handles it installs Python's default
    handler and then puts back the one it found (its saved_sigint_handler). A button's click is such a
    message, so the handler is installed now and also put in place of the one ipykernel will restore.
    """
    kernel = getattr(get_ipython(), "kernel", None)
    if kernel is None or threading.current_thread() is not threading.main_thread():
        return
    signal.signal(signal.SIGINT, stop_background_runs)
    kernel.saved_sigint_handler = stop_background_runs


def in_words(failure):
    """What went wrong and what to do, for a panel: never a raw botocore error."""
    if isinstance(failure, BackendError):
        return str(failure)
    if isinstance(failure, ClientError):
        error = failure.response["Error"]
        advice = ("Its table is missing: run the notebook's Setup cell again (it makes a fresh table), then Run."
                  if error["Code"] == "ResourceNotFoundException" else "Check the controls' values and Run again.")
        return f"DynamoDB refused {failure.operation_name} ({error['Code']}: {error.get('Message', '')}). {advice}"
    if isinstance(failure, BotoCoreError):
        return (f"The lab could not reach DynamoDB ({failure}). Run again; if it happens again, restart the kernel "
                "(Kernel → Restart Kernel) and run the notebook from the top.")
    return f"{type(failure).__name__}: {failure}"


class Panel:
    """Controls + Run button + output; run(**values) returns what to display (a figure, a frame, or a tuple).

    If `run` takes a `progress` argument it gets progress(done, total), which moves a progress bar; if it
    takes `stop` it gets a threading.Event that a Stop button sets. The Run button runs in the
    background so the bar moves and Stop answers; `click()` runs in the foreground and waits. Either
    way there is one run at a time: a press while a run is in progress is ignored.
    """

    def __init__(self, title, run, weak_switch=False, **controls):
        self.run = run
        self.controls = controls
        self.weak = weak_checkbox() if weak_switch else None
        wants = inspect.signature(run).parameters
        self.button = widgets.Button(description="Run", button_style="primary", icon="play")
        self.stop_button = widgets.Button(description="Stop", icon="stop", disabled=True) if "stop" in wants else None
        self.bar = widgets.IntProgress(value=0, min=0, max=1, description="progress") if "progress" in wants else None
        self.status = widgets.HTML()
        self.output = widgets.Output()
        self.last = None
        self.error = None
        self.runs = 0
        self.worker = None
        self.stop = races.StopSignal()
        self.busy = threading.Lock()
        self.button.on_click(self.press)
        buttons = [self.button] + ([self.stop_button] if self.stop_button else [])
        if self.stop_button:
            self.stop_button.on_click(lambda _: self.stop.set())
        progress = [self.bar] if self.bar else []
        switch = [self.weak] if self.weak else []
        self.view = widgets.VBox([widgets.HTML(f"<b>{title}</b>"), *controls.values(), *switch,
                                  widgets.HBox(buttons + progress + [self.status]), self.output,
                                  widgets.HTML(DISCONNECTED_NOTE)])
        self.view.add_class("lab-panel")

    def press(self, _=None):
        """The Run button: start a run in the background; return False (and do nothing) if one is running."""
        if not self.busy.acquire(blocking=False):
            return False
        listen_for_interrupt()
        self.worker = threading.Thread(target=self.run_in_background, daemon=True, name="panel-run")
        self.worker.start()
        return True

    def run_in_background(self):
        """run_once for the Run button, reachable by Kernel -> Interrupt meanwhile."""
        BACKGROUND_RUNS.add(self)
        try:
            self.run_once(reraise=False)
        finally:
            BACKGROUND_RUNS.discard(self)

    def click(self, _=None):
        """Run once now with the current control values and wait; return False if a run is already going."""
        if not self.busy.acquire(blocking=False):
            return False
        self.run_once(reraise=True)
        return True

    def wait(self, timeout=None):
        """Wait for a run started by the Run button to finish."""
        if self.worker is not None:
            self.worker.join(timeout)

    @property
    def running(self):
        """True while a run is in progress."""
        return self.busy.locked()

    def run_once(self, reraise):
        """Run with the current values and show what run returned; the caller holds self.busy."""
        self.runs += 1
        self.stop.clear()
        self.set_running(True)
        began = time.perf_counter()
        try:
            with self.weakness():
                self.last, self.error = self.run(**self.arguments()), None
            self.show(self.last if isinstance(self.last, tuple) else (self.last,))
            ended = f"{self.stop.reason}, partial result" if self.stop.is_set() else "done"
            self.status.value = f"{ended} in {time.perf_counter() - began:.1f} s"
        except Interrupted as interrupt:  # Kernel -> Interrupt while a cell's click() waited: show what ran
            self.last, self.error = interrupt.shown, interrupt
            self.show(interrupt.shown)
            self.status.value = f"interrupted, partial result in {time.perf_counter() - began:.1f} s"
            if reraise:
                raise
        except BaseException as failure:  # shown in the panel; re-raised when a cell called click()
            self.error = failure
            self.output.outputs = ()
            self.output.append_stderr(in_words(failure) + "\n")
            self.status.value = f"<span style='color:#b00'>failed: {html.escape(type(failure).__name__)}</span>"
            if reraise:
                raise
        finally:
            self.set_running(False)
            self.busy.release()

    def weakness(self):
        """The lab server as weak as DynamoDB for this run when the switch is on; else as it is."""
        if self.weak is None or not self.weak.value:
            return nullcontext()
        return knobs(connect(quiet=True), quiet=True, **AS_WEAK_AS_DYNAMODB)

    def arguments(self):
        """The control values, plus progress and stop when run asks for them."""
        values = {name: control.value for name, control in self.controls.items()}
        if self.bar:
            values["progress"] = self.advance
        if self.stop_button:
            values["stop"] = self.stop
        return values

    def advance(self, done, total):
        """Move the progress bar (called from the run, on any thread)."""
        self.bar.max = max(total, 1)
        self.bar.value = min(done, total)

    def set_running(self, running):
        """Grey out Run and the controls and clear the last figure while a run is in progress; Stop only then."""
        self.button.disabled = running
        for control in [*self.controls.values(), *([self.weak] if self.weak else [])]:
            control.disabled = running
        if self.stop_button:
            self.stop_button.disabled = not running
        if running:
            self.status.value = "running…"
            self.output.outputs = ()
            if self.bar:
                self.bar.value = 0

    def show(self, shown):
        """Replace the output area's content with these objects' rich displays."""
        self.output.outputs = tuple(display_data(item) for item in shown)

    def _ipython_display_(self):
        display(self.view)


def step_note(request):
    """A played step's note for the panel's list: the stale answer or fault the move chose, in italics, or ''."""
    return f" <i>({html.escape(request.note)})</i>" if request.note else ""


def display_data(item):
    """One output entry for `item`; a plotly figure as plotly's mime type (what JupyterLab draws), whichever default
    renderer plotly chose when it was first imported (none outside a kernel), instead of displaying in the running
    cell."""
    if isinstance(item, go.Figure):
        data = pio.renderers["plotly_mimetype"].to_mimebundle(item.to_dict())
    else:
        data = InteractiveShell.instance().display_formatter.format(item)[0]
    return {"output_type": "display_data", "data": data, "metadata": {}}


def slider(description, low, high, value, step=1):
    """An integer slider that cannot leave [low, high]."""
    return widgets.IntSlider(value=value, min=low, max=high, step=step, description=description,
                             continuous_update=False, style={"description_width": "initial"},
                             layout=widgets.Layout(width="100%", max_width="640px"))


def picker(description, options, value):
    """A dropdown that offers only `options`."""
    return widgets.Dropdown(options=options, value=value, description=description,
                            style={"description_width": "initial"})


def weak_checkbox():
    """The race panels' switch: the run as weak as DynamoDB (None off the lab server, which is as weak already)."""
    if connect(quiet=True).kind != "embedded":
        return None
    return widgets.Checkbox(value=False, indent=False, layout=widgets.Layout(width="auto"),
                            description="as weak as DynamoDB: default reads may be stale, transactions conflict, "
                                        "indexes lag (off: the lab server is stronger than DynamoDB)")


def race_panel(table=None):
    """The race lab: threads, operations, think time and strategy; Run shows the plots and a summary table."""
    def run(strategy, threads, operations, think_ms, progress, stop):
        """Race the chosen strategy (and ADD beside it, for comparison); return figures and a summary.

        Stopped or interrupted, it shows the races that ran, the last one as far as it got.
        """
        compared = [strategy] if strategy == "add" else [strategy, "add"]
        done = [0] * len(compared)
        results = []
        for index, name in enumerate(compared):
            def step(finished, total, index=index):
                done[index] = finished
                progress(sum(done), total * len(compared))
            try:
                results.append(races.race(name, threads, operations, think_ms, table=table, on_progress=step,
                                          stop=stop))
            except races.RaceInterrupted as interrupt:
                results.append(interrupt.race)
                raise Interrupted(interrupt.race.note, race_figures(strategy, results)) from None
            if results[-1].note:
                break
        return race_figures(strategy, results)

    low_threads, high_threads = races.LIMITS["threads"]
    low_ops, high_ops = races.LIMITS["operations"]
    low_think, high_think = races.LIMITS["think_ms"]
    return Panel("Race lab: many clients increment one counter at once", run, weak_switch=True,
                 strategy=picker("strategy", [(races.LABELS[s], s) for s in races.STRATEGIES], "racy"),
                 threads=slider("threads", low_threads, high_threads, 10),
                 operations=slider("operations", low_ops, high_ops, 20),
                 think_ms=slider("think time between read and write (ms)", low_think, high_think, 0))


def race_figures(strategy, results):
    """What the race lab shows for its races: expected vs final, the first race's timeline, and a summary table
    with what each race's clients cost (the lab server's meter)."""
    shown = [plots.expected_vs_final(*results), plots.timeline(results[0])]
    if strategy == "optimistic":
        shown.append(plots.retries(results[0]))
    return (*shown, with_costs(races.summary_table(*results), results))


def with_costs(summary, results):
    """The summary with each race's write units, those on refused writes, and units per update that took effect."""
    if not all(result.cost for result in results):
        return summary
    return summary.assign(**{
        "write units": [result.cost.write_units for result in results],
        "on refused writes": [result.cost["WriteUnitsOnRefusedWrites"] for result in results],
        "units per update": [round(result.cost.per(result.successes), 2) if result.successes > 0 else None
                             for result in results]})


def wait_visibly(seconds, why):
    """Sleep for `seconds` behind a progress bar, so a wait never looks like a hang."""
    bar = widgets.IntProgress(value=0, max=round(seconds * 10), description=why,
                              style={"description_width": "initial"})
    display(bar)
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        time.sleep(min(0.1, left))
        bar.value = bar.max - round(max(left - 0.1, 0) * 10)


class StepThrough:
    """'You are the scheduler': a button per move sends a client's next request (with consistency="dynamodb",
    also one per other answer DynamoDB may give a read, and one per item of an ongoing transaction to make
    visible; with faults, one per fault explore offers there); the state after each step.

    Built by step_through(). Also driven from code: step("alice"), replay(schedule), reset(); `history`,
    `verdict`, `state` and `cycle` hold what the panel shows; `buttons` has each client's first move, `move_buttons`
    every move. Once every step is played and the order fails, the minimal cycle its history shows (plots.cycle) is
    drawn below the verdict.
    With `judge` (a function of the finished clients' results and steps returning (ok, words)), the verdict ends with
    its words instead of the check's.
    """

    def __init__(self, clients, reset, check=None, show=None, orders=None, title="You are the scheduler",
                 consistency=explore.DEFAULT_CONSISTENCY, faults=(), judge=None):
        self.stepper = explore.Stepper(clients, reset, check, consistency=consistency, faults=faults,
                                       watch_streams=orders is None or explore.streams_in(orders["schedule"]))
        self.show_state, self.judge = show, judge
        self.state = None
        self.buttons, self.move_buttons, self.moves_view = {}, {}, widgets.VBox()
        self.reset_button = widgets.Button(description="Reset", icon="undo")
        self.reset_button.on_click(lambda _: self.act(self.reset))
        self.schedules = widgets.Dropdown(options=schedule_options(orders), description="order")
        self.replay_button = widgets.Button(description="Replay this order", icon="play")
        self.replay_button.on_click(lambda _: self.act(self.replay, self.schedules.value))
        replaying = [self.schedules, self.replay_button] if orders is not None and len(orders) else []
        self.steps_view, self.verdict_view, self.output = widgets.HTML(), widgets.HTML(), widgets.Output()
        self.cycle, self.cycle_view = None, widgets.Output()
        self.view = widgets.VBox([widgets.HTML(f"<b>{title}</b>"), self.moves_view,
                                  fitted_row(self.reset_button, *replaying), self.steps_view, self.output,
                                  self.verdict_view, self.cycle_view,
                                  widgets.HTML(DISCONNECTED_NOTE + FITTED_ROW_STYLE)])
        self.view.add_class("lab-panel")
        self.refresh()

    def act(self, action, *args):
        """Run a button's action; an error is shown in the panel instead of being lost in the log."""
        try:
            action(*args)
        except Exception as failure:  # a button has no cell to raise into
            self.verdict_view.value = f"<span style='color:#b00'>{html.escape(in_words(failure))}</span>"

    def step(self, move):
        """Make one move: send a client's held request ("alice", or "alice~1" for another answer to a read), or
        make an item of its ongoing transaction visible ("alice+0"); return the step."""
        request = self.stepper.step(move)
        self.refresh()
        return request

    def replay(self, schedule):
        """Start over and play `schedule` step by step."""
        self.stepper.replay(schedule)
        self.refresh()

    def reset(self):
        """Start over from the starting state."""
        self.stepper.reset()
        self.refresh()

    @property
    def history(self):
        """The steps taken so far, as 'alice: GetItem' labels."""
        return [request.label for request in self.stepper.steps]

    @property
    def verdict(self):
        """'' while clients are still running; then what they returned and, once every arrival is played, whether the
        check held (or the judge's words)."""
        return self.judged()[1]

    def judged(self):
        """(ok, the verdict): ok is the judge's or the check's answer once every client is done and every arrival
        played, else None (with every client done, the verdict says how many arrivals are still to play)."""
        if not self.stepper.done:
            return None, ""
        returned = ", ".join(f"{name} → {explore.describe(r)}" for name, r in self.stepper.results.items())
        pending = list(self.stepper.moves())
        if pending:
            return None, f"every client done: {returned} · {still_to_play(pending)}"
        if self.judge is not None:
            ok, words = self.judge(self.stepper.results, self.history)
        else:
            ok = self.stepper.ok
            words = "" if ok is None else ("the invariant holds" if ok else "the invariant is BROKEN")
        return ok, f"all done: {returned}" + (f" · {words}" if words else "")

    def refresh(self):
        """Relabel the buttons, list the steps, show the state and the verdict."""
        moves = self.stepper.moves()
        self.buttons, self.move_buttons, rows = {}, {}, []
        arrivals = list(dict.fromkeys(name for name, kind, _ in map(explore.parse_move, moves) if kind == "#"))
        for name in [*self.stepper.clients, *arrivals]:
            for move in [move for move in moves if explore.parse_move(move)[0] == name] or [name]:
                button = widgets.Button(layout=widgets.Layout(width="auto"))
                button.on_click(lambda _, move=move: self.act(self.step, move))
                if move in moves:
                    button.description = button.tooltip = f"{name} ▶ {moves[move]}"
                    self.move_buttons[move] = button
                else:
                    result = self.stepper.results.get(name)
                    button.description, button.disabled = f"{name}: done, returned {explore.describe(result)}", True
                self.buttons.setdefault(name, button)
                rows.append(button)
        self.moves_view.children = rows
        steps, held = self.stepper.steps, list(self.stepper.held.values())
        listed = "".join(f"<li><code>{html.escape(request.client)} ▶ {html.escape(request.summary)}</code>"
                         f"{step_answer(request, steps, held)}{step_note(request)}</li>" for request in steps)
        self.steps_view.value = f"<b>Steps so far</b><ol>{listed}</ol>" if listed else "<i>No step yet: press a client.</i>"
        if self.show_state:
            self.state = self.stepper.observe(self.show_state)
            self.output.outputs = (display_data(self.state),)
        ok, verdict = self.judged()
        colour = {True: "#2e7d32", False: "#b00"}.get(ok, "#555")  # grey: not a verdict yet, arrivals to play
        self.verdict_view.value = f"<b style='color:{colour}'>{html.escape(verdict)}</b>" if verdict else ""
        self.cycle = plots.cycle_figure(self.stepper.history) if ok is False else None
        self.cycle_view.outputs = (display_data(self.cycle),) if self.cycle is not None else ()

    def _ipython_display_(self):
        display(self.view)


def still_to_play(pending):
    """The panel's words for the moves still to play once every client is done: `pending` names them ("eu-west-1#1", a
    write arriving in another Region; "stream#2", a record entering its stream)."""
    records = sum(explore.parse_move(move)[0] == "stream" for move in pending)
    arrivals = len(pending) - records
    kinds = [words for count, words in
             ((arrivals, f"{arrivals} arrival{'s' if arrivals > 1 else ''} in another Region"),
              (records, f"{records} stream record{'s' if records > 1 else ''}")) if count]
    return f"{' and '.join(kinds)} still to play: press {'it' if len(pending) == 1 else 'them'} for the verdict"


def step_answer(request, steps, held=()):
    """' → what DynamoDB answered' after a step in the panel's list (`steps` and the `held` requests are the panel's).

    A transaction (or batch) whose items become visible one at a time has not returned when DynamoDB takes it: its
    step says that none of its items is visible yet, the step making its last item visible says what the call
    returned, and the steps between say nothing more than what they make visible."""
    client = html.escape(request.client)
    if request.operation == "reveal":
        later = [step for step in [*steps[steps.index(request) + 1:], *held] if staged(step, request.request)]
        return "" if later else f" <b>→ {client}'s call returns {html.escape(request.request.reply)}</b>"
    if any(staged(step, request) for step in [*steps, *held]):
        return f" <b>→ under way: none of its items visible yet</b> <i>({client}'s call returns after the last)</i>"
    return f" <b>→ {html.escape(request.reply or '…')}</b>"


def staged(step, request):
    """True when `step` makes (or, held, will make) an item of `request`'s transaction or batch visible."""
    return step.operation == "reveal" and step.request is request


FITTED_ROW_STYLE = "<style>.lab-fitted-choice select { text-overflow: ellipsis; }</style>"


def fitted_row(*children):
    """An HBox no wider than the notebook: a dropdown in it takes the width its buttons leave and ellipsises a long
    entry, and each button keeps the width of its words (the page needs FITTED_ROW_STYLE once)."""
    for child in children:
        if isinstance(child, widgets.Dropdown):
            child.layout = widgets.Layout(flex="1 1 0%", width="auto", min_width="0")
            child.add_class("lab-fitted-choice")
        else:
            child.layout = widgets.Layout(flex="0 0 auto", width="auto")
    return widgets.HBox(children, layout=widgets.Layout(width="100%"))


def schedule_options(orders):
    """Dropdown entries (text, schedule) for an exploration's orders, the broken ones first, each named by its
    number in the orders figure and table ("order 2 · broken: ...")."""
    if orders is None:
        return []
    ranked = explore.numbered(orders, "order").sort_values("ok", kind="stable")
    return [(f"order {number} · {'broken' if not ok else 'holds'}: {' → '.join(steps)}", schedule)
            for number, steps, schedule, ok in zip(ranked.index, ranked["steps"], ranked["schedule"], ranked["ok"])]


def step_through(clients, reset, check=None, show=None, orders=None, title="You are the scheduler",
                 consistency=explore.DEFAULT_CONSISTENCY, faults=()):
    """A panel that lets the learner release the clients' requests one at a time (see StepThrough)."""
    return StepThrough(clients, reset, check, show, orders, title, consistency, faults)
