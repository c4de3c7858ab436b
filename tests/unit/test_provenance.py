"""What ranked an answer travels with it (``Outcome.provenance``): the arm, the encoders whose
cosines ranked, and whether they had the whole catalog's vectors; the fusion digest covers
every constant that ranks, the multi-step rule included."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from prometheus_client import CollectorRegistry

from tests.fakes import HashingEncoder, TranslatingEncoder
from tool_selector.embeddings.encoder import Ensemble
from tool_selector.http.wiring import build_selector, fusion_digest
from tool_selector.metrics import Metrics
from tool_selector.pipeline.ask import ToolSource
from tool_selector.pipeline.catalog_store import CatalogStore
from tool_selector.pipeline.columns import Provenance
from tool_selector.pipeline.selector import Selector
from tool_selector.ranking.fitted import SHIPPED_STEPS, Rules
from tool_selector.settings import Settings
from tool_selector_client.wire import SearchRequest, Tool

TOOLS = [
    Tool(name="get_weather", description="Weather forecast for a city"),
    Tool(name="send_email", description="Send an email message to a person"),
    Tool(name="list_events", description="List calendar events of a day"),
]


class Second(HashingEncoder):
    model_id = "test/second-encoder"


def test_a_fully_embedded_catalogs_answer_names_every_encoder() -> None:
    first, second = HashingEncoder(), Second()
    selector = Selector(encoder=Ensemble([first, second]), embed_deadline=math.inf)
    made = selector.select(SearchRequest(pattern="weather in Porto", tools=TOOLS)).provenance
    assert (made.arm, made.embedded) == ("dense", "complete")
    assert made.model == f"{first.model_id}+{second.model_id}"


def test_while_the_second_embeds_the_first_answers_and_says_partial() -> None:
    first, second = HashingEncoder(), Second()
    selector = Selector(
        encoder=Ensemble([first, second]), catalogs=CatalogStore(100), embed_deadline=math.inf
    )
    entry = selector.entry(ToolSource.of(TOOLS)).entry
    entry.set_matrix(first.model_id, first.encode(entry.texts(first.model_id)))
    selector.vectors.embed_deadline = 0.0  # the second model's vectors are not in yet
    outcome = selector.select(SearchRequest(pattern="weather in Porto", tools=TOOLS))
    made = outcome.provenance
    assert (outcome.path, made.arm, made.embedded) == ("hybrid", "dense", "partial")
    assert made.model == first.model_id


def test_a_single_encoder_is_an_ensemble_of_one() -> None:
    encoder = HashingEncoder()
    selector = Selector(encoder=encoder, embed_deadline=math.inf)
    made = selector.select(SearchRequest(pattern="weather in Porto", tools=TOOLS)).provenance
    assert (made.model, made.embedded) == (encoder.model_id, "complete")


def test_a_foreign_pattern_names_the_multilingual_arm_and_the_gloss_model() -> None:
    english, arm = HashingEncoder(), TranslatingEncoder({"天气": "weather"})
    selector = Selector(encoder=english, multilingual=arm, embed_deadline=math.inf)
    chinese = selector.select(SearchRequest(pattern="波尔图的天气预报", tools=TOOLS)).provenance
    assert chinese.arm == "multilingual"
    assert chinese.model is not None
    assert chinese.model.split("+")[0] == arm.model_id
    plain = selector.select(SearchRequest(pattern="weather in Porto", tools=TOOLS)).provenance
    assert plain.arm == "dense"
    assert plain.model is not None
    assert arm.model_id not in plain.model


def test_a_foreign_pattern_the_english_models_answer_while_its_arm_embeds_is_partial() -> None:
    english, arm = HashingEncoder(), TranslatingEncoder({"天气": "weather"})
    selector = Selector(
        encoder=english, multilingual=arm, catalogs=CatalogStore(100), embed_deadline=math.inf
    )
    entry = selector.entry(ToolSource.of(TOOLS)).entry
    entry.set_matrix(english.model_id, english.encode(entry.texts(english.model_id)))
    selector.vectors.embed_deadline = 0.0  # the multilingual model's vectors are not in yet
    chinese = selector.select(SearchRequest(pattern="波尔图的天气预报", tools=TOOLS))
    made = chinese.provenance
    assert (chinese.path, made.arm, made.model) == ("hybrid", "dense", english.model_id)
    assert made.embedded == "partial"  # not the answer the fully embedded catalog gets
    plain = selector.select(SearchRequest(pattern="weather in Porto", tools=TOOLS)).provenance
    assert (plain.arm, plain.embedded) == ("dense", "complete")


def test_the_lexical_path_names_no_model() -> None:
    made = Selector().select(SearchRequest(pattern="weather", tools=TOOLS)).provenance
    assert (made.arm, made.model, made.weights, made.embedded) == ("lexical", None, None, "none")


@pytest.mark.parametrize(
    ("one", "other"),
    [
        (Rules(), Rules(steps=SHIPPED_STEPS)),
        (Rules(), Rules(gloss_share=0.3)),
        (Rules(steps=SHIPPED_STEPS), Rules(steps=replace(SHIPPED_STEPS, reach=10))),
    ],
    ids=["multi-step on", "gloss share", "step reach"],
)
def test_the_digest_changes_with_any_rule(one: Rules, other: Rules) -> None:
    assert one.digest(glossary=True) != other.digest(glossary=True)


def test_the_services_digest_differs_with_multi_step_on_and_off() -> None:
    def digest(on: bool) -> str:
        selector = build_selector(
            Settings(multi_step=on, encoder="none"), Metrics(CollectorRegistry())
        )
        return fusion_digest(selector)

    assert digest(True) != digest(False)
    assert digest(True) == digest(True)


class Weighed(HashingEncoder):
    """An encoder that says which weights it ranks with."""

    def __init__(self, digest: str) -> None:
        super().__init__()
        self.weights_digest = digest


def test_the_weights_are_every_part_s_digest_or_none() -> None:
    """The log's ``weights``: each encoder's digest (an ensemble's parts' joined), ``None``
    as soon as one part cannot say (an encoder from a test)."""
    a, b = Weighed("aaaa"), Weighed("bbbb")
    assert replace(Provenance(), encoders=(a,)).weights == "aaaa"
    assert replace(Provenance(), encoders=(Ensemble([a, b]), a)).weights == "aaaa+bbbb+aaaa"
    assert replace(Provenance(), encoders=(a, HashingEncoder())).weights is None
    assert replace(Provenance(), encoders=(Ensemble([a, HashingEncoder()]),)).weights is None
    assert Provenance().weights is None
