"""Show what ran: the shared figure vocabulary (plots) and the panels that run and draw it (widgets).

May import: helpers.lab, helpers.anomalies, helpers.explore, helpers.runs. Per-notebook figures are in helpers.figures.
"""
