"""Item operations' results corrected where moto's differ from DynamoDB's."""


def only_updated_attributes(params, result):
    """UPDATED_NEW/UPDATED_OLD return only the updated attributes, never the key; moto adds the key."""
    if params.get("ReturnValues") not in ("UPDATED_NEW", "UPDATED_OLD"):
        return result
    keys = set(params.get("Key", {}))
    result["Attributes"] = {k: v for k, v in result.get("Attributes", {}).items() if k not in keys}
    if not result["Attributes"]:
        del result["Attributes"]
    return result
