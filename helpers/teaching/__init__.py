"""Teach: the isolation atlas, a learner's progress, the instructors' guide table. Per-notebook checkers: helpers.checks.

May import: every layer below (helpers.lab, helpers.anomalies, helpers.explore, helpers.runs, helpers.views).
"""
