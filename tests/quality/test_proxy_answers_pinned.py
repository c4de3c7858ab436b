"""The four proxy releases' real bodies get the answers they got before the caller's controls
existed, byte for byte, on the hybrid and the lexical path (``tests/fixtures/
proxy_answers.json``: written by the code of f09feb1, the commit before them, with MiniLM
alone: ``TOOL_SELECTOR_SECOND_ENCODER=false``). With the second encoder on (the default), the
hybrid answers' first five name the same tools, the same one first; the order after it
may differ."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.support import ROOT
from tool_selector.embeddings.cache import MemoryCache
from tool_selector.embeddings.factory import encoder_from_settings
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
    encoder = encoder_from_settings(Settings(second_encoder=False))
    warm = Selector(encoder=encoder, cache=MemoryCache(1 << 26), embed_deadline=math.inf)
    both = Selector(
        encoder=encoder_from_settings(Settings()),
        cache=MemoryCache(1 << 26),
        embed_deadline=math.inf,
    )
    return {"hybrid": warm, "lexical": Selector(encoder=None), "second": both}


def _answer(selector: Selector, fixture: str) -> str:
    body = Path(FIXTURES / fixture).read_bytes()
    contract, ask = Decoder(Settings()).decode(body, PATHS.get(fixture[0], PATHS["B"]))
    return contract.answer(selector.select(ask).ranking.names, None).decode()


@pytest.mark.parametrize("key", sorted(PINNED))
def test_release_body_answers_as_before(selectors: dict[str, Selector], key: str) -> None:
    fixture, path_name = key.split("/")
    assert _answer(selectors[path_name], fixture) == PINNED[key]


@pytest.mark.parametrize("key", sorted(k for k in PINNED if k.endswith("/hybrid")))
def test_second_encoder_names_the_same_tools(selectors: dict[str, Selector], key: str) -> None:
    fixture = key.split("/", 1)[0]
    pinned, got = _names(PINNED[key]), _names(_answer(selectors["second"], fixture))
    assert got[0] == pinned[0]
    assert sorted(got[:5]) == sorted(pinned[:5])


def _names(answer: str) -> list[str]:
    """The tool names of a proxy answer (either release's shape)."""
    body = json.loads(answer)
    names = body.get("selected_names") or body["data"]["relevant_tools"]
    return [str(n) for n in names]
