"""Tokenisation shared by BM25, name matching and coverage.

Words are split out of identifiers (camelCase, snake_case, kebab, dotted, slashed),
lowercased, and a plural is kept next to its singular from a light stemmer (Harman 1991,
"How effective is suffixing?": ``ies -> y``, ``es -> e``, ``s -> ''`` with its exceptions):
``files`` gives the terms ``files`` and ``file``, so it meets ``file`` in a tool name, and
still meets ``files`` more specifically. The surface form matters between sibling tools:
"list the databases" is worded like a list tool's description ("List all databases"), not
like its singular get-one sibling; stemming alone cost 9 points of BM25 R@1 on azure_mcp
(dev split, 71.2 stemmed only, 80.4 both forms).

Text in any script (``lexical_words``): accents are folded (NFKD, combining marks dropped
after Latin, Greek and Cyrillic letters, then NFC so kana and Hangul recompose) and case
folded, so ``Größe`` meets ``grosse`` and ``café`` meets ``cafe``; scripts written without
spaces between words (Han, kana, Hangul, Thai, Lao, Khmer, Myanmar) are split into
overlapping character bigrams (a lone character stays whole), as Lucene's CJK analyzer
does: ``查询文件`` gives ``查询 询文 文件``, and meets a description holding ``文件``.
Pure-ASCII text is read by ``split_identifier`` alone.

Those n-grams (``is_ngram``) are a BM25 field of their own (``bm25._fields``): a run gives
about one bigram per character, so counted with the words they made a tool described in
Chinese several times longer, and BM25's length normalisation sank its English name words
(livemcpbench, test split, lexical path R@1 26.7 -> 24.6; back to 28.0 as a field).
"""

from __future__ import annotations

import re
import unicodedata
from itertools import pairwise

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[^\W_]+")
#: Stems already computed (plain ``str -> str``: the garbage collector does not track it).
_STEMS: dict[str, str] = {}
_MAX_STEMS = 100_000
#: Words already split (``split_identifier``): the lowercase word, or its camelCase parts
#: joined by spaces (one string: 100,000 camelCase words of 32 characters weigh 25-30 MB).
_SPLITS: dict[str, str] = {}
#: Longer words are stemmed each time: a request may carry words of thousands of characters,
#: and memoising those would let callers fill memory (100,000 x 16 KB).
_MAX_STEM_CHARS = 32

#: Scripts written without spaces between words: Thai, Lao, Myanmar, Khmer, Hangul Jamo,
#: kana, CJK ideographs (and extensions, compatibility forms), Hangul syllables.
UNSEGMENTED = (
    "\u0e00-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u3040-\u30ff\u3130-\u318f"
    "\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002ffff"
)
_RUN = re.compile(f"([{UNSEGMENTED}]+)")
#: Accents: combining diacritical marks after a Latin, Greek, Cyrillic or Armenian letter;
#: marks after other scripts (kana voicing marks, Thai vowels) are kept.
_ACCENTS = re.compile("(?<=[\u0000-\u052f])[\u0300-\u036f]+")

#: English function words that carry no retrieval signal.
STOP_WORDS = frozenset(
    """a an and are as at be but by can could do does for from get give has have how i if in
    into is it its me my of on or our please should so that the their them then there these
    this to us use using want was we what when where which who will with would you your""".split()
)


#: The few words too common to tell tool names apart ("to" in ``Slack_InviteToChannel``);
#: verbs such as ``get`` and ``list`` stay, since they are what separates sibling tools.
NAME_STOP_WORDS = frozenset(
    """a an and are as at be by can do for from how i in is it me my of on or the this to
    what with you your""".split()
)


def stem(word: str) -> str:
    """Harman's S-stemmer: the plural of a (lowercase) word reduced to its singular."""
    if len(word) <= 3 or not word.endswith("s"):
        return word
    if word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    if word.endswith(("us", "ss")):
        return word
    return word[:-1]


def split_identifier(text: str) -> list[str]:
    """Split camelCase, snake_case, kebab, dotted and slashed identifiers into lowercase words.

    Words first, then the camelCase split inside the few words that need it: every camel
    boundary lies between two ASCII letters or digits, so inside one word, and a word with
    no capital after its first letter has none (the camel pattern run over a whole
    description would cost half the time of tokenising a catalog). A text with no capital
    at all is its words as they stand; each other word's split is memoised (``_SPLITS``,
    bounded like the stems: tool vocabularies repeat across tools and catalogs).
    """
    if text.lower() == text:  # no capital: every word is already its own lowercase whole
        return _WORD.findall(text)
    out: list[str] = []
    memo = _SPLITS
    for word in _WORD.findall(text):
        split = memo.get(word)
        if split is None:
            split = _memoised(memo, word, _split_word(word))
        if " " in split:
            out.extend(split.split(" "))
        else:
            out.append(split)
    return out


