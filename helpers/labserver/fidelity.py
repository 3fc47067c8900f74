"""Where moto answers differently from DynamoDB, the lab server answers as DynamoDB does.

Both hooks run under the engine lock, so any state kept here is consistent.
"""
import json


def error(code, message, status=400, **extra):
    """(status, body) of a DynamoDB error response."""
    return status, {"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": message, **extra}


def before(target, params):
    """Answer a request here, as (status, body), when DynamoDB's answer differs from moto's; else None."""
    return None


def after(target, params, status, payload):
    """Correct the body of moto's response where it differs from DynamoDB's."""
    if status == 200 and target == "UpdateItem" and params.get("ReturnValues") in ("UPDATED_NEW", "UPDATED_OLD"):
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
