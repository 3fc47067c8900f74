"""Every notebook, run in JupyterLab in a real Chromium, shows a learner no error, live widgets and drawn plots."""
import json
import re
from pathlib import Path

import pytest

RUN_ALL_MS = 150_000
RENDER_MS = 20_000
RACE_MS = 60_000
MAX_SCREENSHOT_HEIGHT = 32_000
PLOTLY_MIME = "application/vnd.plotly.v1+json"
RUN_BUTTONS = ":is(button.jupyter-widgets, .jupyter-widgets button)"
RUN_LABEL = re.compile(r"^\s*Run\b")
WIDGET_AS_TEXT = re.compile(r"\b(?:[HV]?Box|IntSlider|FloatSlider|IntProgress|FloatProgress|Button|Dropdown|Output|"
                            r"ToggleButtons|RadioButtons|Checkbox|Tab|Accordion)\((?:children|value|description|"
                            r"layout|outputs|options)=")
WIDGET_FAILURES = ("Loading widget...", "Error displaying widget")
# What the race panel (racy strategy, its default) must draw: the two bars, and the clobbering writes on the timeline.
PANEL_TRACES = {"24-atomic-counters": [{"expected", "final value in DynamoDB"},
                                       {"read", "write that erased others' updates"}]}
SCHEDULER_TITLE = "you are the scheduler"
DOUBLE_BOOKING = [("alice", "GetItem"), ("bob", "GetItem"), ("alice", "PutItem"), ("bob", "PutItem")]

WATCH_RUN_JS = """() => {
    window.labRunStarted = false;
    new MutationObserver(() => {
        window.labRunStarted ||= document.querySelector('.jp-Notebook-ExecutionIndicator')?.dataset.status === 'busy';
    }).observe(document.querySelector('.jp-NotebookPanel-toolbar'), {subtree: true, childList: true, attributes: true});
}"""

RUN_FINISHED_JS = """() => window.labRunStarted
    && document.querySelector('.jp-Notebook-ExecutionIndicator').dataset.status === 'idle'"""

SETTLED_JS = """expected => {
    const cells = [...document.querySelectorAll('.jp-Notebook .jp-Cell')];
    const loading = [...document.querySelectorAll('.jp-Notebook .jp-OutputArea-output')]
        .some(output => output.textContent.includes('Loading widget...'));
    const plotted = expected.every(i => cells[i] && cells[i].querySelector('.js-plotly-plot .main-svg'));
    return !loading && plotted;
}"""

CELLS_JS = """() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')].map(cell => ({
    prompt: cell.querySelector('.jp-InputPrompt')?.textContent.trim() ?? '',
    errors: [...cell.querySelectorAll('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')]
        .map(output => output.textContent).filter(text => text.includes('Traceback')),
    outputText: [...cell.querySelectorAll('.jp-OutputArea-output')].map(output => output.textContent).join('\\n'),
    plots: [...cell.querySelectorAll('.js-plotly-plot')].map(plot => ({
        drawn: plot.querySelector('.main-svg') !== null,
        traces: (plot._fullData || plot.data || []).length,
        text: plot.textContent.slice(0, 200),
    })),
}))"""

WATCH_PANEL_JS = """cell => {
    const widths = () => [...cell.querySelectorAll('.progress-bar')].map(bar => bar.style.width).join(',');
    const watch = {widths: new Set([widths()]), changes: 0};
    const inWidget = node => (node.closest ? node : node.parentElement)?.closest('.jupyter-widgets');
    new MutationObserver(mutations => {
        watch.widths.add(widths());
        watch.changes += mutations.filter(mutation => inWidget(mutation.target)).length;
    }).observe(cell, {subtree: true, childList: true, characterData: true, attributes: true,
                      attributeFilter: ['style', 'disabled']});
    cell.panelWatch = watch;
}"""

PANEL_DONE_JS = """([cell, button]) => cell.panelWatch.changes > 0 && !button.disabled"""

