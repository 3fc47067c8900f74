"""Race figures: titles that state the result, labelled axes, WebGL when points are many, built fast."""
import time

import pandas as pd
import plotly.graph_objects as go
import pytest

from helpers import fresh_table
from helpers import plots
from helpers.contention import CLIENTS, PANELS, contention_figure
from helpers.races import StopSignal, race, sweep


@pytest.fixture(scope="module")
def races_run(lab):
    table = fresh_table("p24-atomic-counters", lab)
    return {name: race(name, threads=8, operations=40, think_ms=1, table=table)
            for name in ("racy", "add", "optimistic", "conditional floor")}, table


def test_expected_against_final_names_the_lost_updates(races_run):
    runs, _ = races_run
    figure = plots.expected_vs_final(runs["racy"], runs["add"])
    assert f"read-then-put lost {runs['racy'].lost}" in figure.layout.title.text
    assert "ADD lost none" in figure.layout.title.text
    labels = [a.text for a in figure.layout.annotations]
    assert labels == [f"<b>{runs['racy'].lost} lost</b>", "<b>exact: none lost</b>"]
    assert figure.data[1].y == (runs["racy"].final, 40)
    assert figure.layout.yaxis.title.text and figure.layout.xaxis.title.text


def test_a_comparison_whose_second_race_was_interrupted_says_so_in_its_title(races_run):
    runs, table = races_run
    stop = StopSignal()
    stop.set("interrupted")
    interrupted = race("add", threads=8, operations=40, table=table, stop=stop)
    title = plots.expected_vs_final(runs["racy"], interrupted).layout.title.text
    assert title.endswith(f"<br><sup>ADD: interrupted after {interrupted.completed} of 40 operations: the operations "
                          "that completed</sup>")
    assert "<sup>" not in plots.expected_vs_final(runs["racy"], runs["add"]).layout.title.text


def test_the_racy_timeline_marks_every_write_that_erased_others(races_run):
    runs, _ = races_run
    figure = plots.timeline(runs["racy"])
    names = [trace.name for trace in figure.data]
    assert "write that erased others' updates" in names and "read" in names
    assert f"{runs['racy'].lost} of 40 updates were overwritten" in figure.layout.title.text
    lanes = {y for trace in figure.data for y in trace.y if y}
    assert lanes <= {f"thread {n}" for n in range(8)}
    assert figure.layout.xaxis.title.text == "time since the threads were released (ms)"


def test_timelines_of_safe_strategies_say_so(races_run):
    runs, _ = races_run
    assert "every update landed" in plots.timeline(runs["add"]).layout.title.text
    assert "version conflicts were retried" in plots.timeline(runs["optimistic"]).layout.title.text
    assert "20 sold, 20 refused" in plots.timeline(runs["conditional floor"]).layout.title.text


def test_the_optimistic_figure_counts_retries_per_thread_and_attempts(races_run):
    runs, _ = races_run
    optimistic = runs["optimistic"]
    figure = plots.retries(optimistic)
    assert sum(figure.data[0].y) == optimistic.retries
    assert sum(figure.data[1].y) == 40
    assert f"{optimistic.retries} retries" in figure.layout.title.text


def test_the_sweep_figure_has_both_panels_with_labelled_axes(races_run):
    _, table = races_run
    runs = sweep(threads=(1, 4), think_ms=(0, 5), operations=12, repeats=1, pause_ms=2, table=table)
    figure = plots.sweep(runs)
    assert figure.layout.title.text.startswith("The race gets worse as the window widens")
    assert figure.layout.xaxis.title.text == "threads"
    assert figure.layout.xaxis2.title.text == "think time between read and write (ms)"
    assert figure.layout.yaxis.title.text == "updates lost (% of operations)"


