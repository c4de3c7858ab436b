"""What a scope's model did with a catalog's tools (learned feedback): each tool's shown and
called counts, and the findings they make.

- ``never_called``: shown ``SHOWN_OFTEN`` times or more and never called: the model reads its
  definition and passes it by (it promises what it does not do, or a sibling serves better);
- ``after_retry``: called ``CALLED_OFTEN`` times or more, each time only after the model had
  searched again (its first search found nothing it called): the first search's words are
  missing from it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tool_selector.learning.learner import Usage
from tool_selector.ranking.learned import tool_identity
from tool_selector.ranking.text import ToolText
from tool_selector_client.catalog_lint import Finding, ToolUse

SHOWN_OFTEN = 20
CALLED_OFTEN = 3


def tool_uses(texts: Sequence[ToolText], usage: Mapping[str, Usage]) -> list[ToolUse]:
    """Each catalog tool the scope's feedback saw, most shown first."""
    found = []
    for t in texts:
        use = usage.get(tool_identity(t.name, t.description))
        if use is not None:
            found.append(ToolUse(t.name, use.shown, use.called, use.retried))
    return sorted(found, key=lambda u: (-u.shown, u.name))


#: Each finding's fix.
FIXES = {
    "never_called": "the model reads its definition and passes it by: say what it does and "
    "when to use it (or leave it out with a filter if it is never wanted)",
    "after_retry": "the first searches miss it: add the words they use to its description "
    "or search_text",
}


def usage_findings(uses: Sequence[ToolUse]) -> list[Finding]:
    """The ``never_called`` and ``after_retry`` findings (the module)."""
    out = []
    for u in uses:
        if u.shown >= SHOWN_OFTEN and not u.called:
            detail = f"shown in {u.shown} answers of this scope, never called"
            out.append(Finding("never_called", [u.name], detail, FIXES["never_called"]))
        elif u.called >= CALLED_OFTEN and u.after_retry == u.called:
            detail = f"called {u.called} times, each after the model searched again"
            out.append(Finding("after_retry", [u.name], detail, FIXES["after_retry"]))
    return out
