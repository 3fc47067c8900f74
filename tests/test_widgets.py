"""Panels: bounded controls, one run at a time, a progress bar that moves, a Stop that stops."""
import re
import threading

import plotly.graph_objects as go
import pandas as pd
import pytest

from helpers import fresh_table
from helpers.knobs import get_knobs
from helpers.races import LIMITS, STRATEGIES
from helpers.widgets import Panel, StepThrough, picker, race_panel, slider


def blocking_panel():
    """A panel whose run waits until released, recording each call."""
    release, started, calls = threading.Event(), threading.Event(), []

    def run(size, progress, stop):
        calls.append(size)
        started.set()
        progress(1, 4)
        release.wait(5)
        progress(4, 4)
        return pd.DataFrame({"size": [size]})

    return Panel("test", run, size=slider("size", 1, 10, 3)), release, started, calls


def test_a_second_press_while_a_run_is_going_starts_nothing():
    panel, release, started, calls = blocking_panel()
    assert panel.press() is True
    started.wait(5)
    assert panel.running and panel.button.disabled
    assert panel.press() is False and panel.click() is False
    release.set()
    panel.wait(5)
    assert calls == [3] and panel.runs == 1 and not panel.running and not panel.button.disabled
    assert panel.press() is True
    panel.wait(5)
    assert calls == [3, 3]


def test_the_progress_bar_follows_the_run_and_controls_are_locked_meanwhile():
    panel, release, started, calls = blocking_panel()
    panel.press()
    started.wait(5)
    assert (panel.bar.value, panel.bar.max) == (1, 4)
    assert panel.controls["size"].disabled and not panel.stop_button.disabled
    release.set()
    panel.wait(5)
    assert (panel.bar.value, panel.bar.max) == (4, 4)
    assert not panel.controls["size"].disabled and panel.stop_button.disabled
    assert panel.status.value.startswith("done in")


def test_stop_reaches_the_run():
    seen = []

    def run(stop):
        stop.wait(5)
        seen.append(stop.is_set())

    panel = Panel("test", run)
    panel.press()
    panel.stop_button.click()
    panel.wait(5)
    assert seen == [True]


def test_a_failing_run_is_shown_and_the_panel_is_ready_again():
    def run(size):
        raise ValueError(f"size {size} is too big")

    panel = Panel("test", run, size=slider("size", 1, 10, 3))
    with pytest.raises(ValueError):
        panel.click()
    assert "size 3 is too big" in panel.output.outputs[0]["text"]
    assert "ValueError" in panel.status.value and not panel.running and not panel.button.disabled


def test_click_runs_in_the_foreground_and_keeps_what_run_returned():
    panel = Panel("test", lambda size: (go.Figure(), pd.DataFrame({"size": [size]})), size=slider("size", 1, 10, 3))
    assert panel.click() is True
    figure, frame = panel.last
    assert frame["size"].tolist() == [3]
    assert [o["output_type"] for o in panel.output.outputs] == ["display_data", "display_data"]
    assert "application/vnd.plotly.v1+json" in panel.output.outputs[0]["data"]
    assert "text/html" in panel.output.outputs[1]["data"]
    assert panel.bar is None and panel.stop_button is None


def test_sliders_and_picker_cannot_leave_their_range():
    threads = slider("threads", *LIMITS["threads"], 10)
    threads.value = 1000
    assert threads.value == 64
    threads.value = -5
    assert threads.value == 1
    strategy = picker("strategy", STRATEGIES, "racy")
    with pytest.raises(Exception):
        strategy.value = "pessimistic"


