"""CaptureWriter is best effort: a full disk is counted, never raised."""

from __future__ import annotations

from pathlib import Path

import pytest

from tool_selector_client import CaptureWriter

FULL = Path("/dev/full")


@pytest.mark.skipif(not FULL.exists(), reason="needs /dev/full")
def test_full_disk_is_counted_and_close_does_not_raise() -> None:
    capture = CaptureWriter(FULL)
    capture.record("read a file", [{"name": "read_file"}], None)
    capture.close()
    assert capture.errors >= 1
