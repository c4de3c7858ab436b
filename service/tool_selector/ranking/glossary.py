"""English words for a request in another language: a glossary of the words tools use.

Tools are described in English; a request in Chinese, Japanese, Spanish or German shares
almost no word with them, so BM25 and the English model cannot meet it. ``glossary.tsv``
(beside this module; its provenance in ``GLOSSARY.md``) lists the words of tool names and
descriptions, with the forms a user types in each of those languages. ``gloss`` looks a
request's words up and returns the English words found, in message order, each once; the
selector ranks a non-English request on the request followed by its gloss
(``pipeline/selector.py``), so BM25, the exact-name rule and the model read the English
words too.

Lookup: forms in an unsegmented script (Chinese, Japanese) and forms of several words
("base de datos") are found anywhere in the text, longest first, without overlap (one
regular expression each, longest alternatives first; the Latin ones on whole words of the
folded text); other Latin-script forms are whole words, accents and case folded
(``tokenize.fold``); an unknown word is read as a compound of two known parts
("Kalendereinträge": "kalender" and "eintrage"; "Arbeitsbereich": "arbeit", a linking
"s", "bereich"), else by a stem it starts with: a form ending in ``-`` ("datei-": a German
noun as compounds begin with it, "Dateiname"), else as a known word of five letters or more
with a German or Spanish ending after it ("beliebtesten": "beliebte" and "sten"). A form
listed under several English words (获取: retrieve, fetch, obtain) glosses to all of them.
"Unsegmented" is the tokenizer's ``UNSEGMENTED`` (the scripts it cuts into bigrams).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tool_selector.ranking.tokenize import UNSEGMENTED, fold

GLOSSARY_FILE = Path(__file__).with_name("glossary.tsv")
#: sha256 of the shipped ``glossary.tsv`` (GLOSSARY.md), checked when it is read: an edited
#: or damaged table stops the service at start-up instead of ranking with other words.
GLOSSARY_SHA256 = "ada3f9e303c01c5326c46a10f30c1301349f61ef6e6146a31ec5fdbce2975cf1"
#: Shortest known part a compound is read by (the first may lose a linking ``s`` after).
MIN_PART_CHARS = 4
#: Latin-script forms never looked up: shorter than this, or one of ``FUNCTION_FORMS``
#: (folded, a form may become a function word: "sé", I know, is "se").
MIN_FORM_CHARS = 3
#: Articles, pronouns and possessives of Spanish and German that a form may fold to or be.
FUNCTION_FORMS = frozenset(
    """los las les mis tus sus mio mia mios mias nos una uno unos unas del con por para que
    der die das den dem des ein eine einen einem einer mein meine meinen dein deine sein
    seine ihr ihre uns""".split()
)
#: Shortest known word an inflected word is read by (``_inflected``).
MIN_INFLECTED_CHARS = 5
#: German and Spanish endings after a known word (adjective, plural, superlative).
ENDINGS = frozenset("e en er es em n s st ste sten ster stes est este esten ester estes".split())
#: Longer words are not read as compounds (a token, a blob): bounded work per word.
MAX_COMPOUND_CHARS = 40
_LATIN_WORD = re.compile(f"[^\\W\\d_{UNSEGMENTED}]+")
_UNSEGMENTED = re.compile(f"[{UNSEGMENTED}]")


Words = dict[str, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class Glossary:
    """Foreign forms to English words: ``words`` (whole folded Latin words), ``stems``
    (folded word starts), and ``phrases`` (unsegmented forms, and Latin forms of several
    words, folded) found by one expression each (``_matcher``)."""

    words: Words
    stems: Words
    phrases: Words
    unsegmented: re.Pattern[str] | None
    several: re.Pattern[str] | None

    @classmethod
    def of(cls, rows: Iterable[tuple[str, list[str]]]) -> Glossary:
        """From ``(english, forms)`` rows."""
        words: dict[str, list[str]] = {}
        stems: dict[str, list[str]] = {}
        phrases: dict[str, list[str]] = {}
        for head, forms in rows:
            for form in forms:
                key = form if _UNSEGMENTED.search(form) else _key(form)
                if not _looked_up(key):
                    continue
                kind = phrases if " " in key or _UNSEGMENTED.search(key) else words
                if key.endswith("-") and len(key) > MIN_PART_CHARS:
                    kind, key = stems, key[:-1]
                kind.setdefault(key, []).append(head)
        cjk = [f for f in phrases if _UNSEGMENTED.search(f)]
        latin = [f for f in phrases if not _UNSEGMENTED.search(f)]
        return cls(
            _unique(words), _unique(stems), _unique(phrases), _matcher(cjk), _matcher(latin, r"\b")
        )

    def english_words(self) -> frozenset[str]:
        """Every English word the glossary glosses to (the words of its first column)."""
        tables = (self.words, self.stems, self.phrases)
        return frozenset(
            w for t in tables for heads in t.values() for h in heads for w in h.split()
        )

    def gloss(self, text: str) -> list[str]:
        """The English words of ``text``'s known forms, in message order, each once."""
        found: list[tuple[int, str]] = []
        if self.unsegmented is not None and _UNSEGMENTED.search(text):
            for m in self.unsegmented.finditer(text):
                found += [(m.start(), w) for w in self.phrases[m.group()]]
        folded = _key(text)
        if self.several is not None:
            for m in self.several.finditer(folded):
                found += [(m.start(), w) for w in self.phrases[m.group()]]
        for m in _LATIN_WORD.finditer(folded):
            found += [(m.start(), word) for word in self._word(m.group())]
        return list(dict.fromkeys(word for _, word in sorted(found, key=lambda f: f[0])))

    def _word(self, key: str) -> tuple[str, ...]:
        """The English words of one folded word: itself, else as a compound of two known
        parts (a linking ``s`` allowed: "arbeitsbereich"), else by a stem it starts with,
        else as a known word with an ending (``_inflected``)."""
        if key in self.words:
            return self.words[key]
        if len(key) > MAX_COMPOUND_CHARS:
            return ()
        for n in range(len(key) - MIN_PART_CHARS, MIN_PART_CHARS - 1, -1):
            first = self._start(key[:n])
            last = self.words.get(key[n:], ())
            if first and last:
                return tuple(dict.fromkeys((*first, *last)))
        starts = (key[:n] for n in range(len(key), MIN_PART_CHARS - 1, -1))
        stem = next((self.stems[s] for s in starts if s in self.stems), ())
        return stem or self._inflected(key)

    def _inflected(self, key: str) -> tuple[str, ...]:
        """A known word of ``MIN_INFLECTED_CHARS`` or more followed by an ending of
        ``ENDINGS`` ("beliebtesten": "beliebte" + "sten"), longest word first."""
        for n in range(len(key) - 1, MIN_INFLECTED_CHARS - 1, -1):
            if key[n:] in ENDINGS and key[:n] in self.words:
                return self.words[key[:n]]
        return ()

    def _start(self, part: str) -> tuple[str, ...]:
        """The English words of a compound's first part: a word or a stem, maybe with a
        linking ``s``."""
        for key in (part, part[:-1] if part.endswith("s") else ""):
            found = self.words.get(key) or self.stems.get(key)
            if found:
                return found
        return ()


