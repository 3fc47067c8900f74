"""Accounting: capacity units as DynamoDB bills them, the meter (/lab/metrics) and partition_limits' throttling.

May import: rules (what a PartiQL statement reads and writes), model (find_table).
"""
