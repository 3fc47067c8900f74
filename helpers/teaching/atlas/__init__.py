"""The isolation atlas (notebook 33): each way of reading and writing DynamoDB against each anomaly, explored.

A cell is a small scenario of two clients (sometimes one), run by helpers.explore in every order of their
requests and every choice DynamoDB's consistency leaves open (consistency="dynamodb": which copy answers a
default read, when each item of a transaction becomes visible). It counts the orders in which the anomaly
happens: "occurs: k of n" and what the first such order shows, or "prevented: 0 of n" and what prevented it. A
cell the anomaly cannot apply to says why instead of running anything.

Where each part is: catalogue.py (rows, columns, reasons, Scenario and Cell), scenarios.py (the single-Region
scenarios), regions.py (the Region rows), cells.py (building the atlas), figure.py, replayer.py, guide.py (the
atlas checked against the Developer Guide), judge.py (its cells judged again by the anomaly analyser).
"""
from .catalogue import ANOMALIES, MREC_LOST, MREC_READ, MREC_TABLE, MRSC_LOST, MRSC_READ, MRSC_TABLE, ROWS, STREAM_ROW
from .cells import build, exercise_cells, frame_of, prediction_errors, verdicts, verdicts_of
from .figure import figure, mark_of
from .guide import GUIDE, agrees_with_global_tables, agrees_with_the_guide
from .judge import ELLE, NOT_JUDGED, elle_verdict
from .replayer import Replayer, replay_panel
from .scenarios import DOCTORS, setup

__all__ = ["ANOMALIES", "DOCTORS", "ELLE", "GUIDE", "NOT_JUDGED", "elle_verdict", "MREC_LOST", "MREC_READ",
           "MREC_TABLE", "MRSC_LOST", "MRSC_READ", "MRSC_TABLE", "ROWS", "Replayer", "STREAM_ROW",
           "agrees_with_global_tables", "agrees_with_the_guide", "build", "exercise_cells", "figure",
           "frame_of", "mark_of", "prediction_errors", "replay_panel", "setup", "verdicts", "verdicts_of"]
