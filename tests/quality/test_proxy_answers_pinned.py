"""The four proxy releases' real bodies get the answers they got before the caller's controls
existed, on the hybrid and the lexical path (``tests/fixtures/proxy_answers.json``: written
by the code of f09feb1, the commit before them): the first contract's byte for byte; the
compress contract's with Compresr's counts added to ``data`` (``tool_count``,
``original_tool_count``, ``duration_ms``) and every other byte as pinned."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.support import ROOT
from tool_selector.embeddings.cache import MemoryCache
from tool_selector.embeddings.factory import encoder_from_settings
from tool_selector.pipeline.contracts import SEARCH, Tally
from tool_selector.pipeline.decoding import Decoder
from tool_selector.pipeline.selector import Selector
from tool_selector.settings import Settings

FIXTURES = ROOT.parent / "shared" / "fixtures" / "context-gateway" / "requests"
PINNED = json.loads((ROOT / "tests" / "fixtures" / "proxy_answers.json").read_text())
PATHS = {"A": "/v1/tool-discovery/search", "B": "/api/compress/tool-discovery/"}

pytestmark = [
    pytest.mark.model,
    pytest.mark.skipif(not FIXTURES.is_dir(), reason=f"proxy fixtures not found at {FIXTURES}"),
]


@pytest.fixture(scope="module")
def selectors() -> dict[str, Selector]:
    encoder = encoder_from_settings(Settings())
    warm = Selector(encoder=encoder, cache=MemoryCache(1 << 26), embed_deadline=math.inf)
    return {"hybrid": warm, "lexical": Selector(encoder=None)}


@pytest.mark.parametrize("key", sorted(PINNED))
def test_release_body_answers_as_before(selectors: dict[str, Selector], key: str) -> None:
    fixture, path_name = key.split("/")
    body = Path(FIXTURES / fixture).read_bytes()
    contract, ask = Decoder(Settings()).decode(body, PATHS.get(fixture[0], PATHS["B"]))
    outcome = selectors[path_name].select(ask)
    answer = contract.answer(outcome.ranking.names, None, Tally(outcome.tools, 7))
    if contract is SEARCH:
        assert answer.decode() == PINNED[key]
        return
    names = outcome.ranking.names
    counts = f',"tool_count":{len(names)},"original_tool_count":{outcome.tools},"duration_ms":7'
    pinned = PINNED[key].replace("]}", "]" + counts + "}", 1)
    assert (answer.decode(), PINNED[key].count("]}")) == (pinned, 1)
