"""English words for a request in another language: lookup rules of ``ranking.glossary``."""

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fakes import HashingEncoder, TranslatingEncoder
from tool_selector.pipeline.selector import Selector
from tool_selector.ranking.bm25 import FieldWeights
from tool_selector.ranking.catalog import build_catalog
from tool_selector.ranking.fitted import Rules
from tool_selector.ranking.glossary import (
    GLOSSARY_FILE,
    GLOSSARY_SHA256,
    Glossary,
    default_glossary,
    read_rows,
)
from tool_selector.ranking.ranker import Query
from tool_selector_client.wire import SearchRequest, Tool

SMALL = Glossary.of(
    [
        ("calendar", ["日历", "日曆", "カレンダー", "calendario", "kalender"]),
        ("event", ["事件", "活动", "イベント", "evento", "eventos", "ereignis", "termin"]),
        ("calendar event", ["日历活动"]),
        ("delete", ["删除", "削除", "borrar", "borra", "löschen", "lösche"]),
        ("entry", ["eintrag", "einträge", "entrada"]),
        ("file", ["文件", "archivo", "datei", "datei-"]),
        ("name", ["名称", "nombre", "name"]),
        ("work", ["arbeit"]),
        ("area", ["bereich"]),
        ("stock", ["bolsa"]),
        ("meeting", ["会议", "reunión", "reuniones", "besprechung"]),
        ("today", ["今天", "今日", "hoy", "heute"]),
    ]
)


def test_chinese_and_japanese_forms_are_found_inside_the_sentence_in_order() -> None:
    assert SMALL.gloss("请删除我今天日历里的会议") == ["delete", "today", "calendar", "meeting"]
    assert SMALL.gloss("今日のイベントを削除して") == ["today", "event", "delete"]


def test_the_longest_form_wins_and_forms_do_not_overlap() -> None:
    assert SMALL.gloss("删除日历活动") == ["delete", "calendar event"]


def test_latin_words_match_whole_with_accents_and_case_folded() -> None:
    assert SMALL.gloss("¿Qué REUNIONES tengo hoy?") == ["meeting", "today"]
    assert SMALL.gloss("Lösche den Termin von heute") == ["delete", "event", "today"]
    assert SMALL.gloss("hoyos reunio") == []  # a short word is matched whole or not at all


def test_an_unknown_word_is_read_as_a_compound_of_two_known_parts() -> None:
    assert SMALL.gloss("Kalendereinträge löschen") == ["calendar", "entry", "delete"]
    assert SMALL.gloss("Arbeitsbereich") == ["work", "area"]  # a linking s
    assert SMALL.gloss("Kalenderdienst") == []  # one part unknown: no guess
    assert SMALL.gloss("reembolsa") == []  # "bolsa" ends it, but "reem" is no word


def test_a_stem_reads_the_words_it_starts() -> None:
    assert SMALL.gloss("Dateiname") == ["file", "name"]
    assert SMALL.gloss("Dateiverwaltung") == ["file"]
    assert SMALL.gloss("Kalb") == []


def test_a_known_word_with_an_ending_reads_as_that_word() -> None:
    assert SMALL.gloss("Kalenders Eintrages") == ["calendar", "entry"]
    assert SMALL.gloss("Reuniónes") == ["meeting"]
    assert SMALL.gloss("hoyes") == []  # "hoy": shorter than five letters
    assert SMALL.gloss("Kalenderei") == []  # "ei" is no ending


def test_english_text_and_unknown_words_give_nothing() -> None:
    assert SMALL.gloss("delete the calendar event") == []
    assert SMALL.gloss("") == []


def test_each_english_word_is_given_once() -> None:
    assert SMALL.gloss("hoy hoy heute 今天") == ["today"]


@given(st.text(max_size=400))
def test_any_text_glosses_to_known_english_words(text: str) -> None:
    heads = {"calendar", "event", "calendar event", "delete", "entry", "meeting", "today"}
    heads |= {"file", "name", "work", "area", "stock"}
    words = SMALL.gloss(text)
    assert set(words) <= heads
    assert len(words) == len(set(words))


