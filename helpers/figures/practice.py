"""Figures for the practice notebooks: 30's seat race and 32's wallet, four ways (bars labelled, red where wrong)."""
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..views.plots import COLOURS, counted

WALLET_COLUMNS = ("balance after the race (from 100)", "race: paid out and recorded",
                  "withdrawals paid twice after a retry")


def verdict_colours(broken):
    """Red for each bar that shows something wrong, green for each that does not."""
    return [COLOURS["lost"] if bad else COLOURS["ok"] for bad in broken]


def label_room(values, floor=0):
    """An axis range that holds 0, `floor` and every value, with room beyond each end for a label outside its bar."""
    low, high = min(0, floor, *values), max(0, floor, *values)
    room = max(1, high - low) * 0.45
    return [low - (room if low < 0 else 0), high + room]


def seat_race_figure(summary, clients):
    """Confirmations given against seats held, per strategy; labels upright above the bars.

    summary: one row per strategy with columns strategy, confirmations given, seats actually held
    (as notebook 30's seat_race builds it).
    """
    confirmed = summary["confirmations given"].astype(int)
    held = summary["seats actually held"].astype(int)
    figure = go.Figure([
        go.Bar(name="confirmations given", x=summary["strategy"], y=confirmed,
               marker_color=verdict_colours(confirmed != held), text=[counted(n, "confirmation") for n in confirmed]),
        go.Bar(name="seats actually held", x=summary["strategy"], y=held, marker_color=COLOURS["expected"],
               text=[f"{counted(n, 'seat')} held" for n in held]),
    ])
    figure.update_traces(textposition="outside", textangle=0, cliponaxis=False)
    figure.add_hline(y=1, line_dash="dot")
    figure.add_annotation(x=1, xref="paper", xanchor="left", y=1, text=" seats that exist", showarrow=False)
    blind = confirmed[summary["strategy"] == "blind writes"].iloc[0]
    legend = "left bar of each pair: confirmations (red: more than the seats held); right bar, grey: seats held"
    figure.update_layout(title=f"{clients} clients, one seat: blind writes confirmed it {counted(blind, 'time')}, "
                               f"the version condition once<br><sup>{legend}</sup>",
                         yaxis_title="count", yaxis_range=[0, max(2, *confirmed) * 1.2], barmode="group",
                         showlegend=False, height=460, margin={"t": 100, "r": 130})
    return figure


def stage_values(stage):
    """One stage's balance, paid out, recorded and retried withdrawals paid twice, as whole numbers."""
    return (int(stage[column]) for column in ("balance after the race", "paid out in the race",
                                              "recorded (100 - balance)", "paid twice after a retry"))


def add_stage_row(figure, row, stage):
    """One stage's three cells: its balance, paid out beside recorded, and retried withdrawals paid twice."""
    balance, paid, recorded, twice = stage_values(stage)
    retried = figure.layout.meta["retried"]
    figure.add_bar(y=[""], x=[balance], marker_color=verdict_colours([balance < 0]), text=[str(balance)],
                   row=row, col=1)
    figure.add_bar(y=["recorded", "paid out"], x=[recorded, paid], marker_color=verdict_colours([recorded != paid] * 2),
                   text=[f"recorded {recorded}", f"paid out {paid}"], row=row, col=2)
    figure.add_bar(y=[""], x=[twice], marker_color=verdict_colours([twice > 0]), text=[f"{twice} of {retried}"],
                   row=row, col=3)
    figure.update_yaxes(showticklabels=False, row=row, col=2)
    figure.add_annotation(text=f"<b>{stage['stage']}</b>", x=0, xref="paper", xanchor="right", xshift=-12,
                          y=0.5, yref=f"y{3 * row - 2 if row > 1 else ''} domain", showarrow=False, align="right")


def wallet_stages_figure(summary, clients, amount):
    """Four rows, one per stage; each column on one scale for every stage, so equal amounts draw equal bars.

    summary: one row per stage with columns stage, balance after the race, paid out in the race,
    recorded (100 - balance), paid twice after a retry (as notebook 32's wallet_stages builds it).
    """
    rows, retried = len(summary), clients // 2
    values = [list(stage_values(stage)) for _, stage in summary.iterrows()]
    ranges = (label_room([v[0] for v in values], 100), label_room([x for v in values for x in v[1:3]]),
              label_room([v[3] for v in values], retried))
    figure = make_subplots(rows=rows, cols=3, column_titles=WALLET_COLUMNS, horizontal_spacing=0.08,
                           vertical_spacing=0.07)
    figure.update_layout(meta={"retried": retried})
    for row, (_, stage) in enumerate(summary.iterrows(), start=1):
        add_stage_row(figure, row, stage)
    figure.update_traces(orientation="h", textposition="outside", textangle=0, cliponaxis=False, showlegend=False)
    for col, span in enumerate(ranges, start=1):
        figure.update_xaxes(range=span, row=None, col=col)
    figure.update_xaxes(zeroline=True, zerolinecolor="black", zerolinewidth=1)
    legend = "each column on one scale for every stage; red: what is wrong (a negative balance, money paid but " \
             "not recorded, a retry paid twice)"
    title = f"{clients} withdrawals of {amount} at once, four ways: only the ledger transaction has no red"
    figure.update_layout(title=f"{title}<br><sup>{legend}</sup>", height=130 + 105 * rows, bargap=0.3,
                         margin={"t": 110, "l": 190, "b": 40})
    return figure
