import subprocess
import sys

import pytest

import tool_selector_client
from tests.support import SERVICE_DIR


@pytest.mark.parametrize("name", tool_selector_client.__all__)
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(tool_selector_client, name) is not None


def test_wire_types_do_not_pull_in_httpx() -> None:
    code = "import sys, tool_selector_client.wire; print('httpx' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SERVICE_DIR)},
        check=True,
    )
    assert out.stdout.strip() == "False"


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError):
        _ = tool_selector_client.NoSuchThing  # type: ignore[attr-defined]
