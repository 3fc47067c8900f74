"""Contract fixtures: one shared table with a GSI, per-test keys, and a client that skips botocore's checks."""
import boto3
import pytest
from botocore.config import Config

from helpers import BackendError, connect, fresh_table
from helpers.backend import CLIENT_CONFIG, DUMMY_CREDENTIALS

TABLE = "p90-contract"


def pytest_report_header(config):
    """Name the backend the contract is checked on, at the top of the run (when tests/contract is run directly)."""
    try:
        return connect(quiet=True).banner
    except BackendError as error:
        return f"Backend: unavailable: {error}"


@pytest.fixture(scope="session")
def table(lab):
    """The contract table, created fresh once per session; each test writes under its own keys."""
    return fresh_table(TABLE, lab)


@pytest.fixture
def key(request):
    """key("alice") -> a primary key no other test uses, so tests can share one table."""
    return lambda name, sk="META": {"PK": f"{request.node.name}#{name}", "SK": sk}


@pytest.fixture(scope="session")
def unvalidated_client(lab):
    """A low-level client of the same backend that sends requests botocore would refuse to send."""
    session = boto3.session.Session(**(DUMMY_CREDENTIALS if lab.kind != "aws" else {}))
    return session.client("dynamodb", endpoint_url=lab.endpoint, region_name=lab.client.meta.region_name,
                          config=CLIENT_CONFIG.merge(Config(parameter_validation=False)))
