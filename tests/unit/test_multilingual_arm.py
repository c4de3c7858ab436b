"""The multilingual arm: read for non-English patterns only, its tool vectors cached like
the model's (fake encoders), and the real USE multilingual v3 adapter."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.fakes import HashingEncoder, TranslatingEncoder
from tool_selector.embeddings.cache import MemoryCache
from tool_selector.embeddings.multilingual import MultilingualEncoder
from tool_selector.pipeline.selector import Outcome, Selector
from tool_selector_client.wire import SearchRequest, Tool

CATALOG = [
    Tool(name="read_file", description="Read a file from the local disk"),
    Tool(name="send_message", description="Post a message to a Slack channel"),
    Tool(name="create_issue", description="Open a new GitHub issue"),
    Tool(name="get_weather", description="Current weather forecast for a city"),
]
GLOSSARY = {"天气预报": "weather forecast", "城市": "city", "Wetter": "weather"}


def select(pattern: str, arm: TranslatingEncoder | None) -> Outcome:
    selector = Selector(
        encoder=HashingEncoder(),
        cache=MemoryCache(1 << 20),
        embed_deadline=math.inf,
        multilingual=arm,
    )
    return selector.select(SearchRequest(pattern=pattern, tools=CATALOG, top_k=2))


@pytest.mark.parametrize(
    "pattern", ["read the file", "post to slack", "Wetter", "create_issue"], ids=str
)
def test_an_english_pattern_is_ranked_as_without_the_arm(pattern: str) -> None:
    arm = TranslatingEncoder(GLOSSARY)
    assert select(pattern, arm).ranking == select(pattern, None).ranking
    assert arm.calls == []


@pytest.mark.parametrize(
    "pattern",
    ["这个城市明天的天气预报是什么", "Wie wird das Wetter in der Stadt für die Woche"],
    ids=["zh", "de"],
)
def test_a_foreign_pattern_is_ranked_by_the_arm(pattern: str) -> None:
    outcome = select(pattern, TranslatingEncoder(GLOSSARY))
    assert outcome.ranking.names[0] == "get_weather"
    assert "multilingual" in outcome.timings


def test_the_arms_tool_vectors_are_cached_under_its_own_model() -> None:
    arm, cache = TranslatingEncoder(GLOSSARY), MemoryCache(1 << 20)
    selector = Selector(
        encoder=HashingEncoder(), cache=cache, multilingual=arm, embed_deadline=math.inf
    )
    for _ in range(2):
        selector.select(SearchRequest(pattern="城市的天气预报", tools=CATALOG, top_k=2))
    assert arm.calls == [len(CATALOG), 1, 1]  # the tools once, the query per request
    assert len(cache) == len(CATALOG)
    selector.select(SearchRequest(pattern="weather in a city", tools=CATALOG, top_k=2))
    assert len(cache) == 2 * len(CATALOG)
    assert arm.calls == [len(CATALOG), 1, 1]


@pytest.fixture(scope="module")
def use() -> MultilingualEncoder:
    return MultilingualEncoder()


@pytest.mark.model
def test_use_rows_are_unit_length_in_its_dimension(use: MultilingualEncoder) -> None:
    vectors = use.encode(["read a file", "读取文件"])
    assert vectors.shape == (2, use.dim)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert use.encode([]).shape == (0, use.dim)


@pytest.mark.model
@pytest.mark.parametrize(
    ("request_text", "tool"),
    [("读取这个文件的全部内容", 0), ("Schick eine Nachricht in den Slack-Kanal", 1),
     ("crea un issue nuevo en GitHub", 2), ("明日の天気予報を教えて", 3)],
    ids=["zh", "de", "es", "ja"],
)  # fmt: skip
def test_use_meets_an_english_tool_from_another_language(
    use: MultilingualEncoder, request_text: str, tool: int
) -> None:
    tools = use.encode([f"{t.name}: {t.description}" for t in CATALOG])
    assert int(np.argmax(tools @ use.encode([request_text])[0])) == tool


@pytest.mark.model
def test_use_model_id_names_the_package_version(use: MultilingualEncoder) -> None:
    assert use.model_id.endswith("@0.2.1")
