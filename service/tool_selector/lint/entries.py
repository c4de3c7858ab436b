"""Findings on a catalog file's entries, read before anything is ranked: names a search is
refused for (``invalid_name``), entries with no name (``unusable_entry``), and names given
more than once (``duplicate_name``). ``tool-selector lint`` reports them from the file
(``offline.tool_file`` reads it); a request's tools are checked by its decoder instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set

from tool_selector.errors import BadRequest
from tool_selector.pipeline.decoding import check_name
from tool_selector.settings import Settings
from tool_selector_client.catalog_lint import Finding

#: Entries an ``unusable_entry`` finding lists before "and N more".
LISTED = 10


def refused_names(names: Iterable[tuple[str, str]], settings: Settings) -> list[Finding]:
    """An ``invalid_name`` finding for each ``(where, name)`` a search is refused for (``where``
    leads its detail: ``"entry 3: "``, or empty): the
    service's own rule (``decoding.check_name``: not blank, no control character, at most
    ``max_name_chars``), so one such tool makes every search over the catalog a 400."""
    found = []
    for where, name in names:
        try:
            check_name(name, "the name", settings)
        except BadRequest as exc:
            found.append(
                Finding(
                    kind="invalid_name",
                    tools=[name],
                    detail=f"{where}{exc.detail}; the service refuses a search that sends "
                    f"it (400 {exc.code}), so the proxy fails open with every tool; left "
                    "out of this report's probes",
                    fix="rename it: not blank, no control character or line break, at most "
                    f"{settings.max_name_chars} characters (TOOL_SELECTOR_MAX_NAME_CHARS)",
                )
            )
    return found


def unusable_entries(places: Sequence[str]) -> list[Finding]:
    """One ``unusable_entry`` finding for the tool entries that hold no name, each by where
    it is in the file (``entry 2``, ``entry 1, declaration 4``: ``offline.tool_file``)."""
    if not places:
        return []
    listed = "; ".join(places[:LISTED])
    if len(places) > LISTED:
        listed += f" and {len(places) - LISTED} more"
    entries = "tool entry holds" if len(places) == 1 else "tool entries hold"
    return [
        Finding(
            kind="unusable_entry",
            tools=[],
            detail=f"{len(places)} {entries} no name (not an object, or no string name nor "
            f"function.name) and {'is' if len(places) == 1 else 'are'} left out: {listed}",
            fix="give each its name (OpenAI function.name; Anthropic, MCP, Gemini name) or "
            "remove it: the service takes no tool without a name, and no model can call one",
        )
    ]


def repeated_names(repeated: Mapping[str, int], differing: Set[str]) -> list[Finding]:
    """A ``duplicate_name`` finding for each name given more than once (``repeated``: how
    many times; ``differing``: those whose definitions are not all alike)."""
    return [
        Finding(
            kind="duplicate_name",
            tools=[name],
            detail=f"given {times} times"
            + ("; the definitions differ" if name in differing else "")
            + f": the first is linted and the other {times - 1} dropped, as the service "
            "keeps a name's first definition in a request",
            fix="keep one definition of it"
            + ("; if they are different tools, name them apart" if name in differing else ""),
        )
        for name, times in repeated.items()
    ]
