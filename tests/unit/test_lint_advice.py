"""The catalog report's advice: content words only, and sibling findings only where the
ranking lands a tool's own probe on its sibling (synthetic answers, no model)."""

from __future__ import annotations

import numpy as np
import pytest

from tool_selector.lint.probes import Answered, Probe
from tool_selector.lint.siblings import Alike, siblings
from tool_selector.lint.words import FUNCTION_WORDS, apart, vocabulary
from tool_selector.ranking.text import ToolText, tool_text
from tool_selector_client.catalog_lint import Finding, Misled
from tool_selector_client.wire import Tool

#: The words Azure MCP's report told operators to lead with (issue V part 7).
ISSUE_WORDS = ["optionally", "either", "within", "must", "each", "no", "used"]

REGISTRIES = "List the container registries of a subscription."
KIT = [
    ("acr_registry_list", REGISTRIES + " Optionally filter each by group, within azure."),
    ("acr_registry_repository_list", "List repositories of container registries."),
    ("acr_registry_delete", "Delete a container registry; it must be used by no one."),
    *[(f"azure_tool_{i}", f"Azure thing number {i}.") for i in range(3)],
]


def texts(rows: list[tuple[str, str]] = KIT) -> list[ToolText]:
    return [tool_text(Tool(name=n, description=d)) for n, d in rows]


def alike(*groups: list[int]) -> Alike:
    ones = np.ones((len(KIT), len(KIT)), dtype=np.float32)
    return Alike(list(groups), ones, ones)


def answer(tool: int, names: tuple[str, ...], source: str = "description") -> Answered:
    return Answered(Probe(tool, source, f"probe {tool} {source}"), KIT[tool][0], names)


def found(*answers: Answered, groups: tuple[list[int], ...] = ([0, 1, 2],)) -> list[Finding]:
    catalog = texts()
    return siblings(catalog, alike(*groups), vocabulary(catalog), answers, 5)


@pytest.mark.parametrize("word", [*ISSUE_WORDS, "the", "of", "get", "might", "via"])
def test_function_words_are_never_advice(word: str) -> None:
    assert word in FUNCTION_WORDS


def test_advice_names_no_function_word_and_no_catalog_wide_word() -> None:
    # 'azure' is in 4 of the 6 tools, and in one of the three siblings
    named = apart(vocabulary(texts()), [0, 1, 2])
    assert not {w for ws in named.values() for w in ws} & {*FUNCTION_WORDS, "azure"}
    assert named["acr_registry_list"] == ["subscription", "filter", "group"]


def test_a_word_is_compared_by_its_singular_and_name_words_lead() -> None:
    catalog = texts([("kv_secret_get", "Get one secret."), ("kv_secret_list", "Lists secrets.")])
    assert apart(vocabulary(catalog), [0, 1]) == {"kv_secret_get": [], "kv_secret_list": ["list"]}


def test_siblings_never_confused_make_no_finding() -> None:
    own_first = [answer(0, ("acr_registry_list", "acr_registry_repository_list")),
                 answer(1, ("acr_registry_repository_list", "acr_registry_list"))]  # fmt: skip
    assert found(*own_first) == []


def test_a_probe_answered_with_a_sibling_first_makes_a_finding_naming_it() -> None:
    [finding] = found(answer(0, ("acr_registry_repository_list", "acr_registry_list")))
    assert finding.tools == ["acr_registry_list", "acr_registry_repository_list"]
    probe = Misled("acr_registry_list", "description", "probe 0 description",
                   "acr_registry_repository_list", 2)  # fmt: skip
    assert finding.misled == [probe]
    assert "'probe 0 description' of acr_registry_list" in finding.detail


def test_a_tool_missing_from_its_probes_answer_is_misled_with_no_rank() -> None:
    [finding] = found(answer(1, ("acr_registry_delete", "azure_tool_0")))
    assert [(m.answered, m.rank) for m in finding.misled] == [("acr_registry_delete", None)]


def test_a_parameter_probe_landing_on_a_sibling_is_not_a_confusion() -> None:
    takes = answer(1, ("acr_registry_list", "acr_registry_repository_list"), source="parameter")
    assert found(takes) == []


def test_a_tool_outside_the_group_is_not_a_sibling() -> None:
    assert found(answer(0, ("azure_tool_0", "acr_registry_list"))) == []


def test_findings_are_ranked_by_what_they_cost() -> None:
    one = answer(0, ("acr_registry_repository_list", "acr_registry_list"))
    two = [answer(2, ("azure_tool_0", "azure_tool_1")),
           answer(3, ("acr_registry_delete", "azure_tool_0"), source="name"),
           answer(2, ("azure_tool_1", "acr_registry_delete"), source="search_text")]  # fmt: skip
    findings = found(one, *two, groups=([0, 1], [2, 3, 4]))
    assert [f.tools for f in findings] == [
        ["acr_registry_delete", "azure_tool_0", "azure_tool_1"],
        ["acr_registry_list", "acr_registry_repository_list"],
    ]
    assert [m.rank for m in findings[0].misled] == [None, 2, 2]
