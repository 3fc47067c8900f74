"""The contract is endpoint-agnostic: it passes, unchanged, against a server named by AWS_ENDPOINT_URL_DYNAMODB."""
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SAMPLE = "replayed or reused or two_actions_on_one_item or cancellation_reasons or 101_actions or empty"


def test_the_contract_passes_against_a_standalone_server_seen_as_local(standalone_server):
    environment = {**os.environ, "AWS_ENDPOINT_URL_DYNAMODB": standalone_server}
    environment.pop("DYNAMODB_LAB_USE_AWS", None)
    run = subprocess.run([sys.executable, "-m", "pytest", str(HERE), "-k", SAMPLE], cwd=HERE.parent.parent,
                         env=environment, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert f"Backend: DynamoDB Local at {standalone_server}" in run.stdout
    assert " passed" in run.stdout and " failed" not in run.stdout
