"""Notebook 27's retry-storm figure: every bar labelled inside the plot, red where the card was not charged once."""
import pandas as pd

from helpers.figures.p27 import charges_label, storm_figure
from helpers.plots import COLOURS

SUMMARY = pd.DataFrame([{"strategy": "no key", "times charged": 7, "SDK gave up": 1},
                        {"strategy": "key in the write", "times charged": 1, "SDK gave up": 1}])


def test_every_bar_is_labelled_above_its_top_and_the_axis_holds_the_label():
    bar, = storm_figure(SUMMARY, 4, 3).data
    assert list(bar.text) == ["7 charges", "1 charge"]
    assert bar.textposition == "outside" and bar.cliponaxis is False
    assert storm_figure(SUMMARY, 4, 3).layout.yaxis.range[1] > 7 * 1.2


def test_red_marks_a_card_charged_more_than_once():
    bar, = storm_figure(SUMMARY, 4, 3).data
    assert list(bar.marker.color) == [COLOURS["lost"], COLOURS["ok"]]


def test_the_title_says_what_was_lost_and_redelivered():
    title = storm_figure(SUMMARY, 0, 2, " (ignored: only the lab server can lose responses)").layout.title.text
    assert title == ("One charge of 50 (responses lost: 0 (ignored: only the lab server can lose responses); "
                     "queue redeliveries: 2)")
    assert charges_label(1) == "1 charge" and charges_label(0) == "0 charges"
