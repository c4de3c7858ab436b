"""The relevance bar and a request in another language, on each ranking path (fake encoders).

An English request with no evidence is still "no useful match"; a request read as not
English is never answered empty by the bar (its floors are English evidence), on the hybrid,
static and lexical paths alike, while a caller's ``min_score`` still may."""

from __future__ import annotations

import math

import pytest

from tests.fakes import HashingEncoder, TranslatingEncoder
from tool_selector.embeddings.cache import MemoryCache
from tool_selector.embeddings.static import static_text
from tool_selector.pipeline.jobs import EmbeddingJobs
from tool_selector.pipeline.selector import Outcome, Selector
from tool_selector.ranking.bm25 import FieldWeights
from tool_selector.ranking.catalog import build_catalog
from tool_selector.ranking.fitted import HYBRID
from tool_selector.ranking.glossary import Glossary
from tool_selector.ranking.ranker import Query, rank
from tool_selector_client.wire import SearchRequest, Tool

TOOLS = [
    Tool(name="read_file", description="Read a file from disk"),
    Tool(name="send_message", description="Post a message to a Slack channel"),
    Tool(name="get_current_time", description="The current time in a time zone"),
    Tool(name="paint_color_trends", description="Find the most popular paint color for a room"),
]
GLOSSARY = Glossary.of([("popular", ["beliebt", "beliebte"]), ("file", ["datei"])])
#: Real needs the small glossary has no word for (Japanese, German): no shared evidence.
UNREAD = ["東京は今何時", "Wie spät ist es gerade in Tokio?"]
ENGLISH_NOTHING = "quantum chromodynamics lattice"


class StaticTable(HashingEncoder):
    """A stand-in static table (its own model id, the encoder's dimensions)."""

    model_id = "test/static-table"


def closed_jobs() -> EmbeddingJobs:
    jobs = EmbeddingJobs()
    jobs.close(0.0)
    return jobs


def hybrid() -> Selector:
    return Selector(
        encoder=HashingEncoder(),
        cache=MemoryCache(1 << 20),
        embed_deadline=math.inf,
        multilingual=TranslatingEncoder({}),
        glossary=GLOSSARY,
    )


def static() -> Selector:
    """A catalog seen for the first time: nothing embedded, nothing embeds behind it."""
    return Selector(
        encoder=HashingEncoder(),
        static=StaticTable(),
        multilingual=TranslatingEncoder({}),
        glossary=GLOSSARY,
        jobs=closed_jobs(),
        embed_deadline=0.0,
    )


def lexical() -> Selector:
    return Selector(encoder=None, glossary=GLOSSARY)


PATHS = {"hybrid": hybrid, "static": static, "lexical": lexical}


def ask(path: str, pattern: str, **extra: object) -> Outcome:
    outcome = PATHS[path]().select(SearchRequest(pattern=pattern, tools=TOOLS, **extra))  # type: ignore[arg-type]
    assert outcome.path == path
    return outcome


@pytest.mark.parametrize("path", PATHS)
def test_an_english_request_with_nothing_in_common_is_still_no_match(path: str) -> None:
    ranking = ask(path, ENGLISH_NOTHING, top_k=3).ranking
    assert (ranking.no_match, ranking.names) == (True, [])


@pytest.mark.parametrize("pattern", UNREAD, ids=["ja", "de"])
@pytest.mark.parametrize("path", PATHS)
def test_a_request_in_another_language_is_never_answered_empty(path: str, pattern: str) -> None:
    ranking = ask(path, pattern, top_k=3).ranking
    assert (ranking.no_match, bool(ranking.names)) == (False, True)


#: Requests the language test leans to read as English (one foreign function word, no more
#: English ones): the bar must not judge them on English evidence either.
LEANS_ENGLISH = ["Quali incidenti sono aperti su PagerDuty?", "streich das Standup am Donnerstag"]


@pytest.mark.parametrize("pattern", LEANS_ENGLISH, ids=["it", "de-with-am"])
@pytest.mark.parametrize("path", PATHS)
def test_a_request_read_as_english_on_too_little_is_never_answered_empty(
    path: str, pattern: str
) -> None:
    ranking = ask(path, pattern, top_k=3).ranking
    assert (ranking.no_match, bool(ranking.names)) == (False, True)


@pytest.mark.parametrize("path", PATHS)
def test_the_german_paint_request_finds_its_tool_on_every_path(path: str) -> None:
    pattern = "Welche Wandfarbe ist derzeit für Wohnzimmer am beliebtesten?"
    assert ask(path, pattern, top_k=3).ranking.names[0] == "paint_color_trends"


@pytest.mark.parametrize("path", PATHS)
def test_always_keep_alone_is_not_the_answer_either(path: str) -> None:
    names = ask(path, UNREAD[0], top_k=3, always_keep=["read_file"]).ranking.names
    assert "read_file" in names
    assert set(names) - {"read_file"}


@pytest.mark.parametrize("path", PATHS)
def test_min_score_may_still_empty_the_answer(path: str) -> None:
    assert ask(path, UNREAD[0], top_k=3, min_score=1.0).ranking.names == []


@pytest.mark.parametrize(
    ("pattern", "dense"),
    [("read a file from disk", True), ("read a file from disk", False),
     (ENGLISH_NOTHING, True), (ENGLISH_NOTHING, False)],
)  # fmt: skip
def test_where_the_bar_answers_abstain_changes_nothing(pattern: str, dense: bool) -> None:
    """``abstain=False`` only fills an answer the bar left empty."""
    catalog = build_catalog(TOOLS, FieldWeights())
    query = Query.parse(pattern)
    bm25 = catalog.index.scores(query.terms)
    vectors = None
    if dense:
        encoder = HashingEncoder()
        tools = encoder.encode([static_text(t) for t in catalog.texts])
        vectors = tools @ encoder.encode([pattern])[0]
    runs = [
        rank(
            catalog,
            query,
            bm25=bm25,
            dense=vectors,
            top_k=2,
            always_keep=(),
            params=HYBRID,
            abstain=abstain,
        )
        for abstain in (True, False)
    ]
    if runs[0].names:
        assert runs[1] == runs[0]
    else:
        assert (runs[1].names, runs[1].no_match) == (list(runs[0].ranked), False)
