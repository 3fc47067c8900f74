"""Figures for notebook 22 (conditional writes): the wallet race, one panel per quantity."""
from plotly.subplots import make_subplots

from ..views.plots import COLOURS, counted, whole_ticks


def verdict_colours(broken):
    """Red for each bar whose strategy broke the rule, green for each that held."""
    return [COLOURS["lost"] if bad else COLOURS["ok"] for bad in broken]


def padded_range(values, limit):
    """A y range that holds every value, the limit and 0, with room above and below for the bar labels."""
    low, high = min(0, limit, *values), max(0, limit, *values)
    room = max(1, high - low) * 0.18
    return [low - (room if low < 0 else 0), high + room]


def wallet_race_figure(summary, clients, amount, credits):
    """Spends accepted against the spends the balance allows (left), credits left against zero (right).

    summary: one row per strategy with columns strategy, accepted, credits left, allowed at most
    (as notebook 22's wallet_race builds it).
    """
    allowed = int(summary["allowed at most"].iloc[0])
    accepted, left = summary["accepted"].astype(int), summary["credits left"].astype(int)
    figure = make_subplots(rows=1, cols=2, horizontal_spacing=0.14, subplot_titles=(
        f"spends accepted (dotted: the {allowed} the balance allows)", "credits left in the wallet"))
    figure.add_bar(x=summary["strategy"], y=accepted, marker_color=verdict_colours(accepted > allowed),
                   text=[f"{n} accepted" for n in accepted], textposition="outside", cliponaxis=False,
                   row=1, col=1)
    figure.add_bar(x=summary["strategy"], y=left, marker_color=verdict_colours(left < 0),
                   text=[counted(n, "credit") for n in left], textposition="outside", cliponaxis=False, row=1, col=2)
    figure.add_hline(y=allowed, line_dash="dot", row=1, col=1)
    figure.add_hline(y=0, line_color="black", row=1, col=2)
    for col, (title, span) in enumerate((("spends accepted (count)", padded_range(accepted, allowed)),
                                         ("credits", padded_range(left, 0))), start=1):
        figure.update_yaxes(title_text=title, range=span, dtick=whole_ticks(span[1] - span[0]), row=1, col=col)
    title = f"{counted(clients, 'client')} at once, each spending {amount} of the same {counted(credits, 'credit')}"
    legend = "red: the rule broke (more spends than the balance allows, or a negative balance); green: it held"
    figure.update_layout(title=f"{title}<br><sup>{legend}</sup>", showlegend=False, height=460, margin={"t": 110})
    return figure