def test_the_shipped_table_is_read_only_with_its_digest(tmp_path: Path) -> None:
    assert len(read_rows(GLOSSARY_FILE, GLOSSARY_SHA256)) == 920
    edited = tmp_path / "glossary.tsv"
    edited.write_text(GLOSSARY_FILE.read_text(encoding="utf-8") + "extra\t额外\t\t\t\n")
    with pytest.raises(ValueError, match="sha256"):
        read_rows(edited, GLOSSARY_SHA256)
    assert read_rows(edited)[-1] == ("extra", ["额外"])  # no digest asked: read as it is


def test_the_shipped_glossary_reads_common_requests_in_four_languages() -> None:
    glossary = default_glossary()
    for request in ("删除这个文件", "ファイルを削除して", "borra el archivo", "lösche die Datei"):
        words = glossary.gloss(request)
        assert "delete" in words, request
        assert "file" in words, request


CATALOG = [
    Tool(name="delete_file", description="Delete a file from the workspace"),
    Tool(name="create_file", description="Create a new file in the workspace"),
    Tool(name="list_events", description="List the calendar events of a day"),
    Tool(name="send_message", description="Post a message to a Slack channel"),
]


def lexical(pattern: str, glossary: Glossary | None) -> list[str]:
    selector = Selector(encoder=None, glossary=glossary)
    return list(
        selector.select(SearchRequest(pattern=pattern, tools=CATALOG, top_k=2)).ranking.names
    )


@pytest.mark.parametrize(
    ("pattern", "tool"),
    [("请删除这个文件", "delete_file"), ("今日のイベントを一覧して", "list_events"),
     ("borra el archivo de la carpeta", "delete_file"), ("Lösche die Datei bitte", "delete_file")],
    ids=["zh", "ja", "es", "de"],
)  # fmt: skip
def test_a_foreign_request_meets_english_tools_by_its_gloss(pattern: str, tool: str) -> None:
    assert lexical(pattern, default_glossary())[0] == tool
    # without the gloss BM25 cannot meet it: no term of the pattern is in any tool's text
    # (the answer is then the bar's fallback, the first tools by order: never empty)
    catalog = build_catalog(CATALOG, FieldWeights())
    assert not catalog.index.scores(Query.parse(pattern).terms).any()


@given(st.sampled_from(["delete the file", "list events", "create_file", "Slack", "file"]))
def test_an_english_request_ranks_exactly_as_without_the_glossary(pattern: str) -> None:
    assert lexical(pattern, default_glossary()) == lexical(pattern, None)


def test_a_foreign_pattern_that_names_a_tool_is_still_matched_by_its_name() -> None:
    tools = [*CATALOG, Tool(name="删除文件", description="删除工作区里的文件")]
    selector = Selector(encoder=None, glossary=default_glossary())
    ranking = selector.select(SearchRequest(pattern="删除文件", tools=tools, top_k=3)).ranking
    assert ranking.picked[0].name == "删除文件"
    assert ranking.picked[0].reason == "exact_name"  # the gloss joins the terms, not the name


def test_the_gloss_joins_the_english_models_cosines_of_the_arm() -> None:
    arm = TranslatingEncoder({})  # reads no Chinese: the arm's cosines carry nothing here
    selector = Selector(
        encoder=HashingEncoder(), multilingual=arm, glossary=SMALL, embed_deadline=math.inf
    )
    request = SearchRequest(pattern="日历活动", tools=CATALOG, top_k=1)
    blended = selector.select(request)
    alone = Selector(
        encoder=HashingEncoder(),
        multilingual=arm,
        glossary=SMALL,
        embed_deadline=math.inf,
        rules=Rules(gloss_share=0.0),
    ).select(request)
    assert "multilingual" in blended.timings
    assert blended.ranking.names == ["list_events"]
    assert blended.ranking.picked[0].score > alone.ranking.picked[0].score
