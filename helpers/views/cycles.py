"""A minimal cycle drawn: its operations as boxes in a learner's words, an arrow per edge labelled with its kind (ww,
wr, rw, process, real time), the key and versions, and a title naming the anomaly by Elle's name and the everyday one.

The drawing is laid out in pixels (each axis spans its drawing's pixels), so boxes, arrows and labels keep their
sizes and never overlap, whatever the cycle's length. Arrows are annotations; hovering an edge's label gives Elle's
sentence for it.
"""
import math
import re
import textwrap

import plotly.graph_objects as go

from ..explore.frames import analysed, learner_name
from ..explore.histories import RESET

WIDTH = 780  # px: the figure, as wide as a notebook's output area
BOX_WIDTH = 230  # px: an operation's box
BOX_LINE = 30  # characters per line in a box, at NODE_FONT
NODE_FONT = 13
EDGE_FONT = 12
TITLE_FONT = 16
MARGIN = {"l": 20, "r": 20, "t": 105, "b": 20}
KINDS = {  # an edge's kind: (its name on the arrow, what it says, its colour)
    "ww": ("ww", "wrote over it", "#6a1b9a"),
    "wr": ("wr", "read what it wrote", "#1565c0"),
    "rw": ("rw", "read it, then it was overwritten", "#c62828"),
    "process": ("process", "the same client, later", "#00838f"),
    "realtime": ("real time", "began after it had ended", "#ef6c00"),
}
NODE_COLOURS = ("#1565c0", "#ef6c00", "#6a1b9a", "#00838f")
NODE_FILLS = {"#1565c0": "#e3f2fd", "#ef6c00": "#fff3e0", "#6a1b9a": "#f3e5f5", "#00838f": "#e0f7fa",
              "#757575": "#f5f5f5"}
PREFERRED = ("G0", "G1c", "G-single-item", "G-nonadjacent-item", "G2-item")  # the cycle drawn first, by Elle's depth
ELLE_WORDS = {  # Elle's name (without -process/-realtime): what its cycle means in a sentence
    "G0": "a cycle of write-write edges only",
    "G1c": "a cycle of write-write and write-read edges",
    "G-single-item": "a cycle with exactly one read-write (anti-dependency) edge",
    "G-nonadjacent-item": "a cycle with two or more read-write edges, none next to another",
    "G2-item": "a cycle with two or more read-write edges, two of them side by side",
}


def base_name(name):
    """Elle's name without its -process or -realtime ending."""
    return re.sub(r"-(process|realtime)$", "", name)


def everyday(case, report=None):
    """The everyday name of a cycle anomaly: a lost update, read skew, write skew, a stale read, ... (`report`, the
    analyser's report the case is from, tells a lost update from read skew)."""
    name, steps = case.type, case.cycle.steps
    if name.endswith(("-realtime", "-process")):
        order = next(step for step in steps if step.type in ("realtime", "process"))
        if order.a["process"] != order.b["process"]:  # real time between two clients (process order is one's)
            return "a stale read"
        wrote = any(f == "w" for f, _, _ in order.a["value"])
        return "no read-your-writes" if wrote else "non-monotonic reads"
    if report is not None and "lost-update" in report.anomalies and name == "G-single-item":
        return "a lost update"
    return {"G0": "a dirty write", "G1c": "circular information flow", "G-single-item": "read skew",
            "G-nonadjacent-item": "write skew", "G2-item": "write skew"}[name]


def chosen_case(report):
    """The cycle case a report's drawing shows: of the first of Elle's cycle anomalies it names (PREFERRED order),
    or None when it names none."""
    cases = [case for name, found in report.anomalies.items() for case in found if case.cycle is not None]
    ranked = sorted(cases, key=lambda case: (PREFERRED.index(base_name(case.type)), case.type))
    return ranked[0] if ranked else None


def history_cycle(recorded, units=("attempt", "request")):
    """(case, report) of the minimal cycle one order's history (the explore frame's "history") shows, looked for among
    its clients' attempts, then among its requests (`units`); None when it shows no cycle or has no history."""
    if recorded is None:
        return None
    for unit in units:
        report = analysed(recorded, unit)
        case = chosen_case(report)
        if case is not None:
            return case, report
    return None


def short_keys(keys):
    """{key: its short name}: items' keys as the histories write them ("{PK: 'PAIR', SK: 'x'}") in full, quotes
    dropped ("PAIR x"), when every one is short, else by the quoted part that tells them apart (of one key, its last);
    other keys as they are."""
    parts = {k: tuple(re.findall(r"'([^']*)'", k)) if isinstance(k, str) else () for k in keys}
    distinct = {p for p in parts.values() if p}
    telling = next((i for i in range(max(map(len, distinct), default=0))
                    if len({p[i] if len(p) > i else None for p in distinct}) == len(distinct)), None)
    whole = all(len(" ".join(p)) <= 18 for p in distinct)
    names = {}
    for k in keys:
        p = parts[k]
        if not p:
            names[k] = k if isinstance(k, str) else repr(k)
        elif whole:
            names[k] = " ".join(p)
        else:
            names[k] = p[telling] if len(distinct) > 1 and telling is not None and telling < len(p) else p[-1]
    return names