def test_a_big_race_timeline_uses_webgl_and_builds_in_under_two_seconds(races_run):
    _, table = races_run
    big = race("racy", threads=50, operations=2_000, table=table)
    began = time.perf_counter()
    figure = plots.timeline(big)
    assert time.perf_counter() - began < 2
    assert any(isinstance(trace, go.Scattergl) for trace in figure.data)


def test_the_price_of_contention_writes_its_log_ticks_whole():
    frame = pd.DataFrame([{"strategy": name, "clients": n, **{column: float(n) for column, _ in PANELS}}
                          for name in ("read-then-put", "ADD") for n in CLIENTS])
    figure = contention_figure(frame)
    log_axes = (figure.layout.yaxis2, figure.layout.yaxis3, figure.layout.yaxis4)
    assert all(axis.type == "log" and axis.dtick is None and {1, 2, 5, 10, 20} <= set(axis.tickvals)
               for axis in log_axes), "20 must read 20, not a small 2 beside 10"
    assert [annotation.text for annotation in figure.layout.annotations] == [title for _, title in PANELS]


def test_an_order_figure_gives_each_move_its_own_colour_in_its_clients_hue_and_words_that_fit():
    frame = pd.DataFrame({
        "schedule": [("grace", "grace+0", "heidi", "grace+1", "heidi~1")],
        "steps": [("grace: TransactWriteItems", "grace: TransactWriteItems makes {PK: 'USER#grace', SK: 'PROFILE'} visible",
                   "heidi: TransactWriteItems", "grace: TransactWriteItems makes {PK: 'EMAIL#z', SK: 'EMAIL'} visible",
                   "heidi: Query (stale: {PK: 'USER#grace', SK: 'PROFILE'} without grace's PutItem)")],
        "answers": [("OK", "OK", "TransactionCanceledException", "OK", "OK")],
        "results": [{"grace": True, "heidi": False}], "ok": [True], "doomed_at": [-1]})
    figure = plots.orders(frame, "create two users with one email")
    legend = {trace.name: trace.marker.color for trace in figure.data if trace.showlegend is not False and trace.name}
    moves = ["grace", "grace: item 1 of its write visible", "grace: item 2 of its write visible", "heidi",
             "heidi: an older answer"]
    assert set(moves) <= set(legend) and not any(sign in name for name in legend for sign in "+~@!"), \
        "the legend names moves in words, never the explorer's grace+0 or heidi~1"
    assert len({legend[move] for move in moves}) == len(moves)
    assert {legend[move] for move in ("grace", "heidi")} == set(plots.CLIENT_COLOURS[:2])
    assert legend[moves[1]] in plots.MOVE_SHADES[legend["grace"]] and legend[moves[4]] in plots.MOVE_SHADES[legend["heidi"]]
    hovers = [text for trace in figure.data if trace.type == "bar" and trace.hovertext for text in trace.hovertext]
    assert all(text.startswith(("grace: ", "heidi: ")) for text in hovers) and not any("+" in text for text in hovers)
    cells = [text.replace("<br>", " ") for trace in figure.data if trace.type == "bar" and trace.text
             for text in trace.text]
    assert {"USER#grace visible", "EMAIL#z visible", "Query (stale)"} <= set(cells)


def test_items_of_one_partition_becoming_visible_are_named_by_the_sort_key_that_tells_them_apart():
    wallet = "TransactWriteItems makes {PK: 'WALLET#alice', SK: 'WALLET'} visible"
    ledger = "TransactWriteItems makes {PK: 'WALLET#alice', SK: 'WITHDRAWAL#w-1'} visible"
    assert plots.cell_words([wallet, ledger, "GetItem"]) == {
        wallet: "WALLET visible", ledger: "WITHDRAWAL#w-1 visible", "GetItem": "GetItem"}


