"""Reach the lab: choose and start the backend, build clients with the lab's hooks, make tables, turn knobs, meter.

May import: nothing else of helpers (not helpers.labserver either: that would load moto in a kernel). The transcript (trace) and the gate
live here because every client the backend builds carries both. One import goes up: clients.py loads helpers.explore
lazily, to give every DynamoDB client built in a kernel the explorer's hold (tests/test_layers.py names it).
"""
