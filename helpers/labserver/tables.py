"""Table operations checked before the engine: index updates of UpdateTable."""
from .answers import error
from .knobs import find_table

INDEX_EXISTS = "Attempting to create an index which already exists"
NO_SUCH_INDEX = "Requested resource not found: Index {} for table {}"


def index_updates_fit(params):
    """Creating an index that exists, or deleting or updating one that does not, is refused as DynamoDB words it."""
    table = find_table(params["TableName"])
    if table is None:
        return None
    existing = {index.name for index in table.global_indexes}
    for update in params.get("GlobalSecondaryIndexUpdates") or []:
        (kind, detail), = update.items()
        if kind == "Create" and detail["IndexName"] in existing:
            return error("ValidationException", INDEX_EXISTS)
        if kind in ("Delete", "Update") and detail["IndexName"] not in existing:
            return error("ResourceNotFoundException", NO_SUCH_INDEX.format(detail["IndexName"], table.name))
    return None