def _key(form: str) -> str:
    return fold(form).casefold()


def _looked_up(key: str) -> bool:
    """Whether a (folded) form is looked up: see ``MIN_FORM_CHARS``."""
    if _UNSEGMENTED.search(key) or " " in key:
        return True
    return len(key.rstrip("-")) >= MIN_FORM_CHARS and key not in FUNCTION_FORMS


def _unique(table: dict[str, list[str]]) -> Words:
    return {form: tuple(dict.fromkeys(heads)) for form, heads in table.items()}


def _matcher(forms: list[str], edge: str = "") -> re.Pattern[str] | None:
    """One expression finding any of ``forms``, longest first (``edge``: at word bounds)."""
    if not forms:
        return None
    ordered = sorted(forms, key=lambda f: (-len(f), f))
    return re.compile(f"{edge}(?:{'|'.join(map(re.escape, ordered))}){edge}")


def read_rows(path: Path, sha256: str | None = None) -> list[tuple[str, list[str]]]:
    """``(english, forms)`` of each line of a glossary file (``#`` lines are comments);
    ``sha256``: the file's expected digest (``ValueError`` when it differs)."""
    data = path.read_bytes()
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise ValueError(
            f"{path} is not the glossary this version ships (sha256 {sha256[:16]}...): "
            "reinstall, or regenerate it and its digest as GLOSSARY.md says"
        )
    rows = []
    for line in data.decode("utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            head, *cells = line.split("\t")
            forms = [f.strip() for cell in cells for f in cell.split("|") if f.strip()]
            rows.append((head.strip(), forms))
    return rows


@cache
def default_glossary() -> Glossary:
    """The glossary shipped beside this module, read once, its digest checked."""
    return Glossary.of(read_rows(GLOSSARY_FILE, GLOSSARY_SHA256))
