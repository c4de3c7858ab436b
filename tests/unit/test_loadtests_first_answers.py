"""``python -m loadtests.first_answers``: each real need as a never-seen catalog's first
request, over HTTP, beside the warm answer."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from loadtests import first_answers
from loadtests.first_answers import marked, marker, marker_width

from tool_selector.embeddings.encoder import Ensemble
from tool_selector.embeddings.factory import encoder_from_settings, static_from_settings
from tool_selector.embeddings.static import static_text
from tool_selector.pipeline.ask import ToolSource
from tool_selector.pipeline.selector import Selector
from tool_selector.settings import Settings
from tool_selector_client.wire import Tool

MINI = str(Path(__file__).resolve().parents[1] / "fixtures" / "agent_mini")
TOOLS = [
    {
        "name": "send_message",
        "description": "Post a message to a Slack channel",
        "definition": {
            "type": "function",
            "function": {
                "name": "send_message",
                "description": "Post a message to a Slack channel",
            },
        },
    },
    {"name": "read_file", "description": "Read a file from the local disk"},
]

pytestmark = pytest.mark.model


def test_every_marker_is_its_own() -> None:
    marks = {marker(i) for i in range(4096)}
    assert len(marks) == 4096
    assert all(len(m) == 6 and set(m) <= set(first_answers.INVISIBLE) for m in marks)
    with pytest.raises(ValueError, match="more than 6"):
        marker(4096)  # would be marker(0)'s characters again
    assert [marker_width(n) for n in (1, 4096, 4097, 10_376)] == [6, 6, 7, 7]
    wide = marker_width(4097)  # the warm catalog's and 4,096 needs'
    assert len({marker(i, wide) for i in range(4097)}) == 4097


def test_a_marked_catalog_ranks_as_the_catalog_but_is_new_to_every_cache() -> None:
    """The tokenizers drop the marker's characters: the same BM25 scores, model and static
    vectors, bit for bit; every text, so every cache key, differs."""
    sent = marked(TOOLS, marker(7))
    assert sent[0]["description"].endswith(marker(7))
    assert sent[0]["definition"]["function"]["description"].endswith(marker(7))
    assert TOOLS[0]["description"] == "Post a message to a Slack channel"  # not changed
    settings = Settings()
    encoder, static = encoder_from_settings(settings), static_from_settings(settings)
    assert isinstance(encoder, Ensemble)
    assert isinstance(static, Ensemble)
    selector = Selector(encoder=encoder)
    plain, new = (
        selector.entry(ToolSource.of([Tool(**t) for t in tools])).entry for tools in (TOOLS, sent)
    )
    terms = ["message", "slack", "file"]
    assert np.array_equal(plain.catalog.index.scores(terms), new.catalog.index.scores(terms))
    for part in encoder.parts:
        model = part.model_id
        assert set(plain.keys(model)).isdisjoint(new.keys(model))
        assert np.array_equal(part.encode(plain.texts(model)), part.encode(new.texts(model)))
    old_texts, new_texts = ([static_text(t) for t in e.catalog.texts] for e in (plain, new))
    assert all(a != b for a, b in zip(old_texts, new_texts, strict=True))
    for table in static.parts:
        assert np.array_equal(table.encode(old_texts), table.encode(new_texts))


def test_the_benchmark_prints_each_paths_first_answers_beside_the_warm_ones(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert first_answers.main(["--datasets", MINI, "--split", "all"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| agent_mini, ")]
    assert rows[0].startswith("| agent_mini, all |")
    cells = [[c.strip() for c in row.strip("|").split("|")] for row in rows]
    assert sum(int(c[1]) for c in cells[1:]) == int(cells[0][1]) > 0  # each need one path
    assert {c[0].split(", ")[1] for c in cells[1:]} <= {"hybrid", "static", "shortlist"}
    warm, first = (tuple(map(float, cells[0][i].split(" / "))) for i in (2, 3))
    share = float(cells[0][4].rstrip("%"))
    assert share == pytest.approx(100 * first[1] / warm[1], abs=0.1)
    assert re.search(r"command: PYTHONPATH=service:\. python -m loadtests\.first_answers", out)
