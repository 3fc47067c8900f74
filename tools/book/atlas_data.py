"""The isolation atlas as data for the book's atlas page: every cell's verdict, counts and words, and the first order
that shows its anomaly as the replay panel plays it (python tools/book/atlas_data.py OUT.json, in the lab's .venv).

The atlas is explored afresh (as notebook 33 does), and each cell's words must be those notebook 33 stores: a
book whose atlas disagrees with the notebook is never built.
"""
import json
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ATLAS_NOTEBOOK = REPO / "notebooks" / "33-isolation-atlas.ipynb"


class TableCells(HTMLParser):
    """The text of every header and data cell of a pandas HTML table, row by row."""

    def __init__(self):
        super().__init__()
        self.rows, self.cell = [], None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("th", "td"):
            self.cell = ""

    def handle_endtag(self, tag):
        if tag in ("th", "td") and self.cell is not None:
            self.rows[-1].append(self.cell.strip())
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


def stored_atlas_table(columns):
    """{(row, column): the cell's words} from notebook 33's stored table in words (the output headed by the columns)."""
    notebook = json.loads(ATLAS_NOTEBOOK.read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            html = "".join(output.get("data", {}).get("text/html", ""))
            parser = TableCells()
            parser.feed(html)
            if parser.rows and parser.rows[0][1:] == list(columns):
                return {(row[0], column): text for row in parser.rows[2:] for column, text in zip(columns, row[1:])}
    raise SystemExit(f"{ATLAS_NOTEBOOK.name} stores no atlas table in words: run `make notebooks` first")


def slug(text):
    """A link target made of a name: lower case, words joined by '-'."""
    return "-".join(re.findall(r"[a-z0-9]+", text.lower()))


def column_slug(column):
    """An anomaly's link target, without its Adya or ANSI code: 'G-single read skew' -> 'read-skew'."""
    code, _, words = column.partition(" ")
    return slug(words if re.fullmatch(r"G\S*|P\d", code) else column)


def atlas_data():
    """The atlas explored, as a JSON-ready dict checked against notebook 33's stored table."""
    from helpers import atlas, connect
    from helpers.lab.trace import tracing

    lab = connect(quiet=True)
    with tracing(False):
        table = atlas.setup(lab)
        cells = atlas.build(lab, table)
    stored = stored_atlas_table(atlas.ANOMALIES)
    differ = [f"{row} · {column}: explored {cell.text!r}, stored {stored.get((row, column))!r}"
              for (row, column), cell in cells.items() if stored.get((row, column)) != cell.text]
    if differ:
        raise SystemExit(f"the atlas differs from {ATLAS_NOTEBOOK.name}'s stored outputs (run `make notebooks`):\n"
                         + "\n".join(differ))
    levels = {row: level for level, rows in atlas.GUIDE.items() for row in rows}
    data = {"rows": [{"name": row, "slug": slug(row), "code": code, "guide": levels.get(row, "")}
                     for row, code in atlas.ROWS.items()],
            "columns": [{"name": column, "slug": column_slug(column), "words": words, "example": example}
                        for column, (words, example) in atlas.ANOMALIES.items()],
            "cells": []}
    for (row, column), cell in cells.items():
        entry = {"row": row, "column": column, "anchor": f"{slug(row)}-{column_slug(column)}",
                 "verdict": cell.verdict, "occurs": cell.occurs, "orders": cell.orders, "words": cell.words,
                 "text": cell.text, "steps": [], "ending": ""}
        if cell.verdict == "occurs":
            with tracing(False):
                panel = atlas.replay_panel(cell)
            entry.update(steps=list(panel.history), ending=panel.verdict)
            panel.stepper.close()
        data["cells"].append(entry)
    return data


if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(atlas_data(), indent=1, ensure_ascii=False), encoding="utf-8")
    print(f"{out}: the atlas's cells, checked against {ATLAS_NOTEBOOK.name}")
