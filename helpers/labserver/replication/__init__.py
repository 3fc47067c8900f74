"""Regions and streams: the Region a request is in, global tables' replicas, DynamoDB Streams' records and settings.

May import: accounting, rules, model. Model and replication import each other (the one such pair): globaltables and
streams use model (consistency's store, knobs' find_table), and model uses regions and streamlog, which import no model.
"""
