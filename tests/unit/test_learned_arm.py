"""The learned arm through ``Selector.select``: a scope with no feedback answers byte for byte
as learning off does; feedback moves an unsure answer; forgetting gives the answers back."""

from __future__ import annotations

import math
import uuid
from dataclasses import replace

import msgspec

from tests.fakes import HashingEncoder
from tool_selector.learning.learner import Learner
from tool_selector.learning.store import Bounds, MemoryStore
from tool_selector.pipeline.ask import Ask, ToolSource
from tool_selector.pipeline.catalog_store import CatalogStore
from tool_selector.pipeline.selector import Selector
from tool_selector.ranking.fitted import HYBRID, Rules
from tool_selector.ranking.learned import pattern_terms, term_hash, terms_key
from tool_selector.ranking.tokenize import tokenize
from tool_selector_client.wire import Tool

TOOLS = ToolSource.of(
    [
        Tool(name="list_tables", description="List the tables of a database"),
        Tool(name="get_table_schema", description="Show the schema of a table in a database"),
        Tool(name="send_email", description="Send an email message"),
    ]
)
PATTERN = "tables of my orders database"
#: Always moved (``learn_below`` 1: every answer counts as unsure), or never (0).
MOVING = Rules(hybrid=replace(HYBRID, learn_below=1.0, learn_weight=50.0))
STILL = Rules(hybrid=replace(HYBRID, learn_below=0.0, learn_weight=50.0))


def selector(rules: Rules, learner: Learner | None) -> Selector:
    return Selector(
        HashingEncoder(),
        rules=rules,
        catalogs=CatalogStore(1_000),
        embed_deadline=math.inf,
        learning=learner,
    )


def learner() -> Learner:
    store = MemoryStore(Bounds(ttl=3600, max_searches=1_000, max_events=1_000))
    return Learner(store, MOVING.learn, refresh=0.0)


def answer(sel: Selector, pattern: str = PATTERN, scope: str | None = "scope") -> bytes:
    outcome = sel.select(Ask(pattern=pattern, tools=TOOLS, top_k=3, explain=True, scope=scope))
    return msgspec.json.encode(outcome.ranking.picked)


def teach(sel: Selector, pattern: str, called: str, times: int = 3) -> None:
    for _ in range(times):
        ask = Ask(pattern=pattern, tools=TOOLS, top_k=3, scope="scope")
        sid = uuid.uuid4().hex
        sel.remember(sid, ask, sel.select(ask), "proxy")
        assert sel.learning is not None
        sel.learning.feedback(sid, [called])


def test_a_scope_without_feedback_answers_as_learning_off() -> None:
    learning = selector(MOVING, learner())
    assert answer(learning) == answer(selector(MOVING, None), scope=None)


def test_feedback_on_near_searches_moves_the_called_tool_up() -> None:
    sel = selector(MOVING, learner())
    before = sel.select(Ask(pattern=PATTERN, tools=TOOLS, top_k=3, scope="scope")).ranking
    teach(sel, "show tables of my orders database", "get_table_schema")
    after = sel.select(Ask(pattern=PATTERN, tools=TOOLS, top_k=3, scope="scope")).ranking
    assert before.names[0] == "list_tables"
    assert after.names[0] == "get_table_schema"
    assert after.learned_moved
    assert "learned" in sel.select(Ask(pattern=PATTERN, tools=TOOLS, scope="scope")).timings


def test_another_scope_reads_none_of_it() -> None:
    sel = selector(MOVING, learner())
    plain = answer(sel, scope="other")
    teach(sel, "show tables of my orders database", "get_table_schema")
    assert answer(sel, scope="other") == plain


def test_a_confident_answer_stands() -> None:
    sel = selector(STILL, learner())
    plain = answer(sel)
    teach(sel, "show tables of my orders database", "get_table_schema")
    assert answer(sel) == plain


def test_forgetting_the_scope_gives_the_answers_back() -> None:
    taught = learner()
    sel = selector(MOVING, taught)
    plain = answer(sel)
    teach(sel, "show tables of my orders database", "get_table_schema")
    assert answer(sel) != plain
    taught.forget("scope")
    assert answer(sel) == plain


def test_feedback_naming_unshown_tools_moves_nothing() -> None:
    taught = learner()
    sel = selector(MOVING, taught)
    plain = answer(sel)
    for _ in range(50):
        ask = Ask(pattern=PATTERN, tools=TOOLS, top_k=1, scope="scope")
        sid = uuid.uuid4().hex
        sel.remember(sid, ask, sel.select(ask), "mallory")
        taught.feedback(sid, ["send_email"])  # never shown at top_k 1
    assert answer(sel) == plain


def test_keyed_terms_keep_the_words_from_a_reader_of_the_store_and_still_learn() -> None:
    """Each pattern word was kept as an unkeyed 8-byte hash: a reader of the store confirmed
    guessed words against a word list. Under ``TOOL_SELECTOR_LEARN_TERMS_KEY`` the kept
    hashes are not the words' plain ones, and the evidence still moves the answer the same
    as unkeyed (the terms compare under one key)."""
    key = terms_key("a secret of this deployment")
    keyed = Learner(learner().store, MOVING.learn, refresh=0.0, terms_key=key)
    sel = selector(MOVING, keyed)
    teach(sel, "show tables of my orders database", "get_table_schema")
    (event,) = {e.search.terms for e in keyed.store.events("scope")[1]}
    words = tokenize("show tables of my orders database")
    assert set(event) == {term_hash(w, key) for w in words}
    assert not set(event) & {term_hash(w) for w in words}
    plain = selector(MOVING, learner())
    teach(plain, "show tables of my orders database", "get_table_schema")
    assert answer(sel) == answer(plain)
    assert pattern_terms("tables", terms_key("")) == pattern_terms("tables")