def test_the_race_panel_runs_one_race_per_press_and_shows_plots_and_summary(lab):
    panel = race_panel(fresh_table("p24-atomic-counters", lab))
    bounds = {name: (c.min, c.max) for name, c in panel.controls.items() if name != "strategy"}
    assert bounds == {"threads": (1, 64), "operations": (1, 10_000), "think_ms": (0, 50)}
    panel.controls["operations"].value = 400
    assert panel.press() is True
    assert panel.press() is False
    panel.wait(60)
    assert panel.error is None and panel.runs == 1
    *figures, summary = panel.last
    assert summary["strategy"].tolist() == ["read-then-put", "ADD"] and summary["operations"].tolist() == [400, 400]
    assert summary.set_index("strategy").loc["ADD", "lost updates"] == 0
    shown = {label: value for label, value in panel.controls["strategy"].options}
    assert shown == {"read-then-put": "racy", "ADD": "add", "version check + retry": "optimistic",
                     "ADD -1 with a floor": "conditional floor"}, "the dropdown names each strategy as its chart does"
    assert len(figures) == 2 and panel.bar.value == panel.bar.max == 800
    assert len(panel.output.outputs) == 3


def test_stop_in_the_race_panel_keeps_the_operations_that_completed_as_a_normal_outcome(lab):
    panel = race_panel(fresh_table("p24-atomic-counters", lab))
    panel.controls["operations"].value = 10_000
    panel.controls["think_ms"].value = 20
    panel.press()
    while panel.bar.value < 10:
        panel.wait(0.05)
    panel.stop_button.click()
    panel.wait(10)
    assert panel.error is None and panel.status.value.startswith("stopped, partial result")
    *figures, summary = panel.last
    assert summary["strategy"].tolist() == ["read-then-put"]
    note = figures[0].layout.title.text
    assert re.search(r"stopped after [\d,]+ of 10,000 operations: the operations that completed", note)
    assert 0 < summary["expected"].iloc[0] < 10_000
    assert [o["output_type"] for o in panel.output.outputs] == ["display_data"] * 3


def test_a_panel_says_what_happened_and_what_to_do_never_a_raw_botocore_error(lab):
    missing = lab.table("p99-no-such-table")
    panel = race_panel(missing)
    panel.press()
    panel.wait(30)
    shown = panel.output.outputs[0]["text"]
    assert shown.startswith("DynamoDB refused PutItem (ResourceNotFoundException")
    assert "run the notebook's Setup cell again" in shown and "botocore" not in shown


def test_the_race_panel_switch_runs_as_weak_as_dynamodb_then_puts_the_knobs_back(lab):
    seen = []
    panel = Panel("test", lambda: seen.append(get_knobs(lab)["stale_reads"]), weak_switch=True)
    panel.click()
    panel.weak.value = True
    panel.click()
    assert seen == [None, [0.01, 0.1]]
    assert get_knobs(lab)["stale_reads"] is None
    assert "stronger than DynamoDB" in panel.weak.description


def test_a_new_run_clears_the_last_figure_and_its_title_until_it_shows_its_own():
    seen_while_running = []

    def run(n):
        seen_while_running.append(panel.output.outputs)
        return go.Figure(layout_title_text=f"run {n}")

    panel = Panel("t", run, n=slider("n", 1, 5, 1))
    panel.click()
    panel.click()
    assert seen_while_running == [(), ()]
    assert len(panel.output.outputs) == 1 and panel.last.layout.title.text == "run 1"


COUNTER = {"PK": "POST#hello-world", "SK": "STATS"}


@pytest.mark.usefixtures("knobs_off")
def test_a_step_through_panel_s_judge_names_what_the_order_shows_in_green_or_red(lab):
    table = fresh_table("p24-atomic-counters", lab)
    clients = {"alice": lambda: table.put_item(Item={**COUNTER, "views": 1}) and "OK",
               "bob": lambda: int(table.get_item(Key=COUNTER, ConsistentRead=True)["Item"]["views"])}

    def judge(results, steps):
        if results["bob"] == 1:
            return True, "bob saw alice's write"
        return False, f"bob read {results['bob']}, {'after' if steps[0].startswith('alice') else 'before'} alice's write"

    panel = StepThrough(clients, lambda: table.put_item(Item={**COUNTER, "views": 0}), judge=judge)
    try:
        panel.replay(("bob", "alice"))
        assert panel.verdict == "all done: alice → 'OK', bob → 0 · bob read 0, before alice's write"
        assert "color:#b00" in panel.verdict_view.value
        panel.replay(("alice", "bob"))
        assert panel.verdict.endswith(" · bob saw alice's write") and "color:#2e7d32" in panel.verdict_view.value
    finally:
        panel.stepper.close()


