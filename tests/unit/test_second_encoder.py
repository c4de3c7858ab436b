"""The second encoder (a row of ``embeddings/models.py``) and the dense arm that averages it
with MiniLM: unit vectors, per-model caching, the static arm (both tables' mean, MiniLM's
alone without the second model or its table) and the settings."""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np
import pytest

from tests.support import second_static_table, static_table
from tool_selector.embeddings.cache import MemoryCache
from tool_selector.embeddings.encoder import Encoder, Ensemble, encode_query, parts_of, primary_of
from tool_selector.embeddings.factory import encoder_from_settings, static_from_settings
from tool_selector.embeddings.models import BGE_SMALL, default_model_dir
from tool_selector.embeddings.onnx import OnnxEncoder
from tool_selector.embeddings.static import StaticEncoder, static_matrix, static_text
from tool_selector.lru import BoundedLRU
from tool_selector.pipeline.ask import ToolSource
from tool_selector.pipeline.jobs import EmbeddingJobs
from tool_selector.pipeline.selector import Selector
from tool_selector.pipeline.step_vectors import steps_key
from tool_selector.ranking.fitted import SHIPPED_STEPS, Rules
from tool_selector.settings import Settings
from tool_selector_client.wire import SearchRequest, Tool

pytestmark = pytest.mark.model

TEXTS = ["send_message: Post a message to a Slack channel", "read_file: Read a file", "weather"]
TOOLS = [
    Tool(name="send_message", description="Post a message to a Slack channel"),
    Tool(name="read_file", description="Read a file from the local disk"),
    Tool(name="get_weather", description="Current weather and forecast for a city"),
    Tool(name="create_issue", description="Open an issue in a GitHub repository"),
]


@pytest.fixture(scope="module")
def both() -> Ensemble:
    encoder = encoder_from_settings(Settings())
    assert isinstance(encoder, Ensemble)
    return encoder


def test_the_mean_vector_is_unit_and_its_cosine_the_mean(both: Ensemble) -> None:
    docs, query = both.encode(TEXTS), encode_query(both, ["send a chat message"])[0]
    assert docs.shape == (3, 768)
    assert np.allclose(np.linalg.norm(docs, axis=1), 1, atol=1e-5)
    parts = [p.encode(TEXTS) @ encode_query(p, ["send a chat message"])[0] for p in both.parts]
    np.testing.assert_allclose(docs @ query, (parts[0] + parts[1]) / 2, atol=1e-5)


def test_each_models_tool_vectors_are_cached_under_its_own_id(both: Ensemble) -> None:
    cache = MemoryCache(1 << 24)
    selector = Selector(encoder=both, cache=cache, embed_deadline=math.inf)
    outcome = selector.select(SearchRequest(pattern="post to slack", tools=TOOLS))
    assert outcome.path == "hybrid"
    assert outcome.ranking.names[0] == "send_message"
    entry = selector.entry(ToolSource.of(TOOLS)).entry
    for part in both.parts:
        assert all(v is not None for v in cache.get_many(entry.keys(part.model_id), part.dim))
    assert len(cache) == 2 * len(TOOLS)


def test_the_relevance_bar_reads_minilms_cosines(both: Ensemble) -> None:
    request = SearchRequest(pattern="quantum chromodynamics lattice gauge theory", tools=TOOLS)
    for encoder in (both, primary_of(both)):
        selector = Selector(encoder=encoder, embed_deadline=math.inf)
        outcome = selector.select(request)
        assert (outcome.path, outcome.ranking.names) == ("hybrid", [])
        assert outcome.ranking.no_match


@pytest.fixture(scope="module")
def tables() -> Ensemble:
    """MiniLM's static table and bge-small's, as ``static_from_settings`` joins them."""
    first = StaticEncoder(static_table())
    return Ensemble([first, StaticEncoder(second_static_table(), BGE_SMALL.name)])


def cold(encoder: Encoder, static: Encoder) -> Selector:
    """A selector that answers from the static arm (no model ever embeds its catalogs)."""
    jobs = EmbeddingJobs()
    jobs.close(0.0)
    return Selector(encoder=encoder, static=static, jobs=jobs, embed_deadline=0.0)