def test_a_write_arriving_in_another_region_is_named_in_two_lines_in_a_taller_row():
    arrival = "p34-seats {PK: 'FLIGHT#1'} as written in us-east-1 arrives in eu-west-1"
    assert plots.cell_words([arrival]) == {arrival: "FLIGHT#1<br>→ eu-west-1"}
    frame = pd.DataFrame({"schedule": [("alice", "eu-west-1#1")], "steps": [("alice: PutItem", f"eu-west-1: {arrival}")],
                          "answers": [("OK", "OK")], "results": [{"alice": "OK"}], "ok": [True], "doomed_at": [-1]})
    figure = plots.orders(frame, "lose a booking")
    assert "FLIGHT#1<br>→ eu-west-1" in [text for bar in figure.data if bar.text for text in bar.text]
    assert figure.layout.height == 150 + 2 * 16 + 6  # a row of two lines of cell text, taller than 30


def test_a_write_with_a_fault_is_named_by_its_operation_in_its_cell_and_in_full_on_hover():
    frame = pd.DataFrame({
        "schedule": [("bob", "alice!lost", "alice", "bob!crash")],
        "steps": [("bob: GetItem", "alice: PutItem (response lost, the SDK retries)", "alice: PutItem",
                   "bob: UpdateItem (then the client crashes)")],
        "answers": [("OK", "OK", "ConditionalCheckFailedException", "OK")],
        "results": [{"alice": False, "bob": None}], "ok": [False], "doomed_at": [1]})
    figure = plots.orders(frame, "lose the order")
    cells = [text for trace in figure.data if trace.type == "bar" and trace.text for text in trace.text]
    hovers = [text for trace in figure.data if trace.type == "bar" and trace.hovertext for text in trace.hovertext]
    assert sorted(cells) == ["GetItem", "PutItem", "PutItem", "Update<br>Item"]
    assert "alice: PutItem (response lost, the SDK retries) → OK" in hovers
    legend = {trace.name for trace in figure.data if trace.showlegend is not False and trace.name}
    assert {"alice: response lost, the SDK retries", "bob: then the client crashes"} <= legend


def test_an_order_figure_keeps_its_rows_in_order_whoever_moves_first_in_each():
    frame = pd.DataFrame({
        "schedule": [("alice", "bob"), ("bob", "bob"), ("alice", "alice")],
        "steps": [("alice: GetItem", "bob: PutItem"), ("bob: GetItem", "bob: PutItem"),
                  ("alice: GetItem", "alice: PutItem")],
        "answers": [("OK", "OK")] * 3, "results": [{"alice": None, "bob": None}] * 3, "ok": [True, True, False],
        "doomed_at": [-1, -1, 0]})
    figure = plots.orders(frame, "lose an update")
    assert list(figure.layout.yaxis.categoryarray) == ["order 1", "order 2", "order 3"]
    assert figure.layout.yaxis.categoryorder == "array" and figure.layout.yaxis.autorange == "reversed"


def test_a_consumers_deliveries_show_each_record_once_per_invocation_coloured_by_what_came_of_it():
    frame = pd.DataFrame({
        "invocation": [1, 2, 3, 4], "attempt": [1, 1, 1, 2],
        "events": [["INSERT A", "INSERT B"], ["INSERT A"], ["INSERT B"], ["INSERT B"]],
        "outcome": ["raised RuntimeError; split into 1 and 1", "ok",
                    "the invocation died (crashed after its PutItem) before its batch was checkpointed",
                    "raised RuntimeError; retries spent: discarded"]})
    figure = plots.deliveries(frame)
    squares = {trace.name: list(zip(trace.x, trace.y, trace.text)) for trace in figure.data}
    assert squares == {
        "handled": [(2, "INSERT A", "#1")],
        "failed (raised, or reported failed)": [(1, "INSERT A", "#1"), (1, "INSERT B", "#1")],
        "the invocation died": [(3, "INSERT B", "#1")],
        "failed, retries spent: discarded": [(4, "INSERT B", "#2")]}
    assert figure.layout.title.text == "2 records, handed to the function 5 times in 4 invocations"
    assert list(figure.layout.yaxis.categoryarray) == ["INSERT A", "INSERT B"]