@pytest.mark.usefixtures("knobs_off")
def test_a_transaction_s_first_step_says_none_of_its_items_is_visible_yet_and_its_last_says_the_call_returned(lab):
    table = fresh_table("p24-atomic-counters", lab)
    keys = [{"PK": "POST#hello-world", "SK": sk} for sk in ("STATS", "LIKES")]
    transaction = [{"Put": {"TableName": table.name, "Item": {**key, "views": 1}}} for key in keys]
    panel = StepThrough({"alice": lambda: lab.client.transact_write_items(TransactItems=transaction) and "OK"},
                        lambda: [table.delete_item(Key=key) for key in keys], consistency="dynamodb")
    try:
        panel.step("alice")
        answers = re.findall(r"</code>(.*?)</li>", panel.steps_view.value)
        assert answers == [" <b>→ under way: none of its items visible yet</b> <i>(alice's call returns after the "
                           "last)</i>"]
        assert "alice" not in panel.stepper.results
        panel.step("alice+0")
        panel.step("alice+1")
        answers = re.findall(r"</code>(.*?)</li>", panel.steps_view.value)
        assert answers[1:] == ["", " <b>→ alice's call returns OK</b>"]
        assert panel.stepper.results == {"alice": "OK"}
    finally:
        panel.stepper.close()



@pytest.mark.usefixtures("knobs_off")
def test_a_step_through_panel_offers_each_stream_record_on_its_way_as_a_button_of_its_own(lab):
    table = fresh_table("p35-orders", lab)
    panel = StepThrough({"shop": lambda: table.put_item(Item={"PK": "ORDER#1"}) and "OK"},
                        lambda: fresh_table("p35-orders", lab), consistency="dynamodb")
    try:
        panel.step("shop")
        assert panel.move_buttons["stream#1"].description == "stream ▶ INSERT {PK: 'ORDER#1'} into p35-orders's stream"
        panel.step("stream#1")
        assert panel.history == ["shop: PutItem", "stream: INSERT {PK: 'ORDER#1'} into p35-orders's stream"]
        assert "stream#1" not in panel.move_buttons
    finally:
        panel.stepper.close()


@pytest.mark.usefixtures("knobs_off")
def test_a_failing_order_s_minimal_cycle_is_drawn_below_the_verdict_once_its_last_step_is_played(lab):
    table = fresh_table("p24-atomic-counters", lab)

    def increment():
        views = int(table.get_item(Key=COUNTER, ConsistentRead=True)["Item"]["views"])
        table.put_item(Item={**COUNTER, "views": views + 1})
        return views + 1

    panel = StepThrough({"alice": increment, "bob": increment}, lambda: table.put_item(Item={**COUNTER, "views": 0}),
                        lambda results: table.get_item(Key=COUNTER, ConsistentRead=True)["Item"]["views"] == 2)
    try:
        children = list(panel.view.children)
        assert children.index(panel.cycle_view) == children.index(panel.verdict_view) + 1
        for move in ("alice", "bob", "alice"):
            panel.step(move)
            assert panel.cycle is None and not panel.cycle_view.outputs, "no cycle before the last step"
        panel.step("bob")
        assert panel.verdict.endswith("the invariant is BROKEN")
        assert "A lost update" in panel.cycle.layout.title.text and "G-single-item" in panel.cycle.layout.title.text
        shown, = panel.cycle_view.outputs
        assert shown["data"]["application/vnd.plotly.v1+json"]["layout"]["title"]["text"] == \
            panel.cycle.layout.title.text, "the panel shows the figure it holds, as JupyterLab draws plotly's"
        panel.replay(("alice", "alice", "bob", "bob"))
        assert panel.verdict.endswith("the invariant holds")
        assert panel.cycle is None and not panel.cycle_view.outputs, "a passing order draws no cycle"
        panel.replay(("bob", "alice", "alice", "bob"))
        assert panel.cycle is not None and len(panel.cycle_view.outputs) == 1
        panel.reset()
        assert panel.cycle is None and not panel.cycle_view.outputs, "reset clears it"
    finally:
        panel.stepper.close()
