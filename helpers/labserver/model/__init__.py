"""The consistency model (copies that trail, transactions in phases, lagging indexes), the teaching knobs, fresh tables.

May import: replication's regions and streamlog only (a request's Region, its stream records), which import no model;
replication's globaltables and streams import model back: the one pair of subpackages that import each other.
"""
