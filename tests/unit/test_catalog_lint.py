"""The catalog report: planted faults found, well-written tools left alone, search-only text."""

from __future__ import annotations

import math
from collections.abc import Callable

import msgspec
import pytest

from tool_selector.embeddings.encoder import Encoder
from tool_selector.embeddings.factory import encoder_from_settings
from tool_selector.lint import checks
from tool_selector.lint.probes import first_sentence, probes_of
from tool_selector.lint.report import lint, render_text
from tool_selector.lint.siblings import alike
from tool_selector.lru import BoundedLRU
from tool_selector.pipeline.ask import ToolSource
from tool_selector.pipeline.catalog_store import CatalogStore
from tool_selector.pipeline.selector import Selector
from tool_selector.ranking.text import tool_text
from tool_selector.settings import Settings
from tool_selector_client.catalog_lint import Finding, LintReport, ProbeRecall
from tool_selector_client.wire import Tool

SEARCHES = {
    "github__search": "Search GitHub repositories, issues and pull requests.",
    "slack__search": "Search Slack messages across channels.",
    "drive__search": "Search files and folders in Google Drive.",
    "notion__search": "Search Notion pages and databases.",
    "web__search": "Search the web and return result pages.",
    "confluence__search": "Search Confluence wiki spaces and pages.",
    "jira__search": "",  # planted: no description, a bare name six other servers export
    "weather__get_forecast": "Get the weather forecast for a city for the next days.",
    "calendar__create_event": "Create an event in the user's calendar with a title and time.",
}
PLANTED, UNIQUE = "jira__search", "weather__get_forecast"
#: What a tool none of whose own probes found is flagged as: ``unreachable``, or ``name_only``
#: when only its name's words did (the planted tool has no other probe; whether "jira search"
#: ranks it in the top 5 among seven search tools is the model's call).
UNFOUND = ("unreachable", "name_only")
JIRA_TEXT = "Search Jira issues and tickets by project, assignee, status or JQL."


def catalog(search_text: str | None = None) -> list[Tool]:
    return [
        Tool(name=n, description=d or None, search_text=search_text if n == PLANTED else None)
        for n, d in SEARCHES.items()
    ]


@pytest.fixture(scope="module")
def encoder() -> Encoder:
    model = encoder_from_settings(Settings())
    assert model is not None
    return model


@pytest.fixture(scope="module")
def linted(encoder: Encoder) -> Callable[[list[Tool]], LintReport]:
    def run(tools: list[Tool]) -> LintReport:
        selector = Selector(encoder=encoder, catalogs=CatalogStore(10_000),
                            queries=BoundedLRU(1_000), embed_deadline=math.inf)  # fmt: skip
        return lint(selector, ToolSource.of(tools), every=True)

    return run


def flagged(report: LintReport, *kinds: str) -> set[str]:
    return {t for f in report.findings if f.kind in kinds for t in f.tools}


def test_a_planted_tool_is_unreachable_and_collides(linted: Callable[..., LintReport]) -> None:
    report = linted(catalog())
    assert PLANTED in flagged(report, *UNFOUND) & flagged(report, "collision")


def test_a_well_described_unique_tool_is_not_flagged(linted: Callable[..., LintReport]) -> None:
    report = linted(catalog())
    assert not any(UNIQUE in f.tools for f in report.findings)


def test_the_unreachable_finding_names_who_took_its_place(
    linted: Callable[..., LintReport],
) -> None:
    finding = next(f for f in linted(catalog()).findings if f.kind in UNFOUND)
    assert finding.displaced_by
    assert set(finding.displaced_by) <= set(SEARCHES) - {PLANTED}


def test_search_text_makes_the_planted_tool_reachable(linted: Callable[..., LintReport]) -> None:
    before, after = linted(catalog()), linted(catalog(JIRA_TEXT))
    assert PLANTED in flagged(before, *UNFOUND)
    assert PLANTED not in flagged(after, *UNFOUND)
    assert after.recall.found > before.recall.found  # its description's probe finds it


@pytest.mark.parametrize(
    ("tool", "kind"),
    [
        (Tool(name="get_user"), "no_description"),
        (Tool(name="get_user", description="Get user."), "description_repeats_name"),
        (Tool(name="f", description="Find rows.", definition={"name": "f", "parameters": {
            "type": "object", "properties": {"q": {"type": "string"}}}}),
         "undescribed_parameters"),
        (Tool(name="f", description="Find rows. " * 120), "description_too_long"),
    ],
    ids=["empty", "repeats-name", "undescribed-params", "too-long"],
)  # fmt: skip
def test_weak_text_is_reported(tool: Tool, kind: str) -> None:
    assert [f.kind for f in checks.weak_text([tool_text(tool)])] == [kind]


def test_more_tools_than_a_request_takes_is_reported() -> None:
    tools = [tool_text(Tool(name=f"t{i}", description=f"Tool number {i}.")) for i in range(129)]
    assert [f.kind for f in checks.weak_text(tools)] == ["too_many_tools"]


@pytest.mark.parametrize(
    ("names", "collide"),
    [
        (["a__create_issue", "b__create_issue"], True),
        (["create_issue", "Create-Issue"], True),
        (["create_issue", "close_issue"], False),
    ],
    ids=["namespaces", "case-separators", "distinct"],
)
def test_collisions(names: list[str], collide: bool) -> None:
    texts = [tool_text(Tool(name=n, description="Does a thing.")) for n in names]
    assert bool(checks.collisions(texts)) is collide