def test_the_static_arm_averages_both_tables_cosines(both: Ensemble, tables: Ensemble) -> None:
    pattern = "read a file from disk"
    selector = cold(both, tables)
    outcome = selector.select(SearchRequest(pattern=pattern, tools=TOOLS))
    assert outcome.path == "static"
    assert outcome.provenance.encoders == (*tables.parts, *both.parts)
    texts = selector.entry(ToolSource.of(TOOLS)).entry.catalog.texts
    means = np.mean(
        [
            static_matrix(table, texts) @ encode_query(model, [pattern])[0]
            for table, model in zip(tables.parts, both.parts, strict=True)
        ],
        axis=0,
    )
    for picked in outcome.ranking.picked:
        at = outcome.catalog.positions[picked.name] if outcome.catalog else -1
        assert picked.dense_similarity == pytest.approx(means[at], abs=1e-4)


@pytest.mark.parametrize("second", ["model", "table"], ids=["no second model", "no bge table"])
def test_without_both_the_static_arm_reads_minilms_table_alone(
    both: Ensemble, tables: Ensemble, second: str
) -> None:
    request = SearchRequest(pattern="read a file from disk", tools=TOOLS)
    alone = cold(primary_of(both), tables.primary).select(request)
    encoder, static = (primary_of(both), tables) if second == "model" else (both, tables.primary)
    outcome = cold(encoder, static).select(request)
    assert (outcome.path, outcome.ranking) == ("static", alone.ranking)
    assert outcome.provenance.encoders == (tables.primary, primary_of(both))


