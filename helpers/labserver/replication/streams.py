"""StreamSpecification on CreateTable and UpdateTable, refused where DynamoDB refuses it (the streams themselves, and
the DynamoDB Streams operations, are streamlog.py's).

The Developer Guide ("Capturing Table Activity with DynamoDB Streams") and the API reference's UpdateTable:
"You receive a ValidationException if you try to enable a stream on a table that already has a stream, or if you
try to disable a stream on a table that doesn't have a stream." The words are real DynamoDB's, as ack-api-quirks
recorded them against us-west-2 (DDB-TABLE-050: "Table already has an enabled stream: TableName: ...", also for the
same StreamViewType again; "Table has no stream to disable: TableName: ..."; a StreamViewType required to enable and
refused to disable), and the CreateTable pair in its catalogue of messages. moto refused enabling a table that ever
had a stream (ResourceInUseException, "Cannot enable stream"), accepted disabling one that has none, and took an
enabled stream without a StreamViewType.
"""
from ..rules.answers import error
from ..model.knobs import find_table

PARAMETERS = "One or more parameter values were invalid: "
ALREADY_ENABLED = "Table already has an enabled stream: TableName: {}"
NOTHING_TO_DISABLE = "Table has no stream to disable: TableName: {}"
ENABLE_NEEDS_VIEW = PARAMETERS + "If stream is being enabled then UpdateViewType is required"
DISABLE_TAKES_NO_VIEW = PARAMETERS + "If stream is being disabled, then UpdateViewType must not be specified"
CREATE_NEEDS_VIEW = PARAMETERS + "Table is being created with a stream enabled, UpdateViewType is required"
CREATE_TAKES_NO_VIEW = (PARAMETERS
                        + "Table is being created with a stream disabled, UpdateViewType should not be specified")


def created_stream_fits(params):
    """CreateTable: a stream enabled names its StreamViewType; a stream disabled names none."""
    specification = params.get("StreamSpecification")
    if not isinstance(specification, dict):
        return None
    return view_named_as_needed(specification, CREATE_NEEDS_VIEW, CREATE_TAKES_NO_VIEW)


def view_named_as_needed(specification, needs_view, takes_no_view):
    """A ValidationException with the words given when a stream enabled names no StreamViewType or one disabled names
    one, else None."""
    enabled, view = specification.get("StreamEnabled"), specification.get("StreamViewType")
    if enabled is True and view is None:
        return error("ValidationException", needs_view)
    if enabled is False and view is not None:
        return error("ValidationException", takes_no_view)
    return None


def stream_change_fits(params):
    """UpdateTable: enabling names a StreamViewType and needs a table without an enabled stream; disabling names none
    and needs a table with one."""
    specification = params.get("StreamSpecification")
    if not isinstance(specification, dict):
        return None
    refused = view_named_as_needed(specification, ENABLE_NEEDS_VIEW, DISABLE_TAKES_NO_VIEW)
    if refused is not None:
        return refused
    enabled = specification.get("StreamEnabled")
    table = find_table(params["TableName"])
    if table is None:
        return None
    if enabled is True and table.stream_shard is not None:
        return error("ValidationException", ALREADY_ENABLED.format(table.name))
    if enabled is False and table.stream_shard is None:
        return error("ValidationException", NOTHING_TO_DISABLE.format(table.name))
    return None