def version(value):
    """A version as a label shows it: v0, v1, ... (the lab numbers an item's versions), absent for nil."""
    if value is None:
        return "absent"
    return f"v{value}" if isinstance(value, int) else repr(value)


def op_name(op):
    """An operation as its box names it: in a learner's words when the explorer recorded it ("alice's GetItem then
    PutItem"), else by its process and index (a history written by hand)."""
    return learner_name(op) if "requests" in op else f"process {op['process']}'s operation {op['index']}"


def box_text(op, keys):
    """An operation's box: who did what ("alice's GetItem then PutItem"), then what it read, then what it wrote (an
    item's name and version never split across lines, each once: an attempt's GetItem and its conditional write read
    the same version)."""
    said = [op_name(op)]
    for f, verb in (("r", "read"), ("w", "wrote")):
        items = list(dict.fromkeys(f"{keys[k]} {version(v)}".replace(" ", "\u00a0") for g, k, v in op["value"]
                                   if g == f))
        if items:
            said.append(f"{verb} {', '.join(items)}")
    lines = [line.replace("\u00a0", " ") for words in said for line in textwrap.wrap(words, BOX_LINE)]
    return "<br>".join([f"<b>{lines[0]}</b>", *lines[1:]])


def edge_text(step, keys):
    """An edge's label: its kind in bold, the key and versions where it has them, and what the kind means."""
    name, words, _ = KINDS[step.type]
    if step.type == "wr":
        data = f" · {keys[step.key]} {version(step.value)}"
    elif step.type in ("ww", "rw"):
        data = f" · {keys[step.key]} {version(step.value)} → {version(step.value_)}"
    else:
        data = ""
    return f"<b>{name}</b>{data}<br>{words}"


def title_of(case, report=None):
    """(title, subtitle) of a drawing: the everyday name and Elle's, then what Elle's name means and how to read it."""
    words = everyday(case, report)
    elle = case.type + (" + lost-update" if words == "a lost update" else "")
    closed = (", closed by real time" if case.type.endswith("-realtime") else
              ", closed by a client's own order" if case.type.endswith("-process") else "")
    return (f"<b>{words[0].upper()}{words[1:]}</b> · Elle's name: <b>{elle}</b>",
            f"{ELLE_WORDS[base_name(case.type)]}{closed}.<br>Each arrow: its tail must come before its head. Round "
            "a cycle, no order of the operations gives each what it saw.")


def geometry(count, boxes, width):
    """(height, [each box's centre]) for a cycle of `count` operations whose boxes are `boxes` px high, drawn `width`
    px wide: two side by side, more around an ellipse, the first at the top left, going clockwise."""
    tallest = max(boxes)
    if count == 2:
        height = tallest + 120
        return height, [(BOX_WIDTH / 2 + 10, height / 2), (width - BOX_WIDTH / 2 - 10, height / 2)]
    height = 2 * tallest + 220 + 40 * (count > 4)
    rx, ry = width / 2 - BOX_WIDTH / 2 - 10, height / 2 - tallest / 2 - 10
    start = 90 + 180 / count
    angles = [math.radians(start - i * 360 / count) for i in range(count)]
    return height, [(width / 2 + rx * math.cos(a), height / 2 + ry * math.sin(a)) for a in angles]


def leaving(centre, half, point, direction):
    """The distance along `direction` (a unit vector) from `point` to where it leaves the box at `centre` of half
    sizes `half`."""
    distances = [(half[i] - (point[i] - centre[i]) * (1 if d > 0 else -1)) / abs(d)
                 for i, d in enumerate(direction) if abs(d) > 1e-9]
    return min(distances)


def node_colours(ops):
    """{process: its box's colour}: the reset grey, each client its own, in order of appearance in `ops` (the whole
    history's, so that each client keeps the colour the order figures give it)."""
    processes = [p for p in dict.fromkeys(op["process"] for op in ops) if p != RESET]
    colours = {p: NODE_COLOURS[i % len(NODE_COLOURS)] for i, p in enumerate(processes)}
    return {**colours, RESET: "#757575"}


def rotated(case):
    """The cycle's operations and steps, starting with the operation invoked first (the same cycle, told from its
    earliest operation, drawn at the left)."""
    ops, steps = list(case.cycle.transactions), list(case.cycle.steps)
    first = min(range(len(ops)), key=lambda i: ops[i]["index"])
    return ops[first:] + ops[:first], steps[first:] + steps[:first]