def test_the_settings_join_both_tables_or_fall_back_to_minilms(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    first, second = str(static_table()), str(second_static_table())
    joined = static_from_settings(
        Settings(static_model_path=first, second_static_model_path=second)
    )
    assert joined is not None
    assert len(parts_of(joined)) == 2
    alone = static_from_settings(Settings(static_model_path=first, second_encoder=False))
    assert isinstance(alone, StaticEncoder)
    with caplog.at_level(logging.WARNING):
        missing = static_from_settings(
            Settings(static_model_path=first, second_static_model_path=str(tmp_path))
        )
    assert isinstance(missing, StaticEncoder)
    assert "second static table off" in caplog.text


def test_a_new_patterns_vector_is_the_mean_encoders_own(both: Ensemble) -> None:
    selector = Selector(encoder=both, queries=BoundedLRU(100), embed_deadline=math.inf)
    got = [selector.select(SearchRequest(pattern=t, tools=TOOLS)) for t in TEXTS]
    assert all(o.path == "hybrid" for o in got)
    for text in TEXTS:  # encoded with the second model on the helper thread, then cached
        vec, cached = selector.query_vectors.vector(both, text)
        assert cached
        np.testing.assert_allclose(vec, encode_query(both, [text])[0], atol=1e-5)


def test_until_the_second_is_embedded_minilm_alone_answers(both: Ensemble) -> None:
    cache = MemoryCache(1 << 24)
    request = SearchRequest(pattern="open a bug report", tools=TOOLS)
    alone = Selector(encoder=primary_of(both), cache=cache, embed_deadline=math.inf)
    want = alone.select(request).ranking
    jobs = EmbeddingJobs()
    jobs.close(0.0)  # the second model's tool vectors never come
    static = static_from_settings(Settings())
    mixed = Selector(encoder=both, cache=cache, jobs=jobs, embed_deadline=0.0, static=static)
    outcome = mixed.select(request)
    assert (outcome.path, outcome.ranking) == ("hybrid", want)


@pytest.mark.parametrize(("on", "models"), [(True, 2), (False, 1)])
def test_the_setting_turns_the_second_encoder_on_and_off(on: bool, models: int) -> None:
    encoder = encoder_from_settings(Settings(second_encoder=on))
    assert encoder is not None
    assert len(parts_of(encoder)) == models


def test_missing_files_leave_minilm_alone_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        encoder = encoder_from_settings(Settings(second_encoder_path=str(tmp_path)))
    assert isinstance(encoder, OnnxEncoder)
    assert "second encoder off" in caplog.text
    assert "fetch-model" in caplog.text


def test_files_of_another_digest_leave_minilm_alone_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    source = default_model_dir(BGE_SMALL)
    (tmp_path / "model.onnx").symlink_to(source / "model.onnx")
    tokenizer = (source / "tokenizer.json").read_bytes()
    (tmp_path / "tokenizer.json").write_bytes(tokenizer.replace(b'"[CLS]"', b'"[CLX]"', 1))
    with caplog.at_level(logging.WARNING):
        encoder = encoder_from_settings(Settings(second_encoder_path=str(tmp_path)))
    assert isinstance(encoder, OnnxEncoder)
    assert "tokenizer.json is altered" in caplog.text


def test_a_clauses_vector_reads_as_a_query_of_both_models(both: Ensemble) -> None:
    selector = Selector(encoder=both, queries=BoundedLRU(100))
    clause = "send a chat message to the team"
    (vec,) = selector.query_vectors.many(both, [clause])  # multi-step's batched clause encode
    np.testing.assert_allclose(vec, encode_query(both, [clause])[0], atol=1e-5)


TASK = "Book a flight from Boston to Paris for Friday, then order a large pepperoni pizza."


def test_the_shipped_rule_caches_both_models_clause_vectors(both: Ensemble) -> None:
    """With both models and the shipped rule, a long multi-step task's clause vectors are
    read by each model (from the whole pattern's pass) and cached beside its vector; the
    answer's first tool is the whole pattern's, and a repeat gives the same answer."""
    task = (
        "Create a shipment for the parcel from Emma to Daniel and print its shipping label. "
        "Then check how much storage space is still left in the Boston warehouse this week. "
        "Finally, refund order ord123, which the customer sent back to us yesterday afternoon."
    )
    assert len(task) >= SHIPPED_STEPS.min_chars
    tools = [*TOOLS, Tool(name="refund_order", description="Refund an order by its id")]
    queries: BoundedLRU[tuple[str, str], np.ndarray] = BoundedLRU(100)  # type: ignore[type-arg]
    selector = Selector(
        encoder=both, queries=queries, embed_deadline=math.inf, rules=Rules(steps=SHIPPED_STEPS)
    )
    first = selector.select(SearchRequest(pattern=task, tools=tools)).ranking.names
    for part in both.parts:
        assert queries.get((part.model_id, task)) is not None
        steps = queries.get(steps_key(part.model_id, task))
        assert steps is not None
        assert steps.shape == (3, part.dim)
    assert selector.select(SearchRequest(pattern=task, tools=tools)).ranking.names == first
    plain = Selector(encoder=both, queries=BoundedLRU(100), embed_deadline=math.inf)
    assert plain.select(SearchRequest(pattern=task, tools=tools)).ranking.names[0] == first[0]


def test_the_second_model_embeds_tools_without_their_parameters(both: Ensemble) -> None:
    """bge-small reads a tool's name, description and search text (``static_text``);
    MiniLM its dense text with the parameters; each part's cached vectors are of its text."""
    tool = Tool(
        name="create_issue",
        description="Open an issue in a GitHub repository",
        definition={
            "name": "create_issue",
            "parameters": {"properties": {"repo": {"description": "owner/name of the repo"}}},
        },
    )
    selector = Selector(encoder=both, cache=MemoryCache(1 << 22), embed_deadline=math.inf)
    entry = selector.entry(ToolSource.of([tool])).entry
    minilm, second = both.parts
    (text,) = entry.texts(second.model_id)
    assert "Parameters" not in text
    assert text == static_text(entry.catalog.texts[0])
    assert "owner/name of the repo" in entry.texts(minilm.model_id)[0]
    _, matrix = selector.embedded([tool])
    assert matrix is not None
    np.testing.assert_allclose(
        both.first(matrix)[0], minilm.encode(entry.texts(minilm.model_id))[0], atol=1e-5
    )
    half = matrix[0, minilm.dim :] * np.float32(math.sqrt(2))
    np.testing.assert_allclose(half, second.encode([text])[0], atol=1e-5)
