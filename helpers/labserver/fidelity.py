"""Where moto answers differently from DynamoDB, the lab server answers as DynamoDB does."""
import json



def refuse(target, params):
    """Return (status, code, message) when DynamoDB would reject a request moto accepts, else None."""
    return None


def amend(target, params, payload):
    """Correct a successful response body where moto's differs from DynamoDB's."""
    if target == "UpdateItem" and params.get("ReturnValues") in ("UPDATED_NEW", "UPDATED_OLD"):
        return without_key_attributes(params, payload)
    return payload


def without_key_attributes(params, payload):
    """UPDATED_NEW/UPDATED_OLD return only updated attributes, and key attributes cannot be updated."""
    answer = json.loads(payload)
    keys = set(params.get("Key", {}))
    answer["Attributes"] = {k: v for k, v in answer.get("Attributes", {}).items() if k not in keys}
    if not answer["Attributes"]:
        del answer["Attributes"]
    return json.dumps(answer).encode()
