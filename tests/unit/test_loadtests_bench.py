"""``python -m loadtests.bench``'s report names the command it was given (``main(argv)``),
not the process's own arguments: a script or test calling ``main`` printed pytest's."""

from __future__ import annotations

import argparse
import sys

import pytest
from loadtests import bench


def test_the_report_names_the_arguments_it_was_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["caller", "--not-a-bench-flag"])
    args = argparse.Namespace(
        given=["--quick", "--only", "warm"],
        load_before="0.10 0.20 0.30",
        encoder="onnx-int8",
        naive_encoder="sentence-transformers",
        duration=10.0,
    )
    text = bench.table([bench.Result("warm @300", "fast", 200.0)], args)
    assert "Command: `python -m loadtests.bench --quick --only warm`" in text
    assert "--not-a-bench-flag" not in text
    assert "| fast | warm @300 | 200 |" in text