def test_a_long_operation_name_is_split_on_two_lines_in_its_cell_and_a_short_one_is_not():
    words = plots.cell_words(["GetShardIterator", "TransactWriteItems", "GetRecords", "PutItem", "Query (stale: x)"])
    assert words["GetShardIterator"] == "GetShard<br>Iterator"
    assert words["TransactWriteItems"] == "Transact<br>WriteItems"
    assert (words["GetRecords"], words["PutItem"]) == ("Get<br>Records", "PutItem")
    assert plots.two_lines("OUTBOX#1 in stream") == "OUTBOX#1<br>in stream"
    assert plots.two_lines("WALLET visible") == "WALLET<br>visible" and plots.two_lines("GetItem") == "GetItem"


def test_a_kinesis_choice_shows_its_order_and_its_repeat_on_two_lines():
    assert plots.choice_words("consumer: Kinesis hands over records 1, 2, 3: 3, 1, 2, then 2 again") == \
        "3,1,2<br>+2 again"
    assert plots.choice_words("consumer: Kinesis hands over records 1, 2: 2, 1") == "2,1"


def test_a_long_outcome_is_wrapped_and_the_axis_makes_room_for_it_and_names_a_record_entering_its_stream():
    outcome = "refused and crashed after its PutItem: charged never"
    frame = pd.DataFrame({
        "schedule": [("alice", "stream#1")], "steps": [("alice: PutItem", "stream: INSERT {PK: 'A'} into t's stream")],
        "answers": [("OK", "entered")], "results": [{"alice": None}], "ok": [False], "doomed_at": [-1]})
    figure = plots.orders(frame, "never charge the order", outcome=lambda results: outcome)
    label, = next(trace for trace in figure.data if getattr(trace, "mode", None) == "text").text
    assert all(len(line) <= plots.OUTCOME_LINE for line in label.split("<br>")) and "<br>" in label
    assert label.replace("<br>", " ") == f"broken: {outcome}"
    assert figure.layout.xaxis.range[1] > 2 * 1.3, "room beside the steps for the outcome"
    assert figure.layout.xaxis.title.text == "step (one request reaches DynamoDB, or one record enters its stream)"


def test_a_consumers_finding_of_its_shard_is_left_out_and_the_steps_after_it_keep_their_numbers():
    finding = ("consumer: ListStreams", "consumer: DescribeStream t", "consumer: DescribeStream t",
               "consumer: GetShardIterator TRIM_HORIZON")
    frame = pd.DataFrame({
        "schedule": [("consumer",) * 6, ("consumer",) * 6],
        "steps": [(*finding, "consumer: GetRecords", "consumer: PutItem"), (*finding, "consumer: GetRecords",
                                                                            "consumer: UpdateItem")],
        "answers": [("OK",) * 6] * 2, "results": [{"consumer": 1}, {"consumer": 2}], "ok": [True, False],
        "doomed_at": [-1, 5]})
    figure = plots.orders(frame, "count twice")
    cells = [text.replace("<br>", "") for trace in figure.data if trace.type == "bar" and trace.text
             for text in trace.text]
    assert sorted(cells) == ["GetRecords", "GetRecords", "PutItem", "UpdateItem"]
    assert list(figure.layout.xaxis.ticktext) == ["5", "6"]
    assert figure.layout.xaxis.title.text.endswith("; steps 1-4, the consumer finding its shard, left out")


