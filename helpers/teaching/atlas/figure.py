"""The atlas drawn: one square per cell, its verdict and count, coloured occurs, prevented or not applicable."""

import plotly.graph_objects as go

from .catalogue import ANOMALIES, ELLE_NAMES, ROWS, elle_name

MARKS = {"occurs": ("occurs", 0), "prevented": ("✓", 1), "n/a": ("", 2)}
COLOURS = [[0.0, "#e57373"], [1 / 3, "#e57373"], [1 / 3, "#81c784"], [2 / 3, "#81c784"], [2 / 3, "#eeeeee"],
           [1.0, "#eeeeee"]]


def figure(cells):
    """The atlas as Hermitage draws it, as wide as the notebook: ✓ prevented (green), occurs (red), each with k/n,
    blank where it cannot apply; hovering a cell gives its words."""
    rows, columns = list(ROWS), list(ANOMALIES)
    z, text, hover = [], [], []
    for row in rows:
        z.append([MARKS[cells[(row, column)].verdict][1] for column in columns])
        text.append([mark_of(cells[(row, column)]).replace(" ", "<br>") for column in columns])
        hover.append([f"<b>{row} · {elle_name(column)}</b><br>{wrap(cells[(row, column)].text)}"
                      for column in columns])
    chart = go.Figure(go.Heatmap(z=z, x=columns, y=rows, text=text, texttemplate="%{text}", textfont={"size": 12},
                                 hovertext=hover, hoverinfo="text", colorscale=COLOURS, zmin=0, zmax=2,
                                 showscale=False, xgap=2, ygap=2))
    chart.update_layout(title={"text": "The isolation atlas<br><sup>✓ prevented in every distinct order · occurs: in k "
                                       "of n distinct orders · blank: does not apply · hover a cell for its words"
                                       "<br>in brackets: the column's anomaly as Elle (Jepsen's checker) names it</sup>",
                               "y": 0.98},
                        height=155 + 40 * len(rows), margin={"l": 10, "r": 10, "t": 150, "b": 20},
                        xaxis={"side": "top", "tickangle": 0, "tickfont": {"size": 11}, "tickvals": columns,
                               "ticktext": [column_label(column) for column in columns]},
                        yaxis={"autorange": "reversed", "automargin": True, "tickvals": rows,
                               "ticktext": [wrap(row, 22) for row in rows]},
                        plot_bgcolor="white")
    return chart


def column_label(column):
    """A column's tick in the figure: its first word, then the rest wrapped to fit a narrow column, then Elle's name
    for its anomaly, smaller, its variant ("realtime", "process") on a line of its own."""
    first, _, rest = column.partition(" ")
    elle = ELLE_NAMES[column].replace("-item-", "-item-<br>")
    return f"{first}<br>{wrap(rest, 12)}<br><span style='font-size:9px;color:#555'>({elle})</span>"


def mark_of(cell):
    """The figure's mark for a cell: 'occurs 4/12', '✓ 0/8' or ''."""
    mark = MARKS[cell.verdict][0]
    return f"{mark} {cell.occurs}/{cell.orders}" if cell.verdict in ("occurs", "prevented") else mark


def wrap(text, width=70):
    """Text broken into lines of about `width` characters, for a hover box."""
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = ""
        line = f"{line} {word}".strip()
    return "<br>".join(lines + [line])
