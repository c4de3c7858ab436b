"""The words that tell a tool apart from others, as an operator would write them.

Advice names content words: the ones that carry a tool's object or result. A word is left
out of advice when it is

- a function word (``FUNCTION_WORDS``): NLTK's English stop words, as ``bm25s`` ships them
  (``STOPWORDS_EN_PLUS``), the ranker's own stop words (``tokenize.STOP_WORDS``: BM25 drops
  them from every text), and the modal, quantifier, preposition and hedge words NLTK's list
  lacks (``must``, ``either``, ``within``, ``optionally``, ``used``);
- catalog-wide: more than half of the catalog's tools have it (``azure`` on Azure MCP), so
  it tells no tool from most others; Robertson and Spärck Jones' idf,
  ``log((n - df + 0.5) / (df + 0.5))``, is below zero there.

Words are compared by their singular (``tokenize.stem``: ``secrets`` is not apart from
``secret``, BM25 indexes both forms) and named once. The words a tool has and the others
lack are named in this order: its own name's words (its object and action), then words
some tool of the catalog is named with (the catalog's own objects and actions), then the
rest, each tier rarest in the catalog first.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from bm25s.stopwords import STOPWORDS_EN_PLUS

from tool_selector.ranking.text import ToolText
from tool_selector.ranking.tokenize import STOP_WORDS, split_identifier, stem

_WORD = re.compile(r"[^\W_]+")
#: Most words ``apart`` names per tool.
MAX_APART = 6

#: Function words NLTK's list lacks: modal verbs, quantifiers and determiners, prepositions
#: and conjunctions, hedges and connectives, and ``use``'s other forms.
_MORE_FUNCTION_WORDS = """
    must may might shall ought need needs
    either neither each every one ones another several many much various whether whose else
    within without across via per upon among amongst along onto toward towards throughout
    beside besides beyond behind except unless although though whereas since
    optionally optional also already always never often usually otherwise however therefore
    thus instead still yet even ever etc eg ie
    use used uses
"""

#: Words advice never names (see the module).
FUNCTION_WORDS = frozenset(
    {w for w in STOPWORDS_EN_PLUS if "'" not in w} | STOP_WORDS | set(_MORE_FUNCTION_WORDS.split())
)


def tool_words(text: ToolText) -> list[str]:
    """A tool's distinct words in reading order: bare-name words, description, search text
    (lowercase, no stop words, no one-letter words)."""
    raw = split_identifier(text.bare_name)
    for field in (text.description, text.search_text):
        raw += [w.lower() for w in _WORD.findall(field)]
    return list(dict.fromkeys(w for w in raw if len(w) > 1 and w not in STOP_WORDS))


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """A catalog's words as advice reads them (the module): each tool's content words by
    singular, in reading order, how many tools have each, and the words of its names."""

    texts: Sequence[ToolText]
    words: tuple[dict[str, str], ...]
    tools_with: Counter[str]
    named: frozenset[str]

    def content(self, i: int) -> dict[str, str]:
        """Tool ``i``'s content words, singular -> first form, catalog-wide words out."""
        most = len(self.texts) / 2
        return {s: w for s, w in self.words[i].items() if self.tools_with[s] <= most}

    def rank(self, i: int, singulars: Sequence[str]) -> list[str]:
        """``singulars`` of tool ``i`` as advice names them (the module's order)."""
        own = {stem(w) for w in split_identifier(self.texts[i].bare_name)}
        order = {s: k for k, s in enumerate(self.words[i])}

        def key(s: str) -> tuple[int, int, int]:
            tier = 0 if s in own else 1 if s in self.named else 2
            return tier, self.tools_with[s], order[s]

        return [self.words[i][s] for s in sorted(singulars, key=key)]


def vocabulary(texts: Sequence[ToolText]) -> Vocabulary:
    """The catalog's ``Vocabulary``."""
    words = tuple(_singulars(t) for t in texts)
    named = frozenset(stem(w) for t in texts for w in split_identifier(t.bare_name))
    return Vocabulary(texts, words, Counter(s for w in words for s in w), named)


def _singulars(text: ToolText) -> dict[str, str]:
    """A tool's words that are not function words, singular -> first form met."""
    out: dict[str, str] = {}
    for word in tool_words(text):
        if word not in FUNCTION_WORDS and not word.isdigit():
            out.setdefault(stem(word), word)
    return out


def apart(words: Vocabulary, group: Sequence[int]) -> dict[str, list[str]]:
    """Per tool of ``group``, the content words of its text no other tool of the group has,
    as advice names them (the module)."""
    out: dict[str, list[str]] = {}
    for i in group:
        others = {s for j in group if j != i for s in words.words[j]}
        mine = [s for s in words.content(i) if s not in others]
        out[words.texts[i].name] = words.rank(i, mine)[:MAX_APART]
    return out


def quoted(words: Sequence[str]) -> str:
    """``'a', 'b'`` (for fix sentences)."""
    return ", ".join(f"'{w}'" for w in words)
