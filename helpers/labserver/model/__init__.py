"""The consistency model (copies that trail, transactions in phases, lagging indexes), the teaching knobs, fresh tables.

May import: replication's regions and streamlog only (which Region a request is in, its stream records); they import
nothing of model, but replication's globaltables and streams import model back: the one pair that import each other.
"""
