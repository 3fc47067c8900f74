"""Item operations as DynamoDB answers them: Query's Limit of at least 1, and results corrected where moto's differ
(UPDATED_NEW / UPDATED_OLD, AttributesToGet)."""
from .answers import error

LIMIT_TOO_SMALL = ("1 validation error detected: Value at 'Limit' failed to satisfy constraint: Member must have value "
                   "greater than or equal to 1")  # nubo-db/dynamodb-conformance's capture


def limit_positive(params):
    """A Query Limit below 1 is refused (the API reference's Query: Limit, "Valid Range: Minimum value of 1"); moto
    answered no items."""
    limit = params.get("Limit")
    if isinstance(limit, int) and not isinstance(limit, bool) and limit < 1:
        return error("ValidationException", LIMIT_TOO_SMALL)
    return None


def attributes_to_get(params, result):
    """GetItem, Query and Scan with AttributesToGet return only the attributes named, without adding the key (the API
    reference's AttributesToGet: "the names of one or more attributes to retrieve"); moto returned every attribute."""
    names = params.get("AttributesToGet")
    if not names:
        return result
    if "Item" in result:
        result["Item"] = {name: value for name, value in result["Item"].items() if name in names}
    if "Items" in result:
        result["Items"] = [{name: value for name, value in item.items() if name in names} for item in result["Items"]]
    return result


def only_updated_attributes(params, result):
    """UPDATED_NEW/UPDATED_OLD return only the updated attributes, never the key; moto adds the key."""
    if params.get("ReturnValues") not in ("UPDATED_NEW", "UPDATED_OLD"):
        return result
    keys = set(params.get("Key", {}))
    result["Attributes"] = {k: v for k, v in result.get("Attributes", {}).items() if k not in keys}
    if not result["Attributes"]:
        del result["Attributes"]
    return result
