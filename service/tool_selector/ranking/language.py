"""Whether a pattern is written in a language other than English (a cheap, deterministic test).

Decides which patterns the multilingual arm reads (``pipeline/selector.py``): English
patterns must rank exactly as the English model ranks them, so the test leans to English.

- Script: at least ``MIN_FOREIGN_LETTERS`` letters of a script other than Latin (Han, kana,
  Hangul, Thai, Cyrillic, Arabic, Greek, ...) that make at least ``MIN_FOREIGN_SHARE`` of
  the pattern's letters, URLs, paths and dotted names left out. A Chinese sentence that
  names ``GitHub`` or ``https://acme.dev/app.js`` is still Chinese.
- Latin script: function words of Spanish, German, French, Italian, Portuguese, Dutch,
  Polish and Turkish (the Latin-script languages the multilingual model reads), chosen so
  that few are English words an English request would use (no ``an``, ``me``, ``so``,
  ``was``; ``un-archive`` is read whole, hyphens and all), accents folded; and the Spanish
  and German words of the glossary (``ranking/glossary.tsv``: "mueve", "verschiebe",
  "instancias") that are not English tool words nor their plurals (``glossary_forms``),
  counted only beside a function word or a non-ASCII letter (many are English words too:
  "radio", "police", "resume"; the glossary's words are read whether or not the glossary
  itself is on). Foreign when at least two such words outnumber the English function
  words, or one does in a pattern with a non-ASCII letter and no English function word
  (``crea el issue`` reads English-free but one word is too little; ``Größe ändern für
  alle`` is German). With the names out of the share, a mixed pattern can read as foreign
  ("Translate 你好世界 from https://example.com/page": 4 of 17 letters are Chinese once the
  URL is out); no query of the seven sets reads so.

On the seven English benchmark sets no English query reads as foreign
(tests/quality/test_foreign_reading.py); on the hand-written translations of
``eval/multilingual`` every Chinese and Japanese request does, and all but a few
keyword-only Spanish and German ones (docs/quality.md).
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

from tool_selector.ranking.glossary import default_glossary
from tool_selector.ranking.tokenize import STOP_WORDS, fold, stem

#: Fewest non-Latin letters that can make a pattern foreign.
MIN_FOREIGN_LETTERS = 2
#: Smallest share of the pattern's letters they must make.
MIN_FOREIGN_SHARE = 0.2

_LATIN_WORD = re.compile("[^\\W\\d_]+(?:[-'\u2019][^\\W\\d_]+)*")
_LETTER = re.compile(r"[^\W\d_]")
#: URLs, paths, file names, addresses and dotted identifiers (runs of ASCII holding one of
#: ``/.:_@`` before a letter, a digit or ``/``): names, in no language, left out of the share
#: of letters ("获取 https://example.com/pricing 的原始 HTML" is Chinese; a Thai or Chinese run
#: written against "report.pdf" keeps its own letters).
_TOKEN = re.compile("[!-~]+")
_NAME_MARK = re.compile(r"[/.:_@][\w/]")

#: Function words of the Latin-script languages the multilingual model reads, accents
#: folded; the few that English also has (``die``, ``de``) count only beside another.
FOREIGN_WORDS = frozenset(
    """
    el la los las de del en un una unos unas que por para con esta este estos estas esa ese eso
    como cual cuales donde cuando quien hay todos todas mis tus sus nuestro nuestra nuevo
    nueva ultimo ultima ultimos ultimas ahora dame muestrame necesito quiero puedes
    mi tengo tiene tienes hoy manana bien muy pero tambien lo le se al cada otro otra sobre
    entre hasta desde
    der die des dem den das es im als und ist nicht ein eine einen einem einer mit fur auf
    ich mir mich
    bitte alle aus bei von zu zum zur wie welche welcher welches meine meinen meinem mein
    diese diesen dieser oder aber noch schon auch sind wird werden kann konnen soll
    muss gib zeig zeige uber heute gestern jetzt neue neuen letzte letzten vom
    uns unser unsere unseren dass wenn wer ihr sie wir warum wann dieses unter durch nach
    mal dann hier jede jeden jeder ohne zwischen seit morgen
    une pour avec dans sur qui je moi vous nous cette ces
    sont fais peux veux quel quelle quels quelles
    gli della delle dei degli che sono questo questa mio mia puoi voglio
    uma nao pelo pela meu minha voce isso
    het een ik mij mijn niet voor deze kun graag
    nie sie czy dla jak mnie moje
    bir ile icin
    """.split()
)


def reads_foreign(pattern: str) -> bool:
    """Whether ``pattern`` reads as written in a language other than English (module doc)."""
    return _reading(pattern)[0]


def may_be_foreign(pattern: str) -> bool:
    """Whether the relevance bar's English evidence cannot judge ``pattern``: it reads
    foreign (``reads_foreign``), or it holds a function word of another language
    (``FOREIGN_WORDS``) that English function words do not outnumber ("Quali incidenti sono
    aperti su PagerDuty?": one Italian word, no English one; "streich das Standup am
    Donnerstag": one German, one English). ``reads_foreign`` leans to English, for the
    multilingual arm's sake; whether an answer may be empty must not lean with it (SPEC rule
    4: empty only when the pattern has nothing in common with any tool, which English
    evidence cannot tell for another language)."""
    return _reading(pattern)[1]


def _reading(pattern: str) -> tuple[bool, bool]:
    """``(reads_foreign, may_be_foreign)`` of ``pattern``, its words counted once."""
    if pattern.isascii() and not _has_foreign_word(pattern):
        return False, False  # the common case, one scan: English (or keywords) in ASCII
    letters = _LETTER.findall(_TOKEN.sub(_unnamed, pattern))
    other = sum(1 for c in letters if not _latin(c))
    if other >= MIN_FOREIGN_LETTERS and other >= MIN_FOREIGN_SHARE * len(letters):
        return True, True
    words = [w.casefold() for w in _LATIN_WORD.findall(fold(pattern))]
    foreign = sum(1 for w in words if w in FOREIGN_WORDS)
    english = sum(1 for w in words if w in STOP_WORDS)
    leans = foreign >= 1 and foreign >= english
    if foreign or not pattern.isascii():  # glossary words only beside another sign
        forms = glossary_forms()
        foreign += sum(1 for w in words if w in forms)
    reads = (foreign >= 2 and foreign > english) or (
        foreign >= 1 and english == 0 and not pattern.isascii()
    )
    return reads, reads or leans


def _unnamed(token: re.Match[str]) -> str:
    """A run of ASCII (no space) itself, or a space when it is a name (``_NAME_MARK``)."""
    return " " if _NAME_MARK.search(token.group()) else token.group()


@cache
def glossary_forms() -> frozenset[str]:
    """The glossary's Latin-script words (folded) that are neither an English word it
    glosses to, nor such a word's plural, nor an English function word, nor already one of
    ``FOREIGN_WORDS`` (counted once)."""
    glossary = default_glossary()
    english = glossary.english_words() | STOP_WORDS
    return (
        frozenset(w for w in glossary.words if w not in english and stem(w) not in english)
        - FOREIGN_WORDS
    )


def _has_foreign_word(pattern: str) -> bool:
    return any(w.lower() in FOREIGN_WORDS for w in _LATIN_WORD.findall(pattern))


def _latin(char: str) -> bool:
    return char.isascii() or unicodedata.name(char, "").startswith("LATIN")
