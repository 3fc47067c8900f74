"""Exports and imports: ARNs that name none, and the members moto reads as required though DynamoDB does not."""
from moto.dynamodb import responses as moto_responses
from moto.dynamodb.models import DynamoDBBackend, dynamodb_backends

from .answers import error, lower_camel

NO_SUCH_EXPORT = "The specified export was not found."  # the API reference's words for ExportNotFoundException
NO_SUCH_IMPORT = "The specified import was not found."  # and for ImportNotFoundException
ARN_TOO_SHORT = ("1 validation error detected: Value '{}' at '{}' failed to satisfy constraint: "
                 "Member must have length greater than or equal to 37")


def resource_found(member, kind, found, params):
    """DescribeExport's ExportArn (DescribeImport's ImportArn) naming no export (import) of the lab's is refused:
    one shorter than the model's minimum of 37 characters as DynamoDB's validation words a length constraint,
    another as the API reference's ExportNotFoundException (ImportNotFoundException) describes it. moto fails with
    a KeyError."""
    arn = params[member]
    if not isinstance(arn, str):
        return None
    if len(arn) < 37:
        return error("ValidationException", ARN_TOO_SHORT.format(arn, lower_camel(member)))
    if not any(arn in getattr(backend, found) for regions in dynamodb_backends.values()
               for backend in regions.values()):
        return error(f"{kind}NotFoundException", NO_SUCH_EXPORT if kind == "Export" else NO_SUCH_IMPORT)
    return None


def optional_members_absent(method, defaults):
    """moto's handler method of an operation, given the members it reads as required though the model leaves them
    optional (a KeyError when they were left out), as None: ExportTableToPointInTime's S3Prefix, ListExports'
    TableArn."""
    def answer(self):
        self.body = {**defaults, **self.body}
        return method(self)
    return answer


def exports_listed(self, table_arn):
    """ListExports without a TableArn lists every export, as DynamoDB does; moto's lists those of no table."""
    if table_arn is None:
        return list(self.table_exports.values())
    return plain_list_exports(self, table_arn)


moto_responses.DynamoHandler.export_table_to_point_in_time = optional_members_absent(
    moto_responses.DynamoHandler.export_table_to_point_in_time, {"S3Prefix": None})
moto_responses.DynamoHandler.list_exports = optional_members_absent(
    moto_responses.DynamoHandler.list_exports, {"TableArn": None})
plain_list_exports = DynamoDBBackend.list_exports
DynamoDBBackend.list_exports = exports_listed