def test_a_legend_of_many_moves_sits_below_the_title_not_across_it():
    moves = ("alice", "alice!lost", "alice!crash", "bob", "bob!lost", "bob!crash")
    frame = pd.DataFrame({"schedule": [moves], "steps": [tuple(f"{move.split('!')[0]}: PutItem" for move in moves)],
                          "answers": [("OK",) * 6], "results": [{"alice": 1, "bob": 1}], "ok": [False],
                          "doomed_at": [2]})
    few = plots.orders(frame.assign(schedule=[("alice",) * 3 + ("bob",) * 3]), "charge twice")
    many = plots.orders(frame, "charge twice")
    assert many.layout.margin.t >= few.layout.margin.t + 2 * plots.LEGEND_ROW
    assert many.layout.height - many.layout.margin.t == few.layout.height - few.layout.margin.t


def op(index, process, kind, value, requests):
    """One record of an explored history, as helpers.explore.histories writes it."""
    return {"index": index, "process": process, "type": kind, "f": "txn", "value": value, "requests": requests}


X = "{PK: 'PAIR', SK: 'x'}"
# bob reads alice's completed write, then reads x again and gets the version before it: non-monotonic reads
NON_MONOTONIC = {"ops": [op(0, "reset", "invoke", [["w", X, 0]], ["reset()"]), op(1, "reset", "ok", [["w", X, 0]], ["reset()"]),
                         op(2, "alice", "invoke", [["w", X, 1]], ["PutItem"]), op(3, "alice", "ok", [["w", X, 1]], ["PutItem"]),
                         op(4, "bob", "invoke", [["r", X, None]], ["GetItem"]), op(5, "bob", "ok", [["r", X, 1]], ["GetItem"]),
                         op(6, "bob", "invoke", [["r", X, None]], ["GetItem"]), op(7, "bob", "ok", [["r", X, 0]], ["GetItem"])],
                 "version_order": {X: [0, 1]}}


def boxes_and_arrows(figure):
    """(the boxes: {the operation's index: (its centre, its text)}, the arrows: [(tail, head, the label nearest its
    middle)]) of a drawn cycle."""
    notes = list(figure.layout.annotations)
    boxes = {int(note.name.split()[-1]): ((note.x, note.y), note.text) for note in notes if note.bordercolor}
    labels = [note for note in notes if not note.showarrow and not note.bordercolor and note.xref in ("x", "x2")]
    arrows = [((arrow.ax, arrow.ay), (arrow.x, arrow.y),
               min(labels, key=lambda label: (label.x - (arrow.x + arrow.ax) / 2) ** 2
                   + (label.y - (arrow.y + arrow.ay) / 2) ** 2).text) for arrow in notes if arrow.showarrow]
    return boxes, arrows


def nearest(boxes, point):
    """The index of the operation whose box is nearest a point."""
    return min(boxes, key=lambda index: (boxes[index][0][0] - point[0]) ** 2 + (boxes[index][0][1] - point[1]) ** 2)


def test_a_drawn_cycle_has_a_box_per_operation_and_an_arrow_per_edge_from_its_source_to_its_target_labelled():
    case, report = plots.history_cycle(NON_MONOTONIC, units=("request",))
    assert case.type == "G-single-item-realtime"
    figure = plots.cycle(case, report)
    boxes, arrows = boxes_and_arrows(figure)
    assert sorted(boxes) == sorted(op["index"] for op in case.cycle.transactions) == [3, 5, 7]
    assert [boxes[index][1].split("<br>") for index in (3, 5, 7)] == [
        ["<b>alice's PutItem</b>", "wrote PAIR x v1"], ["<b>bob's GetItem</b>", "read PAIR x v1"],
        ["<b>bob's GetItem</b>", "read PAIR x v0"]]
    kinds = {"wr": "<b>wr</b> · PAIR x v1", "rw": "<b>rw</b> · PAIR x v0 → v1", "realtime": "<b>real time</b>"}
    assert len(arrows) == len(case.cycle.steps) == 3
    for step in case.cycle.steps:
        tail, head, label = next(arrow for arrow in arrows if arrow[2].split("<br>")[0] == kinds[step.type])
        assert (nearest(boxes, tail), nearest(boxes, head)) == (step.a["index"], step.b["index"])
    assert "Non-monotonic reads" in figure.layout.title.text and "G-single-item-realtime" in figure.layout.title.text
    assert 700 <= figure.layout.width <= 900
    fonts = [note.font.size for note in figure.layout.annotations if note.text]
    assert min(fonts) >= 11 and figure.layout.title.subtitle.font.size >= 11


