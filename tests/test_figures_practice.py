"""The practice notebooks' figures: every bar labelled upright and outside, each wallet column on one scale."""
import pandas as pd

from helpers.figures.practice import label_room, seat_race_figure, wallet_stages_figure
from helpers.plots import COLOURS, counted

SEATS = pd.DataFrame([{"strategy": "blind writes", "confirmations given": 13, "seats actually held": 1},
                      {"strategy": "version condition", "confirmations given": 1, "seats actually held": 1}])
STAGES = pd.DataFrame([
    {"stage": stage, "balance after the race": balance, "paid out in the race": paid,
     "recorded (100 - balance)": 100 - balance, "paid twice after a retry": twice}
    for stage, balance, paid, twice in (("1 check in code", -470, 570, 25), ("2 PutItem 'fix'", 30, 570, 25),
                                        ("3 condition in the write", 10, 90, 25), ("4 ledger transaction", 10, 90, 0))])
RED, GREEN = COLOURS["lost"], COLOURS["ok"]


def test_the_seat_race_labels_every_bar_upright_above_it():
    confirmed, held = seat_race_figure(SEATS, 20).data
    assert list(confirmed.text) == ["13 confirmations", "1 confirmation"]
    assert list(held.text) == ["1 seat held", "1 seat held"]
    for bars in (confirmed, held):
        assert (bars.textposition, bars.textangle, bars.cliponaxis) == ("outside", 0, False)


def test_the_seat_race_reds_the_confirmations_beyond_the_seat_and_says_how_many():
    figure = seat_race_figure(SEATS, 20)
    assert list(figure.data[0].marker.color) == [RED, GREEN]
    assert figure.layout.title.text.startswith("20 clients, one seat: blind writes confirmed it 13 times, ")
    assert figure.layout.yaxis.range[1] > 13


def test_each_wallet_column_shares_one_scale_so_equal_amounts_draw_equal_bars():
    figure = wallet_stages_figure(STAGES, 50, 10)
    assert len(figure.data) == 12
    for col in range(3):
        ranges = {tuple(figure.layout[bars.xaxis.replace("x", "xaxis")].range) for bars in figure.data[col::3]}
        assert len(ranges) == 1, f"column {col + 1} has one scale for every stage"
    low, high = figure.layout.xaxis.range
    assert low < -470 and high > 100


def test_stage_names_sit_left_of_the_plots_clear_of_the_value_labels():
    figure = wallet_stages_figure(STAGES, 50, 10)
    names = [a for a in figure.layout.annotations if a.xref == "paper" and a.xanchor == "right"]
    assert [a.text for a in names] == [f"<b>{stage}</b>" for stage in STAGES["stage"]]
    assert all(a.x == 0 and a.xshift < 0 for a in names)
    assert not any(figure.layout[bars.yaxis.replace("y", "yaxis")].showticklabels for bars in figure.data[1::3])


def test_every_wallet_bar_reads_its_value_outside_the_bar():
    figure = wallet_stages_figure(STAGES, 50, 10)
    texts = [list(bars.text) for bars in figure.data]
    assert texts[:3] == [["-470"], ["recorded 570", "paid out 570"], ["25 of 25"]]
    assert texts[9:] == [["10"], ["recorded 90", "paid out 90"], ["0 of 25"]]
    assert {(bars.orientation, bars.textposition, bars.textangle) for bars in figure.data} == {("h", "outside", 0)}


def test_red_marks_what_each_stage_gets_wrong():
    colours = [list(bars.marker.color) for bars in wallet_stages_figure(STAGES, 50, 10).data]
    assert colours[0:3] == [[RED], [GREEN, GREEN], [RED]]
    assert colours[3:6] == [[GREEN], [RED, RED], [RED]]
    assert colours[6:9] == [[GREEN], [GREEN, GREEN], [RED]]
    assert colours[9:12] == [[GREEN], [GREEN, GREEN], [GREEN]]


def test_ranges_leave_room_for_labels_on_both_sides_of_zero():
    low, high = label_room([-470], 100)
    assert low < -470 and high > 100
    assert label_room([0], 10)[0] == 0
    assert counted(1, "seat") == "1 seat" and counted(13, "confirmation") == "13 confirmations"
