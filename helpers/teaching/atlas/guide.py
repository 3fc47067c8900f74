"""The atlas checked against the Developer Guide: what its pages say each way of reading allows, cell by cell."""


from .catalogue import MREC_LOST, MREC_READ, MRSC_LOST, MRSC_READ

GUIDE = {
    "serializable": ("GetItem (default)", "GetItem, ConsistentRead", "ADD / SET n = n + :one", "check in the condition",
                     "TransactWriteItems + ConditionCheck", "TransactGetItems", "sentinel item in a transaction"),
    "read-committed": ("BatchGetItem",),
    "not serializable as a unit": ("BatchWriteItem",),
}


def agrees_with_the_guide(cells):
    """[] when the atlas agrees with the Developer Guide's isolation table, else what disagrees, in words.

    Serializable: no single-item operation or transaction shows an anomaly of isolation (G0, G1a, P4, G-single)
    in a cell where it applies. Read-committed: a BatchGetItem never shows an aborted write (G1a) but may show part
    of a transaction (G-single). BatchWriteItem as a unit: some reader sees part of one (G-single), and two of them
    interleave item by item (G0).
    """
    isolation = ("G0 dirty write", "G1a aborted read", "P4 lost update", "G-single read skew")
    wrong = []
    for row in GUIDE["serializable"]:
        wrong += [f"{row} shows {column}" for column in isolation if cells[(row, column)].verdict == "occurs"]
    if cells[("BatchGetItem", "G1a aborted read")].verdict != "prevented":
        wrong.append("BatchGetItem is not read-committed: it shows an aborted write")
    if cells[("BatchGetItem", "G-single read skew")].verdict != "occurs":
        wrong.append("BatchGetItem never sees part of a transaction, stronger than read-committed")
    if cells[("BatchWriteItem", "G-single read skew")].verdict != "occurs":
        wrong.append("a BatchWriteItem is never seen in part: serializable as a unit, stronger than the guide says")
    if cells[("BatchWriteItem", "G0 dirty write")].verdict != "occurs":
        wrong.append("two BatchWriteItems never interleave item by item: isolated as units, stronger than the guide says")
    return wrong


GLOBAL_TABLES_PAGE = {  # "How DynamoDB global tables work": what each Region cell must show
    (MREC_READ, "stale read"): "occurs",  # "may return stale data if the item was last updated in a different Region"
    (MREC_LOST, "P4 lost update"): "occurs",  # conditions see "the version of the item in the Region"; last writer wins
    (MREC_READ, "G-single read skew"): "occurs",  # "Transactional writes are not replicated as a unit across Regions"
    (MREC_READ, "G1a aborted read"): "prevented",  # "replicated ... once they've been committed in the source Region"
    (MRSC_READ, "stale read"): "prevented",  # "on any MRSC replica always return the latest version of an item"
    (MRSC_LOST, "P4 lost update"): "prevented",  # ReplicatedWriteConflictException; conditions see the latest version
}


def agrees_with_global_tables(cells):
    """[] when the atlas's Region rows agree with the Developer Guide's "How DynamoDB global tables work", else what
    disagrees, in words (GLOBAL_TABLES_PAGE: each cell and the sentence that decides it)."""
    return [f"{row} · {column}: {cells[(row, column)].verdict}, where the page says {verdict}"
            for (row, column), verdict in GLOBAL_TABLES_PAGE.items() if cells[(row, column)].verdict != verdict]
