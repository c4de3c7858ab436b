"""The English words of the tool glossary (``ranking/glossary.tsv``): the tools' own vocabulary.

Reads the tools of the seven catalogs (``DATASETS``: the six bench sets and
``eval/agent``) and never their requests. A tool gives the words of its bare name
(``split_identifier``) and of its description (``lexical_words``); a word is kept when it is
pure-ASCII alphabetic, at least ``MIN_LETTERS`` letters and not a stop word, read lower-case and
singular (the tokenizer's own ``stem``). Words rank by the number of catalogs that use them,
then by the number of tools, then alphabetically, so the list is deterministic.

Two hand-written constants then shape the glossary's English column (``ranking/GLOSSARY.md``):
``DROPPED`` takes out names, abbreviations, grammatical words and bare inflections of the
counted words, and ``REQUEST_WORDS`` adds words users say in requests that tool descriptions
seldom do (``today``, ``mine``). ``--counted-only`` prints the counted words alone.

    PYTHONPATH=service .venv/bin/python -m tool_selector.offline.glossary_words --top 1000
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from tool_selector.offline.evaluation.dataset import DATASETS, default_bench_dir, load_dataset
from tool_selector.ranking.text import tool_text
from tool_selector.ranking.tokenize import STOP_WORDS, lexical_words, split_identifier, stem
from tool_selector_client.wire import Tool

#: Shortest word kept: two-letter words are abbreviations or function words.
MIN_LETTERS = 3
#: Words printed by default.
DEFAULT_TOP = 1000

#: Dropped by hand from the counted words: names of products, formats and protocols, and
#: abbreviations (kept in a request as they are written); grammatical words (pronouns,
#: auxiliaries, determiners, conjunctions, most prepositions); inflections of a word already
#: listed that add no meaning of their own (``fetching``, ``created``, ``searches``).
DROPPED = frozenset(
    """
    github google microsoft gmail docker kubernetes aws python java android notion postgre git
    hub tube meta net com api url json sql html http csv sms dns gdp markdown datetime etc pre
    non multi auto stat
    not they been being may must cannot such any each other another both either than while
    once whether also only well like via per over through within across along during against
    since instead unless already always same many more most least one two made gets uses out
    about given based including
    fetching searching adding creating retrieving checking generating providing ensuring
    changing starting playing viewing calling working waiting making finding allowing
    containing specifying matching understanding searches matches fetches addresses indexes
    processes returned created updated generated detected provided specified associated
    recommended estimated needed allowed found used sorted stored modified formatted filtered
    """.split()
)

#: Added by hand after the counted words: request words that tools' descriptions rarely use
#: (none is among the 1,000 counted words).
REQUEST_WORDS = (
    "today", "tomorrow", "yesterday", "tonight", "morning", "afternoon", "evening", "week",
    "weekend", "weekly", "minute", "ago", "soon", "later", "mine", "assigned", "appointment",
    "colleague", "boss", "friend", "unread", "urgent", "overdue", "pending", "cheap",
    "cheapest", "expensive", "remind", "reminder", "again", "someone", "everyone",
    "everything", "anything", "birthday", "holiday", "vacation", "lunch", "dinner", "fix",
    "broken", "bug", "crash", "slow", "why", "tell", "lookup", "reservation", "inbox",
    "draft", "done", "finished", "due", "deadline", "nearest",
)  # fmt: skip


def keep(word: str) -> bool:
    """Whether lower-case ``word`` is glossary vocabulary: ASCII letters, 3+, no stop word."""
    return word.isascii() and word.isalpha() and len(word) >= MIN_LETTERS and word not in STOP_WORDS


def tool_words(tool: Tool) -> frozenset[str]:
    """The distinct kept words of a tool's bare name and description, lower-case."""
    text = tool_text(tool)
    words = [*split_identifier(text.bare_name), *lexical_words(text.description)]
    return frozenset(w.lower() for w in words if keep(w.lower()))


@dataclass
class Counts:
    """One catalog's counts: tools using each singular (``stem``), uses of each surface word."""

    tools: Counter[str] = field(default_factory=Counter)
    surfaces: Counter[str] = field(default_factory=Counter)


def catalog_words(tools: Iterable[Tool]) -> Counts:
    """How many tools of one catalog use each singular word, and each word as written."""
    counts = Counts()
    for tool in tools:
        words = tool_words(tool)
        counts.surfaces.update(words)
        counts.tools.update({stem(w) for w in words})
    return counts


def spelling(root: str, surfaces: Counter[str]) -> str:
    """How a singular is printed: itself when tools write it so, else its commonest surface
    (the S-stemmer's ``analysis -> analysi`` is printed ``analysis``)."""
    if surfaces[root] or not any(stem(w) == root for w in surfaces):
        return root
    return min((w for w in surfaces if stem(w) == root), key=lambda w: (-surfaces[w], w))


def rank(catalogs: Sequence[Counts]) -> list[str]:
    """Singulars by catalogs using them, then tools using them (both descending), then alphabet."""
    in_catalogs: Counter[str] = Counter()
    in_tools: Counter[str] = Counter()
    for counts in catalogs:
        in_catalogs.update(counts.tools.keys())
        in_tools.update(counts.tools)
    return sorted(in_catalogs, key=lambda w: (-in_catalogs[w], -in_tools[w], w))


def top_words(catalogs: Sequence[Counts], top: int) -> list[str]:
    """The first ``top`` ranked words as printed (``spelling``), kept words only, distinct."""
    surfaces: Counter[str] = Counter()
    for counts in catalogs:
        surfaces.update(counts.surfaces)
    printed = (spelling(w, surfaces) for w in rank(catalogs))
    return list(dict.fromkeys(w for w in printed if keep(w)))[:top]


def glossary_words(counted: Sequence[str]) -> list[str]:
    """The English column: counted words less ``DROPPED``, then the new ``REQUEST_WORDS``."""
    kept = [w for w in counted if w not in DROPPED]
    return list(dict.fromkeys([*kept, *REQUEST_WORDS]))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--top", type=int, default=DEFAULT_TOP, help="counted words to take")
    parser.add_argument(
        "--counted-only",
        action="store_true",
        help="the counted words alone, nothing dropped or added",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the glossary's English words (or ``--counted-only`` the counted ones), one a line."""
    args = parse_args(argv)
    bench = default_bench_dir()
    catalogs = [catalog_words(load_dataset(bench, name).tools) for name in DATASETS]
    counted = top_words(catalogs, args.top)
    words = counted if args.counted_only else glossary_words(counted)
    sys.stdout.write("".join(f"{w}\n" for w in words))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
