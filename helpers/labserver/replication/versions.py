"""Explored: the versions of a global table's items as the explorer's histories see them (helpers/explore/histories.py).

An item of a global table is one item in every Region (`global_item`: its Region EVERY_REGION), whichever replica a
request reads or writes. Its versions are its writes, numbered by their timestamps (globaltables.py), the order in
which the explorer applied them in any Region: 0 for the one every replica held when they last agreed, then 1, 2, ...
That is the order last writer wins keeps: each replica holds a later version at each change, and all end at the last.
"""
import bisect
import json

EVERY_REGION = "every Region"  # the Region of a global table's item in the explorer's histories


class GlobalVersions:
    """The timestamps of each global table item's writes since every replica last agreed, in order."""

    def __init__(self):
        self.stamps = {}

    def clear(self):
        """Every replica agrees again: numbering starts over."""
        self.stamps.clear()

    def number(self, identity, stamp):
        """The version of the item `identity` (its name in one Region, model/consistency.py's item_id) that the write
        of this timestamp made (kept in order, should an older timestamp come late); None for no timestamp (an item of
        no global table)."""
        if stamp is None:
            return None
        writes = self.stamps.setdefault(global_item(identity), [])
        if stamp not in writes:
            bisect.insort(writes, stamp)
        return writes.index(stamp)

    def entry(self, identity, label, stamp, exists):
        """[item, label, version, exists] of a global table's item, as the explorer's histories name it."""
        return [global_item(identity), label, self.number(identity, stamp), exists]


def global_item(identity):
    """An item's name in one Region (item_id) as the item in every Region: its Region EVERY_REGION."""
    return json.dumps([*json.loads(identity)[:-1], EVERY_REGION], sort_keys=True)