def test_probes_are_first_sentences_required_parameters_then_name_words() -> None:
    schema = {"type": "object", "required": ["vault"], "properties": {
        "vault": {"type": "string", "description": "Name of the key vault"},
        "tenant": {"type": "string", "description": "Tenant id"}}}  # fmt: skip
    tool = Tool(name="keyvault_secret_get", description="Get a secret. Returns its value.",
                definition={"name": "keyvault_secret_get", "parameters": schema},
                search_text="read a password from Azure Key Vault")  # fmt: skip
    probes = [(p.source, p.text) for p in probes_of([tool_text(tool)])]
    assert probes == [
        ("description", "Get a secret."),
        ("search_text", "read a password from Azure Key Vault"),
        ("parameter", "Name of the key vault"),
        ("name", "keyvault secret get"),
    ]


@pytest.mark.parametrize(
    ("text", "first"),
    [("Get a secret. Returns it.", "Get a secret."), ("List\nmore", "List"), ("", "")],
    ids=["period", "newline", "empty"],
)
def test_first_sentence(text: str, first: str) -> None:
    assert first_sentence(text) == first


def tickets(open_text: str) -> list[Tool]:
    """Two support-ticket finders alike to both arms, the open-ticket one described by
    ``open_text``."""
    return [
        Tool(name="tickets_find_open", description=open_text),
        Tool(name="tickets_find", description="Find support tickets."),
        *catalog()[-2:],
    ]


def test_siblings_the_ranker_confuses_come_with_the_probe_and_the_words_apart(
    linted: Callable[..., LintReport],
) -> None:
    group = next(f for f in linted(tickets("Find support tickets. Open ones.")).findings
                 if f.kind == "siblings")  # fmt: skip
    assert group.tools == ["tickets_find_open", "tickets_find"]
    misled = [(m.tool, m.source, m.probe, m.answered, m.rank) for m in group.misled]
    assert misled == [
        ("tickets_find_open", "description", "Find support tickets.", "tickets_find", 2)
    ]
    # every word of the finder's text is the open-ticket finder's too
    assert group.apart == {"tickets_find_open": ["open"], "tickets_find": []}
    assert group.fix.startswith("tickets_find: no word of its text is its own")


def test_siblings_the_ranker_tells_apart_make_no_finding(encoder: Encoder) -> None:
    selector = Selector(encoder=encoder, catalogs=CatalogStore(10_000),
                        queries=BoundedLRU(1_000), embed_deadline=math.inf)  # fmt: skip
    report = lint(selector, ToolSource.of(tickets("Find support tickets that are open.")))
    entry = selector.catalogs.get(report.catalog)
    assert entry is not None
    matrix = entry.matrix(encoder.model_id)
    assert alike(entry.catalog.texts, entry.catalog.index, matrix).groups == [[0, 1]]
    assert not flagged(report, "siblings")


def test_a_tool_only_its_name_finds_is_reported(linted: Callable[..., LintReport]) -> None:
    tools = [*catalog()[-2:], Tool(name="zq_tool", description="Does things with stuff.")]
    tools += [Tool(name=f"stuff_{i}", description=f"Does things with stuff {i}.") for i in range(6)]
    assert "zq_tool" in flagged(linted(tools), "name_only")


def test_the_text_report_says_each_finding_with_its_fix(
    linted: Callable[..., LintReport],
) -> None:
    report = linted(catalog())
    text = render_text(report)
    (kind,) = {f.kind for f in report.findings if f.kind in UNFOUND and PLANTED in f.tools}
    assert f"[{kind}] {PLANTED}" in text
    assert text.count("  fix: ") == len(linted(catalog()).findings)


def test_search_text_absent_leaves_the_tool_text_unchanged() -> None:
    plain = Tool(name="send_mail", description="Send an email.")
    assert tool_text(plain) == tool_text(msgspec.structs.replace(plain, search_text=None))
    with_text = tool_text(msgspec.structs.replace(plain, search_text="post a letter"))
    assert with_text.dense_text() == tool_text(plain).dense_text() + ". post a letter"


def test_catalogs_differing_only_in_search_text_are_cached_apart() -> None:
    selector = Selector(catalogs=CatalogStore(100))
    plain = [Tool(name="send_mail", description="Send an email.")]
    keys = {
        selector.entry(ToolSource.of(tools)).key
        for tools in (plain, [msgspec.structs.replace(plain[0], search_text="post a letter")])
    }
    assert (len(keys), len(selector.catalogs)) == (2, 2)


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("rm_\u202egpj.exe", "rm_\\u202egpj.exe"),  # a right-to-left override: reads "exe.jpg"
        ("send\u200bmail", "send\\u200bmail"),  # zero-width space: reads "sendmail"
        ("red\x1b[31m", "red\\x1b[31m"),  # a terminal colour
        ("tab\tname\u2028x", "tab\\tname\\u2028x"),
        ("café_ü", "café_ü"),  # printable: as it is
    ],
    ids=["bidi", "zero-width", "escape", "tab-separator", "printable"],
)
def test_the_text_report_shows_invisible_characters_as_escapes(name: str, shown: str) -> None:
    """They were written as they are: a name with U+202E read reversed in a terminal."""
    finding = Finding(kind="no_description", tools=[name], detail=f"{name}: none", fix="fix")
    report = LintReport(
        catalog="k", tools=1, ranking="lexical", top_k=5,
        recall=ProbeRecall(1, 1, 1, 1), findings=[finding],
    )  # fmt: skip
    text = render_text(report)
    assert f"[no_description] {shown}\n  {shown}: none\n" in text
    assert text.replace("\n", "").isprintable()
