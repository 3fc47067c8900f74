"""Figures of notebook 27 (idempotency keys), built from the tables its cells compute."""
import plotly.graph_objects as go

from ..views.plots import COLOURS


def charges_label(n):
    """'1 charge', '3 charges'."""
    return f"{n} charge" if n == 1 else f"{n} charges"


def storm_figure(summary, lost_responses, redeliveries, lost_note=""):
    """Times the card was charged per strategy (the retry storm's summary): labelled bars, red where not once."""
    times = summary["times charged"]
    figure = go.Figure([go.Bar(x=summary["strategy"], y=times, text=[charges_label(n) for n in times],
                               textposition="outside", cliponaxis=False,
                               marker_color=[COLOURS["ok"] if n == 1 else COLOURS["lost"] for n in times])])
    figure.add_hline(y=1, line_dash="dot", annotation_text="asked for: 1 charge", annotation_position="right")
    figure.update_layout(title=f"One charge of 50 (responses lost: {lost_responses}{lost_note}; "
                               f"queue redeliveries: {redeliveries})",
                         yaxis_title="times the card was charged", yaxis_range=[0, max(times.max(), 1) * 1.25 + 0.5],
                         yaxis_dtick=1, showlegend=False, margin_t=80, margin_r=150, height=450)
    return figure