def draw(figure, case, report=None, width=WIDTH - MARGIN["l"] - MARGIN["r"], xref="x", yref="y"):
    """Add the cycle's boxes and arrows to `figure` on the axes xref/yref, `width` px wide (each axis spans its
    drawing in pixels); return the drawing's height in pixels."""
    ops, steps = rotated(case)
    keys = short_keys(list(dict.fromkeys([k for op in ops for _, k, _ in op["value"]]
                                         + [step.key for step in steps if step.key is not None])))
    texts = [box_text(op, keys) for op in ops]
    boxes = [18 * (text.count("<br>") + 1) + 16 for text in texts]
    height, centres = geometry(len(ops), boxes, width)
    colours = node_colours(list(report.ops.values()) if report is not None else ops)
    where = {"xref": xref, "yref": yref}
    for op, text, box, (x, y) in zip(ops, texts, boxes, centres):
        colour = colours[op["process"]]
        figure.add_annotation(x=x, y=y, text=text, name=f"operation {op['index']}", showarrow=False,
                              width=BOX_WIDTH - 12, height=box - 12,
                              bgcolor=NODE_FILLS[colour], bordercolor=colour, borderwidth=2, borderpad=5,
                              font={"size": NODE_FONT, "color": "#212121"}, align="center", valign="middle", **where)
    figure.add_scatter(x=[x for x, _ in centres], y=[y for _, y in centres], mode="markers", showlegend=False,
                       marker={"size": 1, "opacity": 0}, hoverinfo="text", xaxis=xref, yaxis=yref,
                       hovertext=[text.replace("<br>", "\n").replace("<b>", "").replace("</b>", "") for text in texts],
                       name="operations")  # a trace under the boxes: the figure has data, and hovering names them
    for i, step in enumerate(steps):
        j = (i + 1) % len(ops)
        (x1, y1), (x2, y2) = centres[i], centres[j]
        length = math.hypot(x2 - x1, y2 - y1)
        d = ((x2 - x1) / length, (y2 - y1) / length)
        left = (-d[1], d[0])  # a clockwise cycle's outside: where each edge's label goes
        shift = 16 if len(ops) == 2 else 0
        start = (x1 + left[0] * shift, y1 + left[1] * shift)
        end = (x2 + left[0] * shift, y2 + left[1] * shift)
        out = leaving(centres[i], (BOX_WIDTH / 2, boxes[i] / 2), start, d) + 4
        back = leaving(centres[j], (BOX_WIDTH / 2, boxes[j] / 2), end, (-d[0], -d[1])) + 6
        tail = (start[0] + d[0] * out, start[1] + d[1] * out)
        head = (end[0] - d[0] * back, end[1] - d[1] * back)
        _, _, colour = KINDS[step.type]
        figure.add_annotation(x=head[0], y=head[1], ax=tail[0], ay=tail[1], axref=xref, ayref=yref, text="",
                              showarrow=True, arrowhead=2, arrowsize=1.2, arrowwidth=2.4, arrowcolor=colour,
                              standoff=0, startstandoff=0, **where)
        middle = ((tail[0] + head[0]) / 2 + left[0] * 8, (tail[1] + head[1]) / 2 + left[1] * 8)
        anchors = {"xanchor": "center" if abs(left[0]) < 0.5 else ("left" if left[0] > 0 else "right"),
                   "yanchor": "middle" if abs(left[1]) < 0.5 else ("bottom" if left[1] > 0 else "top")}
        figure.add_annotation(x=middle[0], y=middle[1], text=edge_text(step, keys), showarrow=False,
                              font={"size": EDGE_FONT, "color": colour}, bgcolor="rgba(255,255,255,0.9)",
                              hovertext=step.because(op_name) + ".", align="center", **anchors, **where)
    return height


def axis(span, anchor=None, domain=None):
    """A hidden axis spanning `span` pixels, fixed (the drawing is laid out in pixels), on `anchor`'s side and over
    `domain` of the figure when given."""
    spec = {"range": [0, span], "visible": False, "fixedrange": True}
    return {**spec, **({"anchor": anchor} if anchor else {}), **({"domain": domain} if domain else {})}


def cycle(case, report=None, heading=None):
    """A figure of a cycle anomaly's minimal cycle (a case of helpers.anomalies with a .cycle); `report`, the
    analyser's report it came from, names a lost update as such; `heading`, where the cycle comes from, in italics
    under the title."""
    if getattr(case, "cycle", None) is None:
        raise ValueError(f"{getattr(case, 'type', case)!r} is not a cycle anomaly: only G0, G1c, G-single-item, "
                         "G-nonadjacent-item, G2-item (and their -process, -realtime) have a cycle to draw")
    figure = go.Figure()
    width = WIDTH - MARGIN["l"] - MARGIN["r"]
    height = draw(figure, case, report, width)
    title, subtitle = title_of(case, report)
    if heading:
        subtitle = f"<i>{heading}</i><br>{subtitle}"
    margin = {**MARGIN, "t": MARGIN["t"] + 16 * bool(heading)}
    figure.update_layout(
        title={"text": title, "subtitle": {"text": subtitle, "font": {"size": EDGE_FONT}}, "font": {"size": TITLE_FONT},
               "x": 0.02, "xanchor": "left"},
        width=WIDTH, height=height + margin["t"] + margin["b"], margin=margin, showlegend=False,
        xaxis=axis(width), yaxis=axis(height), plot_bgcolor="white", paper_bgcolor="white")
    return figure


def cycle_figure(recorded):
    """The figure of the minimal cycle one explored order's history shows (see history_cycle), or None."""
    found = history_cycle(recorded)
    return None if found is None else cycle(*found)
