"""Each atlas column drawn as a cycle (notebook 33), and notebook 40's "Which anomaly is this?" answers with Elle's
names and the fix."""
import re

import pandas as pd

from helpers.atlas import ANOMALIES, STREAM_ROW
from helpers.teaching.atlas.catalogue import Cell
from helpers.teaching.atlas.cycles import FIXES, NOT_A_CYCLE, column_cycle, column_figure, elle_names, which_anomaly
from test_sources import SOURCES, normal, source_blocks

X = "{PK: 'PAIR', SK: 'x'}"


def op(index, process, kind, value, requests):
    """One record of an explored history."""
    return {"index": index, "process": process, "type": kind, "f": "txn", "value": value, "requests": requests}


def reads_after_a_write(reader, *versions):
    """A history: alice writes x = v1, then `reader` reads x once per version given, getting that version."""
    ops = [op(0, "reset", "invoke", [["w", X, 0]], ["reset()"]), op(1, "reset", "ok", [["w", X, 0]], ["reset()"]),
           op(2, "alice", "invoke", [["w", X, 1]], ["PutItem"]), op(3, "alice", "ok", [["w", X, 1]], ["PutItem"])]
    for index, version in enumerate(versions, start=2):
        ops += [op(2 * index, reader, "invoke", [["r", X, None]], ["GetItem"]),
                op(2 * index + 1, reader, "ok", [["r", X, version]], ["GetItem"])]
    return {"ops": ops, "version_order": {X: [0, 1]}}


def cell(row, column, histories, oks):
    """An explored atlas cell whose orders have these histories and verdicts."""
    frame = pd.DataFrame({"history": histories, "ok": oks})
    return Cell(row, column, "occurs" if not all(oks) else "prevented", "", (~frame["ok"]).sum(), len(frame), frame)


def test_a_column_s_cycle_comes_from_its_first_failing_order_that_shows_the_column_s_anomaly_in_row_order():
    stale, going_back = reads_after_a_write("bob", 0), reads_after_a_write("bob", 1, 0)
    cells = {
        ("first", "stale read"): cell("first", "stale read", [reads_after_a_write("bob", 1)], [True]),
        (STREAM_ROW, "stale read"): cell(STREAM_ROW, "stale read", [stale], [False]),
        ("second", "stale read"): cell("second", "stale read", [going_back, stale], [False, False]),
    }
    found, number, case, report = column_cycle(cells, "stale read")
    assert (found.row, number, case.type) == ("second", 2, "G-single-item-realtime"), \
        "order 1 goes back on bob's own read: not a stale read of another client's write"
    figure = column_figure("stale read", (found, number, case, report))
    assert "stale read: the row second, order 2 of 2" in figure.layout.title.subtitle.text
    assert column_cycle(cells, "non-monotonic reads") is None, "no cell of that column"
    own = {("r", "non-monotonic reads"): cell("r", "non-monotonic reads", [stale, going_back], [False, False])}
    assert column_cycle(own, "non-monotonic reads")[1] == 2, "the stale read of order 1 is closed by another client"


def test_every_which_anomaly_answer_names_the_column_elle_s_names_and_the_fix_and_only_cycles_are_sent_to_33():
    for column in ANOMALIES:
        question, answer = which_anomaly(column)
        assert question.endswith("Which anomaly is this, and which column of the atlas counts it?")
        assert ANOMALIES[column][1][1:] in question
        assert answer.startswith(f"**{column}**; Elle's name")
        assert all(name in answer for name in elle_names(column)) and answer.endswith(f"**The fix:** {FIXES[column]}")
        assert ("33 draws its cycle" in answer) == (column not in NOT_A_CYCLE)
    assert "**lost-update**, whose cycle is a G-single-item" in which_anomaly("P4 lost update")[1]
    assert "**G-single-item-realtime or G-single-item-process**" in which_anomaly("no read-your-writes")[1]


def test_every_quotation_of_aws_in_the_fixes_is_in_the_sources_word_for_word():
    blocks = source_blocks(SOURCES.read_text(encoding="utf-8"))
    quoted = [normal(found) for fix in FIXES.values() for found in re.findall(r"“([^”]+)”", fix)]
    assert quoted and all(any(quote in block for block in blocks) for quote in quoted)
