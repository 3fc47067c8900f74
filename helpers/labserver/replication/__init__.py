"""Regions and streams: the Region a request is in, global tables' replicas, DynamoDB Streams' records and settings.

May import: accounting, rules, model. Model imports two modules back (regions, streamlog), which import nothing of
model: globaltables and streams above them use model (consistency's store, knobs' find_table). See model.
"""