PANEL_SHOWS_JS = """cell => {
    const outputs = [...cell.querySelectorAll('.widget-output .jp-OutputArea')].flatMap(area => [...area.children]);
    const plots = [...cell.querySelectorAll('.widget-output .js-plotly-plot')];
    const errors = cell.querySelectorAll('.widget-output [data-mime-type="application/vnd.jupyter.stderr"]');
    const shows = {
        errors: [...errors].map(error => error.textContent.trim()),
        outputs: outputs.length,
        blank: outputs.filter(output => !output.textContent.trim() && !output.querySelector('svg, canvas, img')).length,
        plots: plots.length,
        undrawn: plots.filter(plot => !plot.querySelector('.main-svg')
                                      || !(plot._fullData || plot.data || []).length).length,
        traces: plots.map(plot => (plot._fullData || plot.data || []).map(trace => trace.name)),
        progress: cell.querySelector('.progress-bar') !== null,
    };
    shows.complete = shows.outputs > 0 && !shows.errors.length && !shows.blank && !shows.undrawn
        && (shows.plots > 0 || !shows.progress);
    return shows;
}"""

TABLE_ROW_JS = """cell => {
    const table = cell.querySelector('.widget-output table');
    if (!table) return null;
    const headers = [...table.querySelectorAll('thead th')].map(th => th.textContent.trim());
    const values = [...table.querySelector('tbody tr').children].map(td => td.textContent.trim());
    return Object.fromEntries(headers.map((header, i) => [header, values[i]]));
}"""

NOTEBOOK_SIZE_JS = """() => {
    const scroller = document.querySelector('.jp-WindowedPanel-outer');
    if (!scroller) return null;
    scroller.scrollTop = 0;
    const cells = scroller.querySelectorAll('.jp-Cell');
    const bottom = cells[cells.length - 1].getBoundingClientRect().bottom;
    return {content: Math.ceil(bottom - scroller.getBoundingClientRect().top) + 40, visible: scroller.clientHeight};
}"""


def code_cells_expected_to_plot(cells):
    """Indexes of the cells whose stored outputs include a plotly figure."""
    return [index for index, cell in enumerate(cells) if cell["cell_type"] == "code" and any(
        PLOTLY_MIME in output.get("data", {}) for output in cell.get("outputs", []))]


def runs(cell):
    """True for the cells Run All sends to the kernel: code cells that are not empty."""
    return cell["cell_type"] == "code" and bool("".join(cell["source"]).strip())


def wait_until(page, predicate_js, arg, timeout_ms):
    """True once the JavaScript predicate holds for `arg` in the page, False if it still does not after the timeout."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    try:
        page.wait_for_function(predicate_js, arg=arg, timeout=timeout_ms, polling=250)
    except PlaywrightTimeout:
        return False
    return True


def kernel_idle(page):
    """The status bar's kernel indicator, once it says Idle."""
    return page.locator("#jp-main-statusbar").get_by_text(re.compile(r"\| Idle$"))


