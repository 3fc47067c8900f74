"""Notebook 29's lease timeline: labels clear of the bars and of each other, lanes in the order given."""
from helpers.figures.p29 import BAR_WIDTH, LANE_PX, describe_call, label_rows, label_shift, lease_timeline


def event(t, who, kind, ok=True, lease_over=None, token=None, target="LOCK#invoice-run"):
    """One lock or report call, as lease_events describes it."""
    return {"t": t, "who": who, "kind": kind, "ok": ok, "lease_over": lease_over, "token": token, "target": target}


SCENE = [event(0.0, "worker-A", "acquire", lease_over=2.9), event(0.5, "worker-B", "acquire", ok=False),
         event(1.5, "worker-A", "release"), event(1.55, "worker-B", "acquire", lease_over=3.8),
         event(4.57, "worker-C", "acquire", lease_over=6.8), event(4.58, "worker-B", "release", ok=False)]


def test_every_label_clears_the_bars():
    figure = lease_timeline(SCENE, "scene", ["worker-A", "worker-B", "worker-C"])
    half_bar = BAR_WIDTH * LANE_PX / 2
    assert figure.layout.annotations and all(abs(a.yshift) > half_bar for a in figure.layout.annotations)
    assert {a.yanchor for a in figure.layout.annotations if a.yshift > 0} == {"bottom"}
    assert {a.yanchor for a in figure.layout.annotations if a.yshift < 0} == {"top"}


def test_worker_bs_end_puts_the_refusal_and_the_lease_end_on_opposite_sides():
    figure = lease_timeline(SCENE, "scene", ["worker-A", "worker-B", "worker-C"])
    shifts = {a.text: a.yshift for a in figure.layout.annotations}
    assert shifts["release refused"] > 0 > shifts["lease over"]


def test_labels_that_would_overlap_in_a_row_move_apart():
    marks = [(1.0, "report", "write accepted", "circle", "green", "C writes (token 2)"),
             (1.1, "report", "write accepted", "circle", "green", "B writes (token 1)"),
             (1.2, "report", "write accepted", "circle", "green", "B writes (token 3)")]
    assert label_rows(marks, [0, 5]) == [1, -1, 2]
    assert label_shift(2) - label_shift(1) > 0 and label_shift(-1) == -label_shift(1)


def test_lanes_run_top_to_bottom_in_the_order_given():
    figure = lease_timeline(SCENE, "scene", ["worker-A", "worker-B", "worker-C"])
    assert list(figure.layout.yaxis.ticktext) == ["worker-A", "worker-B", "worker-C"]
    assert list(figure.layout.yaxis.tickvals) == [2, 1, 0]


def test_calls_are_named_by_what_they_do_to_the_lock():
    condition = "attribute_not_exists(PK) OR expiresAt < :now"
    assert describe_call("PutItem", {"ConditionExpression": condition}) == "acquire"
    assert describe_call("PutItem", {}) == "write"
    assert describe_call("UpdateItem", {"UpdateExpression": "SET expiresAt = :later"}) == "heartbeat"
    assert describe_call("DeleteItem", {}) == "release"
    assert describe_call("GetItem", {}) is None
