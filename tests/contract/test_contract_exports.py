"""Exports, imports and backups: members the model leaves optional may be left out, an ARN of no export or import
is DynamoDB's not-found error, and a timestamp that is none is a SerializationException, never a 500."""
import pytest

SERIALIZATION = "com.amazon.coral.service#SerializationException"
MISSING_EXPORT = "arn:aws:dynamodb:us-east-1:123456789012:table/p90-contract/export/01700000000000-0123abcd"
MISSING_IMPORT = "arn:aws:dynamodb:us-east-1:123456789012:table/p90-contract/import/01700000000000-0123abcd"


@pytest.fixture
def table_arn(raw, table):
    """The contract table's ARN, with point-in-time recovery on (an export needs it)."""
    raw("UpdateContinuousBackups", {"TableName": table.name,
                                    "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True}})
    return raw("DescribeTable", {"TableName": table.name})[1]["Table"]["TableArn"]


def test_an_export_without_an_s3_prefix_is_started_and_listed_with_or_without_its_table(raw, table_arn):
    status, answer = raw("ExportTableToPointInTime", {"TableArn": table_arn, "S3Bucket": "p90-contract-bucket"})
    assert status == 200
    export = answer["ExportDescription"]
    assert export["TableArn"] == table_arn and "S3Prefix" not in export
    for request in ({}, {"TableArn": table_arn}):
        status, listed = raw("ListExports", request)
        assert status == 200
        assert export["ExportArn"] in [summary["ExportArn"] for summary in listed["ExportSummaries"]]
    assert raw("DescribeExport", {"ExportArn": export["ExportArn"]})[1]["ExportDescription"]["ExportArn"] == \
        export["ExportArn"]


@pytest.mark.parametrize("operation, member, arn, code, message", [
    ("DescribeExport", "ExportArn", MISSING_EXPORT, "ExportNotFoundException", "The specified export was not found."),
    ("DescribeImport", "ImportArn", MISSING_IMPORT, "ImportNotFoundException", "The specified import was not found."),
    ("DescribeExport", "ExportArn", "x", "ValidationException",
     "1 validation error detected: Value 'x' at 'exportArn' failed to satisfy constraint: "
     "Member must have length greater than or equal to 37"),
])
def test_an_arn_of_no_export_or_import_is_not_found(raw, operation, member, arn, code, message):
    assert raw(operation, {member: arn}) == (400, {"__type": f"com.amazonaws.dynamodb.v20120810#{code}",
                                                   "message": message})


@pytest.mark.parametrize("operation, request_body", [
    ("ListBackups", {"TimeRangeLowerBound": "yesterday"}),
    ("ListBackups", {"TimeRangeUpperBound": "x"}),
    ("RestoreTableToPointInTime", {"SourceTableName": "p90-contract", "TargetTableName": "p90-contract-restored",
                                   "RestoreDateTime": "x"}),
    ("ExportTableToPointInTime", {"TableArn": "arn:aws:dynamodb:us-east-1:123456789012:table/p90-contract",
                                  "S3Bucket": "p90-contract-bucket", "ExportTime": "x"}),
])
def test_a_timestamp_that_is_none_is_a_serialization_error(raw, operation, request_body):
    status, answer = raw(operation, request_body)
    assert (status, answer["__type"]) == (400, SERIALIZATION)
