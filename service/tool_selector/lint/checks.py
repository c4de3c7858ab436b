"""Findings read from the tool texts alone: name collisions and empty or weak text.

Limits from OpenAI's function-calling API (the strictest of the providers the service
reads): a description of at most ``MAX_DESCRIPTION_CHARS`` characters and at most
``MAX_TOOLS_PER_REQUEST`` tools in one request.
"""

from __future__ import annotations

from collections.abc import Sequence

from tool_selector.lint.words import tool_words
from tool_selector.ranking.catalog import normalise_name
from tool_selector.ranking.text import ToolText
from tool_selector.ranking.tokenize import split_identifier
from tool_selector_client.catalog_lint import Finding, FindingKind

MAX_DESCRIPTION_CHARS = 1024
MAX_TOOLS_PER_REQUEST = 128


def collisions(texts: Sequence[ToolText]) -> list[Finding]:
    """Tools whose bare names are the same up to case and separators (``github__search`` and
    ``jira__search``; ``create_issue`` and ``Create-Issue``)."""
    groups: dict[str, list[ToolText]] = {}
    for text in texts:
        groups.setdefault(normalise_name(text.bare_name), []).append(text)
    out = []
    for key, group in groups.items():
        if len(group) < 2:
            continue
        names = [t.name for t in group]
        spaces = {t.namespace for t in group}
        how = (
            f"the bare name '{key}' is exported under {len(spaces)} namespaces"
            if len(spaces) == len(group)
            else "names differing only in case or separators"
        )
        out.append(
            Finding(
                kind="collision",
                tools=names,
                detail=f"{how}: {', '.join(names)}; a proxy that keys tools by bare name keeps "
                "one of them, and a search for the name finds them all",
                fix=f"rename them apart (say what each one's server or object is in the name, "
                f"e.g. '{group[0].namespace or 'server'}_{key}'), or drop the duplicate",
            )
        )
    return out


def weak_text(texts: Sequence[ToolText]) -> list[Finding]:
    """Empty or weak descriptions, undescribed parameters, over-long descriptions, and a
    catalog larger than one provider request may carry."""
    out = [f for t in texts for f in _weak(t)]
    if len(texts) > MAX_TOOLS_PER_REQUEST:
        out.append(
            Finding(
                kind="too_many_tools",
                tools=[],
                detail=f"{len(texts)} tools; OpenAI accepts at most {MAX_TOOLS_PER_REQUEST} "
                "in one request",
                fix="defer them behind the search tool (what this service is for) and send the "
                f"model at most {MAX_TOOLS_PER_REQUEST} at a time",
            )
        )
    return out


def _weak(text: ToolText) -> list[Finding]:
    name, out = text.name, []
    if not text.description:
        out.append(_one("no_description", name, "no description",
                        f"describe what {name} does, on what, in the words a user would ask "
                        "for it with"))  # fmt: skip
    elif _repeats_name(text):
        out.append(_one("description_repeats_name", name,
                        f"the description ('{text.description}') only repeats the name",
                        f"say what {name} does beyond its name: its object, its result, when "
                        "to use it rather than its neighbours"))  # fmt: skip
    if text.param_count and not text.described_params:
        out.append(_one("undescribed_parameters", name,
                        f"none of its {text.param_count} parameters has a description",
                        f"describe each parameter of {name} (what it is, its format); "
                        "parameter descriptions are searched too"))  # fmt: skip
    if len(text.description) > MAX_DESCRIPTION_CHARS:
        out.append(_one("description_too_long", name,
                        f"{len(text.description)}-character description; OpenAI accepts at "
                        f"most {MAX_DESCRIPTION_CHARS}",
                        f"cut the description of {name} to {MAX_DESCRIPTION_CHARS} characters: "
                        "lead with what it does, move examples to search_text"))  # fmt: skip
    return out


def _one(kind: FindingKind, name: str, detail: str, fix: str) -> Finding:
    return Finding(kind=kind, tools=[name], detail=detail, fix=fix)


def _repeats_name(text: ToolText) -> bool:
    """Whether every word of the description is a word of the name."""
    named = set(split_identifier(text.name))
    bare = ToolText(name="", bare_name="", namespace="", description=text.description, params="")
    said = tool_words(bare)
    return bool(said) and set(said) <= named