def choose_menu_item(page, menu, item):
    """Click a JupyterLab menu bar entry, then one of its items."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{menu}$")).click()
    page.get_by_role("menuitem", name=item, exact=True).click()


def open_notebook(page, lab, notebook):
    """Open the notebook alone in a fresh workspace, as a learner does, and wait until its kernel is ready."""
    page.goto(lab.tree_url(notebook) + "&reset")
    kernel_idle(page).wait_for(timeout=60_000)


def run_all_cells(page):
    """Clear the stored outputs, Run All, and wait for the notebook's execution indicator to go busy, then idle.

    (The status bar's kernel state is no use here: it flickers to Idle between two cells.)"""
    choose_menu_item(page, "Edit", "Clear Outputs of All Cells")
    page.evaluate(WATCH_RUN_JS)
    choose_menu_item(page, "Run", "Run All Cells")
    page.wait_for_function(RUN_FINISHED_JS, timeout=RUN_ALL_MS, polling=250)


def problems_on_page(page, cells):
    """What a learner would see go wrong: tracebacks, unrun cells, widgets not rendered, blank plots."""
    expected_plots = code_cells_expected_to_plot(cells)
    wait_until(page, SETTLED_JS, expected_plots, RENDER_MS)
    shown = page.evaluate(CELLS_JS)
    if len(shown) != len(cells):
        return [f"JupyterLab shows {len(shown)} cells, the notebook has {len(cells)}"]
    problems = []
    for index, (cell, seen) in enumerate(zip(cells, shown)):
        where = f"cell {index}"
        problems += [f"{where} shows a traceback:\n{text.strip()[-1500:]}" for text in seen["errors"]]
        if runs(cell) and seen["prompt"] in ("[ ]:", "[*]:"):
            problems.append(f"{where} did not run (prompt {seen['prompt']})")
        problems += [f"{where} shows {failure!r}" for failure in WIDGET_FAILURES if failure in seen["outputText"]]
        if match := WIDGET_AS_TEXT.search(seen["outputText"]):
            problems.append(f"{where} shows a widget as text instead of rendering it: {match.group(0)}...")
        if index in expected_plots and not any(plot["drawn"] for plot in seen["plots"]):
            problems.append(f"{where} should show a plotly figure but its output is blank")
        for plot in seen["plots"]:
            if not plot["drawn"] or not plot["traces"]:
                problems.append(f"{where} has a plotly figure that did not draw (traces: {plot['traces']}, "
                                f"text: {plot['text']!r})")
    return problems


def press_run_button(page, button, expected_traces=()):
    """Press a widget panel's Run button; return what a learner would miss: a reaction, the progress bar, the output.

    expected_traces: for each plotly chart the panel must show, in order, trace names it must include."""
    cell = button.locator("xpath=ancestor::div[contains(concat(' ', @class, ' '), ' jp-Cell ')][1]").element_handle()
    cell.evaluate(WATCH_PANEL_JS)
    button.scroll_into_view_if_needed()
    button.click()
    if not wait_until(page, PANEL_DONE_JS, [cell, button.element_handle()], RACE_MS):
        if not cell.evaluate("cell => cell.panelWatch.changes"):
            return ["nothing in the panel changed after pressing Run"]
        return [f"the run did not finish (Run stayed disabled) within {RACE_MS // 1000} s"]
    wait_until(page, f"cell => (shows => shows.complete || shows.errors.length)(({PANEL_SHOWS_JS})(cell))", cell,
               RENDER_MS)
    shows = cell.evaluate(PANEL_SHOWS_JS)
    problems = []
    if shows["progress"] and cell.evaluate("cell => cell.panelWatch.widths.size < 2"):
        problems.append("after pressing Run, the progress bar never moved")
    problems += [f"after pressing Run, the panel shows an error: {error}" for error in shows["errors"]]
    if not shows["outputs"]:
        problems.append("after pressing Run, the panel's output area stays empty")
    if shows["blank"]:
        problems.append(f"after pressing Run, {shows['blank']} of the panel's {shows['outputs']} outputs are blank")
    if shows["undrawn"]:
        problems.append(f"after pressing Run, {shows['undrawn']} of the panel's plotly charts did not draw")
    if shows["progress"] and not shows["plots"]:
        problems.append("after pressing Run, the race panel shows no plotly chart")
    for number, (wanted, drawn) in enumerate(zip(expected_traces, shows["traces"] + [[]] * len(expected_traces)), 1):
        if missing := wanted - set(drawn):
            problems.append(f"after pressing Run, chart {number} of the panel lacks the traces {sorted(missing)} "
                            f"(it has {drawn})")
    kernel_idle(page).wait_for(timeout=RACE_MS)
    return problems


def play_by_hand(page, cell, moves, what, shots=None, says=None):
    """In a step-through panel's cell, press Reset, then the button of each (mover, what it does) in `moves` (its label
    "mover ▶ does ..."), waiting for each step to be listed, until the panel says the invariant is broken; a
    screenshot after the steps numbered in `shots` ({step number: path}), and after those numbered in `says` the
    panel must say the words given and no verdict ({step number: words}). The problems met, in words."""
    steps = cell.locator(".widget-html li")
    try:
        cell.scroll_into_view_if_needed()
        cell.get_by_role("button", name="Reset").click()
        page.wait_for_function("cell => !cell.querySelector('.widget-html li')", arg=cell.element_handle(),
                               timeout=RENDER_MS)
        for number, (mover, does) in enumerate(moves, 1):
            button = cell.locator("button").filter(has_text=re.compile(rf"^\s*{mover} ▶ {does} "))
            if not wait_until(page, "button => !button.disabled", button.element_handle(timeout=RENDER_MS), RENDER_MS):
                return [f"step {number}: the button {button.inner_text()!r} stayed disabled"]
            button.click()
            steps.nth(number - 1).wait_for(timeout=RENDER_MS)
            if number in (shots or {}):
                whole_cell_screenshot(page, cell, shots[number])
            if number in (says or {}):
                shown = " ".join(cell.inner_text().split())
                if says[number] not in shown or "the invariant is BROKEN" in shown or "the invariant holds" in shown:
                    return [f"after step {number} the panel does not say {says[number]!r} alone: {shown[-300:]!r}"]
        cell.get_by_text("the invariant is BROKEN").wait_for(timeout=RENDER_MS)
    except Exception as failure:  # what a learner would see instead: the panel as it is, in the screenshot
        return [f"playing {what}: {type(failure).__name__}: {str(failure).splitlines()[0]}"]
    return []


def whole_cell_screenshot(page, cell, path):
    """Screenshot a cell whole: the window made as tall as the cell for it (JupyterLab clips a cell taller than its
    notebook's scrolled panel), then as it was."""
    viewport = page.viewport_size
    height = int(cell.bounding_box()["height"]) + 200
    if height > viewport["height"]:
        page.set_viewport_size({"width": viewport["width"], "height": min(height, MAX_SCREENSHOT_HEIGHT)})
    cell.scroll_into_view_if_needed()
    cell.screenshot(path=path)
    page.set_viewport_size(viewport)


def play_double_booking(page, screenshots):
    """In 30's step-through panel, press Reset, then the client buttons in a double-booking order; return problems.

    Each button must be labelled with the request it sends next; afterwards the panel must call the invariant
    broken and show the seat held by bob, the second writer. Screenshots of the panel: after both reads, and at
    the end."""
    cell = page.locator(".jp-Cell").filter(has=page.locator(".widget-html", has_text=SCHEDULER_TITLE))
    steps = cell.locator(".widget-html li")
    # after both read a free seat: the point of no return, both buttons offer a PutItem
    problems = play_by_hand(page, cell, DOUBLE_BOOKING, "the double booking",
                            {2: screenshots / "30-seat-booking-both-read.png"})
    played = [step.strip() for step in steps.all_inner_texts()]
    if [step.split()[0:3] for step in played] != [[client, "▶", operation] for client, operation in DOUBLE_BOOKING]:
        problems.append(f"the panel lists the steps {played}")
    seat = cell.evaluate(TABLE_ROW_JS)
    if not seat or seat.get("holder") != "bob":
        problems.append(f"after the double booking the panel shows the seat as {seat}, not held by bob")
    for client in ("alice", "bob"):
        if not cell.get_by_role("button", name=f"{client}: done, returned True").count():
            problems.append(f"{client}'s button does not say it was told True")
    cell.screenshot(path=screenshots / "30-seat-booking-double-booking.png")
    return problems


ATLAS_REPLAYS = {  # a red cell of the atlas: the order "Replay this cell" must play, step by step, and the verdict's end
    "BatchGetItem · G-single read skew (4 of 9)": (
        ["alice ▶ TransactWriteItems [Update, Update] → under way: none of its items visible yet (alice's call returns "
         "after the last)",
         "alice ▶ TransactWriteItems: make {PK: 'PAIR', SK: 'x'} visible",
         "bob ▶ BatchGetItem: read {PK: 'PAIR', SK: 'x'} → {PK: 'PAIR', SK: 'x', n: 90}",
         "bob ▶ BatchGetItem: read {PK: 'PAIR', SK: 'y'} → [{PK: 'PAIR', SK: 'x', n: 90}, {PK: 'PAIR', SK: 'y', n: 100}]",
         "alice ▶ TransactWriteItems: make {PK: 'PAIR', SK: 'y'} visible → alice's call returns OK"],
        "bob → [90, 100] · G-single read skew: bob read x = 90 and y = 100, 190 in all, not 200: part of alice's "
        "transfer"),
    "GetItem (default) · stale read (1 of 3)": (
        ["alice ▶ PutItem {PK: 'PAIR', SK: 'x', n: 1} → OK",
         "bob ▶ GetItem {PK: 'PAIR', SK: 'x'} → {PK: 'PAIR', SK: 'x', n: 0} "
         "(stale: {PK: 'PAIR', SK: 'x'} without alice's PutItem)"],
        "bob → 0 · stale read: bob read 0 after alice's PutItem of 1 had returned"),
}
ATLAS_HOLDING_ORDER = ("order 3 · holds: bob: GetItem → alice: PutItem", "bob → 0 · no stale read in this order")
ATLAS_DONE_JS = """([replay, told]) => [...replay.querySelectorAll('.widget-html')]
    .some(html => html.textContent.startsWith('all done') && html.textContent.includes(told))"""
# The controls of the rows with a dropdown that stick out of the notebook's output area, or hide part of their label.
OVERFLOWING_JS = """replay => {
    const edge = replay.closest('.jp-OutputArea-output').getBoundingClientRect().right;
    return [...replay.querySelectorAll('.widget-hbox')].filter(row => row.querySelector('select'))
        .flatMap(row => [...row.querySelectorAll('button, select')])
        .filter(control => control.getBoundingClientRect().right > edge + 1
                           || (control.tagName === 'BUTTON' && control.scrollWidth > control.clientWidth + 1))
        .map(control => `${control.tagName} ${control.textContent.trim().slice(0, 40)}: right edge at `
                        + `${Math.round(control.getBoundingClientRect().right)} of ${Math.round(edge)}, `
                        + `${control.clientWidth} px wide`);
}"""


def play_atlas_replays(page, screenshots):
    """In 33's atlas, choose each red cell of ATLAS_REPLAYS, press Replay this cell, and compare the panel's steps
    and verdict; check that the rows of buttons fit the notebook; then replay an order without the anomaly."""
    replay = page.locator(".lab-atlas-replay").first
    problems = []
    for number, (cell, (order, told)) in enumerate(ATLAS_REPLAYS.items(), 1):
        replay.scroll_into_view_if_needed()
        replay.locator("select").first.select_option(label=cell)
        replay.get_by_role("button", name="Replay this cell").click()
        if not wait_until(page, ATLAS_DONE_JS, [replay.element_handle(), told], RENDER_MS):
            problems.append(f"replaying {cell!r}: the panel never said 'all done: ... {told}'")
        panel = replay.locator(".lab-panel")
        steps = [" ".join(step.split()) for step in panel.locator("li").all_inner_texts()]
        if steps != order:
            problems.append(f"replaying {cell!r}, the panel lists the steps {steps}")
        if told not in panel.inner_text():
            problems.append(f"replaying {cell!r}, the panel does not say {told!r}")
        problems += [f"replaying {cell!r}: {control}" for control in replay.evaluate(OVERFLOWING_JS)]
        replay.screenshot(path=screenshots / f"33-isolation-atlas-replay-{number}.png")
    order, told = ATLAS_HOLDING_ORDER
    panel = replay.locator(".lab-panel")
    panel.locator("select").select_option(label=order)
    panel.get_by_role("button", name="Replay this order").click()
    if not wait_until(page, ATLAS_DONE_JS, [replay.element_handle(), told], RENDER_MS):
        problems.append(f"replaying {order!r} in the panel: it never said 'all done: ... {told}'")
    replay.screenshot(path=screenshots / f"33-isolation-atlas-replay-{len(ATLAS_REPLAYS) + 1}.png")
    return problems


RACE_NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "24-atomic-counters.ipynb"
DISCONNECTED_NOTE_JS = """cell => getComputedStyle(cell.querySelector('.lab-panel'), '::before').content
    .includes('This panel belongs to a kernel that has restarted: run the notebook from the top')"""
PROGRESS_MOVED_JS = """cell => [...cell.querySelectorAll('.progress-bar')]
    .some(bar => parseFloat(bar.style.width) > 0)"""


def type_into_slider(panel, description, value):
    """Set a panel's slider by typing into its editable readout, as a learner can."""
    readout = panel.locator(".widget-slider").filter(has_text=description).locator(".widget-readout")
    readout.click()
    readout.press("Control+A")
    readout.type(str(value))
    readout.press("Enter")


def play_interrupt_and_restart(page, screenshots):
    """In 24, start a long race from the race panel, interrupt the kernel, then restart it: the panel draws what ran
    and says, after the restart, that it belongs to the old kernel."""
    sources = ["".join(cell["source"]) if cell["cell_type"] == "code" else ""
               for cell in json.loads(RACE_NOTEBOOK.read_text())["cells"]]
    panel = page.locator(".jp-Notebook .jp-Cell").nth(next(i for i, source in enumerate(sources)
                                                            if "race_panel()" in source))
    panel.scroll_into_view_if_needed()
    type_into_slider(panel, "operations", 10_000)
    type_into_slider(panel, "think time", 20)
    panel.get_by_role("button", name="Run").click()
    page.wait_for_function(PROGRESS_MOVED_JS, arg=panel.element_handle(), timeout=RACE_MS, polling=100)
    choose_menu_item(page, "Kernel", re.compile(r"^Interrupt Kernel"))
    status = panel.locator(".widget-html").filter(has_text="interrupted, partial result")
    try:
        status.wait_for(timeout=RENDER_MS)
        panel.locator(".widget-output .js-plotly-plot .main-svg").first.wait_for(timeout=RENDER_MS)
    finally:
        panel.scroll_into_view_if_needed()
        panel.screenshot(path=screenshots / "24-atomic-counters-interrupted.png")
    problems = []
    title = panel.locator(".widget-output .js-plotly-plot .gtitle").first.text_content()
    if not re.search(r"interrupted after [\d,]+ of 10,000 operations", title):
        problems.append(f"after Kernel -> Interrupt, the race panel's figure is titled {title!r}")
    if panel.locator('.widget-output [data-mime-type="application/vnd.jupyter.stderr"]').count():
        problems.append("after Kernel -> Interrupt, the race panel shows a traceback")
    if not panel.get_by_role("button", name="Run").is_enabled():
        problems.append("after Kernel -> Interrupt, the race panel's Run button stays disabled")
    choose_menu_item(page, "Kernel", re.compile(r"^Restart Kernel…"))
    page.locator(".jp-Dialog .jp-mod-accept").click()
    page.wait_for_function(DISCONNECTED_NOTE_JS, arg=panel.element_handle(), timeout=RENDER_MS, polling=250)
    panel.screenshot(path=screenshots / "24-atomic-counters-after-restart.png")
    return problems


LOST_BOOKING_TITLE = "A booking lost between two Regions"
MRSC_CONFLICT = "bob: PutItem  →  ReplicatedWriteConflictException"  # 34's MRSC race, printed step by step
ONE_ARRIVAL_PENDING = "1 arrival in another Region still to play: press it for the verdict"
LOST_BOOKING = [("alice", "GetItem"), ("alice", "PutItem"), ("bob", "GetItem"), ("bob", "PutItem"),
                ("eu-west-1", "p34-seats"), ("us-east-1", "p34-seats")]  # both checks pass, then each write arrives


def play_lost_booking(page, screenshots):
    """In 34's step-through panel, press Reset, then alice's and bob's requests and the two arrivals, each button
    labelled with what it does; with one arrival still to play the panel gives no verdict and says so; afterwards it
    must call the invariant broken, both told OK, and show FLIGHT#1 with one passenger in each Region. Screenshots:
    after both version checks passed, with one arrival pending, and at the end."""
    cell = page.locator(".jp-Cell").filter(has=page.locator(".widget-html", has_text=LOST_BOOKING_TITLE))
    steps = cell.locator(".widget-html li")
    pending = screenshots / "34-global-tables-one-arrival-pending.png"
    problems = play_by_hand(page, cell, LOST_BOOKING, "the lost booking",
                            {4: screenshots / "34-global-tables-both-checks-passed.png", 5: pending},
                            {5: ONE_ARRIVAL_PENDING})
    played = [" ".join(step.split()) for step in steps.all_inner_texts()]
    if [step.split()[0:2] for step in played] != [[mover, "▶"] for mover, _ in LOST_BOOKING]:
        problems.append(f"the panel lists the steps {played}")
    if "alice → 'OK', bob → 'OK'" not in cell.inner_text():
        problems.append("the panel does not say both were told OK")
    whole_cell_screenshot(page, cell, screenshots / "34-global-tables-lost-booking.png")
    conflict = page.locator(".jp-Cell").filter(has=page.locator(".jp-OutputArea", has_text=MRSC_CONFLICT)).first
    conflict.scroll_into_view_if_needed()
    conflict.screenshot(path=screenshots / "34-global-tables-mrsc-conflict.png")
    return problems


PLAYS = {"24-atomic-counters": play_interrupt_and_restart,
         "30-seat-booking": play_double_booking,  # notebook: what a learner plays in it by hand, after Run All
         "33-isolation-atlas": play_atlas_replays,
         "34-global-tables": play_lost_booking}


def save_screenshot(page, path):
    """Screenshot the whole notebook at once, from its top, in a window made as tall as its cells (if it opened)."""
    width, height = page.viewport_size["width"], page.viewport_size["height"]
    for _ in range(3):
        size = page.evaluate(NOTEBOOK_SIZE_JS)
        if size is None:
            break
        wanted = min(height - size["visible"] + size["content"], MAX_SCREENSHOT_HEIGHT)
        if wanted == height:
            break
        height = wanted
        page.set_viewport_size({"width": width, "height": height})
        page.evaluate("new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
    page.screenshot(path=path)


def test_notebook_runs_in_the_browser(notebook, page, jupyter_lab, screenshots):
    stored = notebook.read_bytes()
    cells = json.loads(stored)["cells"]
    try:
        open_notebook(page, jupyter_lab, notebook)
        run_all_cells(page)
        problems = problems_on_page(page, cells)
        if not problems:
            for number, button in enumerate(page.locator(RUN_BUTTONS).filter(has_text=RUN_LABEL).all(), 1):
                problems += [f"Run button {number}: {problem}"
                             for problem in press_run_button(page, button, PANEL_TRACES.get(notebook.stem, ()))]
            problems += problems_on_page(page, cells)
        if not problems and notebook.stem in PLAYS:
            problems += PLAYS[notebook.stem](page, screenshots)
    finally:
        save_screenshot(page, screenshots / f"{notebook.stem}.png")
    if problems:
        pytest.fail(f"{notebook.name} in JupyterLab:\n" + "\n".join(problems), pytrace=False)
    assert notebook.read_bytes() == stored, f"running {notebook.name} in the browser rewrote the file"
