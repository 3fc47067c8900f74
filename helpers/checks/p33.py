"""Checker for notebook 33 (the isolation atlas): predict the row of a new access pattern, the explorer checks it."""
import pandas as pd

from ..teaching import atlas
from ..lab.backend import connect
from . import Report

EXERCISE = "query_row"


def check_query_row(predicted_row):
    """Explore each column of the strongly consistent Query's row; PASS when predicted_row() says what happens."""
    prediction = predicted_row()
    errors = atlas.prediction_errors(prediction)
    if errors:
        raise ValueError("; ".join(errors))
    cells = atlas.exercise_cells(connect(quiet=True))
    log = pd.DataFrame([{"anomaly": column, "predicted": prediction[column], "explored": cell.verdict,
                         "orders": cell.orders, "in which it occurs": cell.occurs} for column, cell in cells.items()])
    wrong = [f"{column}: you said {prediction[column]}, but it {telling(cell)}" for column, cell in cells.items()
             if prediction[column] != cell.verdict]
    if wrong:
        return Report(EXERCISE, False, "; ".join(wrong) + ".", len(cells), log)
    return Report(EXERCISE, True, f"every column as you said, over {int(log['orders'].sum())} explored distinct orders.",
                  len(cells), log)


def telling(cell):
    """What the explorer found for a cell, in words."""
    if cell.verdict == "occurs":
        return f"occurs in {cell.occurs} of {cell.orders} distinct orders"
    return f"is prevented in all {cell.orders} distinct orders ({cell.words})"
