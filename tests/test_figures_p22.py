"""Notebook 22's wallet race figure: counts and credits on axes of their own, bars labelled, red where the rule broke."""
import pandas as pd

from helpers.figures.p22 import wallet_race_figure
from helpers.plots import COLOURS, counted

SUMMARY = pd.DataFrame([
    {"strategy": "check in code", "accepted": 16, "credits left": -38, "allowed at most": 3},
    {"strategy": "condition in the write", "accepted": 3, "credits left": 1, "allowed at most": 3},
])


def test_counts_and_credits_are_drawn_on_separate_axes():
    figure = wallet_race_figure(SUMMARY, 20, 3, 10)
    accepted, left = figure.data
    assert (accepted.yaxis, left.yaxis) == ("y", "y2")
    assert figure.layout.yaxis.title.text == "spends accepted (count)"
    assert figure.layout.yaxis2.title.text == "credits"


def test_every_bar_carries_its_value_even_a_sliver():
    accepted, left = wallet_race_figure(SUMMARY, 20, 3, 10).data
    assert list(accepted.text) == ["16 accepted", "3 accepted"]
    assert list(left.text) == ["-38 credits", "1 credit"]
    assert accepted.textposition == left.textposition == "outside"


def test_red_marks_the_broken_rule_and_the_axes_hold_every_label():
    figure = wallet_race_figure(SUMMARY, 20, 3, 10)
    accepted, left = figure.data
    assert list(accepted.marker.color) == [COLOURS["lost"], COLOURS["ok"]]
    assert list(left.marker.color) == [COLOURS["lost"], COLOURS["ok"]]
    low, high = figure.layout.yaxis2.range
    assert low < -38 and high > 1
    assert figure.layout.yaxis.range[1] > 16


def test_the_title_counts_the_clients():
    assert wallet_race_figure(SUMMARY, 1, 3, 10).layout.title.text.startswith("1 client at once")
    assert counted(-38, "credit") == "-38 credits"


def test_one_credit_is_singular_and_count_axes_tick_whole_numbers():
    nothing = SUMMARY.assign(accepted=0, **{"credits left": 1, "allowed at most": 0})
    figure = wallet_race_figure(nothing, 10, 10, 1)
    assert "each spending 10 of the same 1 credit<br>" in figure.layout.title.text
    assert figure.layout.yaxis.dtick == 1 and figure.layout.yaxis2.dtick == 1
    assert all(float(axis.dtick).is_integer() for axis in (wallet_race_figure(SUMMARY, 20, 3, 10).layout.yaxis,
                                                           wallet_race_figure(SUMMARY, 20, 3, 10).layout.yaxis2))