def _split_word(word: str) -> str:
    """One word of ``split_identifier``: itself lowercased (the word itself when it is
    lowercase), or its camelCase parts lowercased, joined by spaces (a word holds none)."""
    inner = word[1:]
    if inner == inner.lower() or (word.isalpha() and word.isupper()):
        lower = word.lower()
        return word if lower == word else lower
    return " ".join(w.lower() for w in _CAMEL.sub(" ", word).split(" "))


def fold(text: str) -> str:
    """``text`` with accents dropped from Latin, Greek and Cyrillic letters, compatibility
    forms unified (NFKD: full-width Latin letters are ASCII, half-width kana full), then recomposed
    (NFC: kana voicing marks and Hangul syllables kept). ASCII text is returned as is."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFC", _ACCENTS.sub("", unicodedata.normalize("NFKD", text)))


def ngrams(run: str) -> list[str]:
    """Overlapping character bigrams of an unsegmented run (a lone character stays whole)."""
    if len(run) < 2:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def is_ngram(term: str) -> bool:
    """Whether ``term`` is a piece of an unsegmented run (``ngrams``), not a word.

    ``lexical_words`` never mixes the two: a word holds no unsegmented character, and an
    n-gram nothing else, so the first character tells (ASCII is always a word).
    """
    return not term.isascii() and _RUN.match(term) is not None


def lexical_words(text: str) -> list[str]:
    """The words of ``text`` as lexical scoring reads them, in order (module docstring).

    Pure ASCII: ``split_identifier``. Otherwise accents folded (``fold``), words case folded
    (``ß`` is ``ss``), and runs of unsegmented scripts cut into bigrams (``ngrams``).
    """
    if text.isascii():
        return split_identifier(text)
    out: list[str] = []
    for i, piece in enumerate(_RUN.split(fold(text))):
        if i % 2:
            out.extend(ngrams(piece))
        elif piece:
            out.extend(w.casefold() for w in split_identifier(piece))
    return out


def _stem(word: str) -> str:
    """``stem`` through a bounded memo (tool vocabularies repeat across catalogs): at most
    ``_MAX_STEMS`` words of at most ``_MAX_STEM_CHARS`` characters, so a few MB at most."""
    found = _STEMS.get(word)
    return _memoised(_STEMS, word, stem(word)) if found is None else found


def _memoised(memo: dict[str, str], word: str, value: str) -> str:
    """``value``, kept in ``memo`` under ``word`` when the word is at most
    ``_MAX_STEM_CHARS`` long; a memo holding ``_MAX_STEMS`` words is emptied first."""
    if len(word) <= _MAX_STEM_CHARS:
        if len(memo) >= _MAX_STEMS:
            memo.clear()
        memo[word] = value
    return value


def _forms(words: list[str]) -> list[str]:
    """Each word, followed by its singular when the stemmer changes it."""
    out: list[str] = []
    for word in words:
        out.append(word)
        root = _stem(word)
        if root != word:
            out.append(root)
    return out


def terms(text: str) -> list[str]:
    """Words of ``text`` (``lexical_words``) and their singulars, stop words kept: tool names."""
    return _forms(lexical_words(text))


def tokenize(text: str) -> list[str]:
    """Words of ``text`` for lexical scoring: identifiers split, with singulars, no stop words."""
    return _forms([w for w in lexical_words(text) if w not in STOP_WORDS])


def name_words(text: str) -> list[str]:
    """Distinct singular words of ``text`` (identifiers split), name stop words dropped.

    The unit of name matching: a tool's bare name and a pattern are both read this way.
    """
    return list(dict.fromkeys(_name_sequence(text)))


def name_joins(text: str) -> list[tuple[str, str]]:
    """Distinct pairs of words adjacent in ``text`` (name stop words dropped), in order.

    Read before duplicates are dropped, so ``key <key_vault_name>`` still yields
    ``(key, vault)``: a name word spelled as one (``keyvault``) may be said as two.
    """
    words = _name_sequence(text)
    return list(dict.fromkeys(pairwise(words)))


def _name_sequence(text: str) -> list[str]:
    return [_stem(w) for w in lexical_words(text) if w not in NAME_STOP_WORDS]


#: Characters a word is cut to for sub-word evidence (``subword``).
SUBWORD_CHARS = 5


def subword(term: str) -> str:
    """A term cut to its first ``SUBWORD_CHARS`` characters (shorter terms stay whole).

    Truncation stemming: ``configuration`` meets ``config``, ``notifications`` meets
    ``notify``, ``deployment`` meets ``deploy``; weaker evidence than a shared word, read
    only where words say little (``LexicalIndex.subword_coverage``).
    """
    return term[:SUBWORD_CHARS]