def test_a_lost_update_is_drawn_as_its_g_single_item_cycle_and_titled_with_both_names(lab):
    figure, frame = lost_update_figure(lab)
    assert frame["ok"].value_counts().to_dict() == {False: 2, True: 2}
    boxes, arrows = boxes_and_arrows(figure)
    assert sorted(text.split("<br>")[0] for _, text in boxes.values()) == [
        "<b>alice's GetItem then PutItem</b>", "<b>bob's GetItem then PutItem</b>"]
    assert sorted(label.split(" · ")[0] for _, _, label in arrows) == ["<b>rw</b>", "<b>ww</b>"]
    assert figure.layout.title.text.startswith("<b>A lost update</b>")
    assert "G-single-item + lost-update" in figure.layout.title.text


def test_a_box_names_each_version_an_attempt_read_once():
    from helpers.views.cycles import box_text
    attempt = op(3, "alice", "ok", [["r", X, 0], ["r", X, 0], ["w", X, 1]], ["GetItem", "PutItem"])
    assert box_text(attempt, {X: "x"}).split("<br>")[1:] == ["read x v0", "wrote x v1"]


def lost_update_figure(lab):
    """(the orders figure, with its cycle, of two racy incrementers explored, the frame)."""
    from helpers.explore import explore
    table = fresh_table("p24-atomic-counters", lab)
    key = {"PK": "POST#hello-world", "SK": "STATS"}

    def increment():
        views = table.get_item(Key=key, ConsistentRead=True)["Item"]["views"]
        table.put_item(Item={**key, "views": views + 1})
        return "OK"

    frame = explore({"alice": increment, "bob": increment}, lambda: table.put_item(Item={**key, "views": 0}),
                    lambda results: table.get_item(Key=key, ConsistentRead=True)["Item"]["views"] == 2)
    failing = next(recorded for recorded, ok in zip(frame["history"], frame["ok"]) if not ok)
    return plots.cycle_figure(failing), frame


def test_an_orders_figure_draws_its_first_failing_order_s_cycle_below_its_rows_unless_told_not_to(lab):
    _, frame = lost_update_figure(lab)
    drawn = plots.orders(frame, "lose an update")
    plain = plots.orders(frame, "lose an update", draw_cycle=False)
    first_failing = 1 + list(frame["ok"]).index(False)
    titles = [note.text for note in drawn.layout.annotations if note.xref == "paper"]
    assert [title.split(",")[0] for title in titles] == [f"Order {first_failing}"]
    assert "A lost update" in titles[0] and drawn.layout.yaxis2.domain[1] < drawn.layout.yaxis.domain[0]
    assert sum(note.showarrow for note in drawn.layout.annotations) == 2
    assert not plain.layout.annotations and plain.layout.height < drawn.layout.height
    holding = plots.orders(frame[frame["ok"]], "lose an update")
    assert not holding.layout.annotations, "no failing order: nothing drawn"


def test_only_a_cycle_anomaly_can_be_drawn():
    from helpers.anomalies import analyse
    history = [op(0, "alice", "invoke", [["w", "x", 1]], ["PutItem"]), op(1, "alice", "fail", [["w", "x", 1]], ["PutItem"]),
               op(2, "bob", "invoke", [["r", "x", None]], ["GetItem"]), op(3, "bob", "ok", [["r", "x", 1]], ["GetItem"])]
    case, = analyse(history).anomalies["G1a"]
    with pytest.raises(ValueError, match="G1a' is not a cycle anomaly: only G0, G1c, G-single-item"):
        plots.cycle(case)
