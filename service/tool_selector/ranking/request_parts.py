"""The request inside a long message: the parts written to the assistant, not the paste.

One proxy line sends the user's whole last message as the search (``query``): a request
stated once, before, after or in the middle of a pasted log, a stack trace, code, a table,
JSON or a document. A positional cut (first and last characters) loses a request in the
middle; ranking the whole message ranks the paste. So a long message is split into parts
(lines; a line longer than ``LINE_CHARS``, into sentences), each part is read as written
*to* the assistant or pasted, and the pattern ranked is the request parts alone, in message
order (``request_pattern``).

Reading a part, in two steps:

- **pasted** (not a part at all): the shapes of machine text. A log line (a timestamp or a
  level first; an access log's client IP or host first, nginx and Apache; syslog's
  ``Nov 27 10:00:01``; epoch seconds; ``key=value`` pairs, logfmt; JSON lines), a
  stack-trace line (``at a.b(C.java:1)``, ``File "x.py", line 3``,
  ``Traceback``, ``Caused by:``, ``... 42 more``, ``ValueError:``), code and configuration
  (indented four spaces or a tab, comments, statements, ``key: value``), JSON, XML and
  HTML, a Markdown table row or rule, a bold heading, a quoted line (``>``), a shell
  prompt, a line of URLs only, a quoted e-mail's ``On ... wrote:``, CSV or TSV fields
  (a number's thousands separators are not fields: "$2,000,000, equity of $10,000,000"
  is a sentence), a base64 or hex run, and a line whose template (digits as one mark)
  comes ``REPEATS`` times (a log, a generated list). A sentence whose words are mostly not
  plain words (identifiers, paths; money, versions, dates and times are plain) scores 0.
- **written to the assistant** (``request_score``): a question, by its mark or its first
  word (+2); asking words, "please", "can you", "I need", "I'm looking for", "help me",
  "my actual question:", "TL;DR:" (+2); an imperative first, from a list of request verbs
  or by its shape, a base-form word before an object ("scrap the standup") (+2; the verbs
  documents start their own steps with, "run", "set", "see", "use", +1), also after up to
  two short openings ("Unrelated to that log, my actual question: translate ...", "btw
  order ..."); the first or second person (+1). The way documentation speaks to its
  reader, "you can", "if you", "make sure", -2; inline code -1. In a line read as
  sentences, a plain sentence right after a request sentence is its detail and scores
  ``REQUEST_SCORE``.

A tag that opens the message's first or last line (a ticket id, a marker, a mention, a
channel: "[JIRA-123] Get the ...", "(urgent) Find ...", "@bot compute ...") is read past:
that line is read, scored and ranked as the words after it, and a tag whose first mark is
a shape of machine text ("[", "#", "<") no longer makes the line look pasted. The message's
edges are where the sender writes; a tagged line in the middle is read as before (a ticket
list's "[PROJ-12] Add retry ..." is the paste's, not the request).

A part scoring ``REQUEST_SCORE`` or more is a request part. When the message has none, its
own words stand in (``prose_pattern``): every prose part when together they fit
``PROSE_CHARS``, else the first and the last, the words the sender wrote before and after
the paste (a request nothing here reads as one, "Refund payment pi_3Nq8 in Stripe", sits
there; ``find_pattern`` reads the message's parts once for both), leaving out the lines
that only introduce a paste ("Here is the log:") when anything else is left: the finder,
unsure, ranks the candidates it has rather than dropping them, without the ones that are
surely not the need.
``read_message`` says which reading gave the pattern (``PatternKind``: counted by the
service and written in its search log line). Only a message with no
prose at all keeps the caller's positional cut (``None`` here), whose windows of pasted
text cost the embedding model five times as much. The pasted parts are not ranked at all:
they are what the request refers to, not the need, and ranked they pull the answer towards
log- or document-flavoured tools.

Bounded work: one regular-expression scan of the whole message finds the lines that are not
machine text by their start (in C, not a Python loop over every line); only those are read
further, each distinct line once (a tag on the first or last line adds one literal search
for the lines alike); and the pattern holds at most ``budget`` characters (the best parts
first, then restored to message order), so the embedding model reads a fixed number of
windows whatever the message's length. Words are read in English; a sentence in
Chinese, Japanese or Korean (``CJK_CHARS`` of their characters) is a request when it asks
(a question mark, "please", a question particle); in other languages a sentence is read
with the English cues only, so it is mostly ranked as the sender's own prose.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from dataclasses import dataclass
from typing import Literal, get_args

from tool_selector.ranking.checkpoints import checkpoint

#: Most characters of request parts ranked: what the model reads at once (one window).
REQUEST_CHARS = 1000
#: Most characters of the message's own words ranked when no part reads as a request
#: (``prose_pattern``): one short window, not the positional cut's five.
PROSE_CHARS = 600
#: A part scoring this much or more was written to the assistant.
REQUEST_SCORE = 2
#: A longer sentence is never read as a request (a blob, minified code, a dump).
MAX_PART_CHARS = 1000
#: Share of a part's words that must be plain words (letters, numbers, punctuation).
MIN_PLAIN_SHARE = 0.6
#: A line up to this long is one part (a request with its details); a longer one is split
#: into sentences.
LINE_CHARS = 300
#: A line whose template (digits as one mark) comes this often is machine output: a log
#: ("step 00017: compiled unit 17 in 0.8s"), a generated list.
REPEATS = 3
_DIGITS = re.compile(r"\d+")
#: Lines or sentences read between two checkpoints (``checkpoints``: an abandoned request's
#: reading of a message of megabytes stops there).
CHECK_EVERY = 256
#: How much of a line the shape checks read (all of them look at its start).
_HEAD = 200

_TIMESTAMP = r"\[?\(?(?:\d{4}[-/.]\d{2}[-/.]\d{2}|\d{2}[-/.]\d{2}[-/.]\d{2,4})[T _]?"
_DAYS = "Mon|Tue|Wed|Thu|Fri|Sat|Sun"
_MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
_LEVELS = r"(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|FATAL|CRITICAL|SEVERE|PANIC)"
#: A code statement's first word.
_KEYWORD = (
    r"(?:def|class|import|from|return|function|const|let|var|public|private|if|for|"
    r"while|elif|else|try|except|catch|SELECT|INSERT|UPDATE|CREATE TABLE)\b"
)
#: A code statement: its first word, then no sentence end before a ``:;{(=`` that ends a
#: line (``_Statements`` reads the same across a whole message, in one pass).
_STATEMENT = rf"{_KEYWORD}[^.!?]*[:;{{(=]\s*$"
#: A line of URLs only. Its blanks hold no line break: with ``\s`` there (as before), a
#: line of "www.a" read every such line after it (the square of a run of them: 120 KB, 18 s),
#: and found the same lines (a match across a break has one within the first line).
_URLS = r"(?:https?://|www\.)\S+(?:[^\S\n]+(?:https?://|www\.)\S+)*[^\S\n]*$"
#: Machine text, recognised by how the line starts (or is made).
_SHAPES = [
    rf"{_TIMESTAMP}",  # 2026-01-03 12:00:01 ..., [2026/01/03 ...
    r"(?:\d{1,3}\.){3}\d{1,3}\b",  # nginx, apache: 203.0.113.7 - - [27/Nov/2026:...
    r"[0-9a-fA-F]{0,4}(?::[0-9a-fA-F]{0,4}){2,7}\s",  # the same from an IPv6 address
    r"\S+ \S+ \S+ \[\d{1,2}/\w{3}/\d{4}:",  # common log format from a host name
    rf"(?:(?:{_DAYS}),? )?(?:{_MONTHS})\.? {{1,2}}\d{{1,2}},? (?:\d{{4}} )?\d{{1,2}}:\d{{2}}",
    r"\d{10}(?:\.\d+)?\s",  # epoch seconds first
    r"(?:[A-Za-z_][\w.-]+=(?:\"[^\"]*\"|\S*)\s+){2}",  # logfmt: ts=... level=info msg=..."
    r"\[?\d{1,2}:\d{2}:\d{2}",  # 12:00:01.123 ...
    rf"\[?{_LEVELS}\b[\]:|\s]",  # ERROR: ..., [WARN] ...
    r"[A-Z]\d{4} \d{2}:\d{2}",  # glog: E0103 12:00:01
    r"at [\w$.<>/]+\(",  # Java frame
    r"File \"[^\"]*\", line \d+",  # Python frame
    r"Traceback \(most recent call last\)",
    r"Caused by:",
    r"\.\.\. \d+ (?:more|common frames)",
    r"[\w.]+(?:Error|Exception|Warning)(?::|$)",  # ValueError: ..., java.io.IOException
    r"(?:#|//|/\*|\*/|<!--|--\s|;;)",  # comments (and markdown headings)
    _STATEMENT,  # code statements
    r"[{}\]<]|\[(?!\w{1,20}\]\s)|\"[\w-]+\"\s*:",  # JSON, XML, HTML (not "[tag] ...")
    r"[\w.-]+\s*[:=]\s*\S+\s*$",  # key: value, key = value
    _URLS,  # URLs only
    r">",  # quoted text
    r"On [^\n]{5,120} wrote:\s*$",  # a quoted e-mail's header
    r"\*\*|__",  # a bold line: a document's own heading or question
    r"\|.*\|",  # markdown table row
    r"[-=+*_]{3,}",  # rules and table borders
    r"\$ |> |>>> |PS [A-Z]:",  # shell prompts
]
_PASTED_SHAPES = "|".join(_SHAPES)
_PASTED = re.compile(_PASTED_SHAPES)
#: A tag in front of a message, a label and not part of what it says: a ticket or message
#: id, a marker, a mention, a channel ("[JIRA-123]", "[a1b2c3]", "(urgent)", "@bot",
#: "<@U024BE7LH>", "#ops"). Brackets and parentheses hold 2-30 characters of a name, a
#: letter among them and no colon: a transcript's time ("[10:02]", "[10:02 AM]"), a log
#: level ("[WARN]") and a list's number ("(1)") are the paste's, not a tag; "# Heading" (a
#: space after the mark) is a document's.
_TAG = (
    rf"(?:\[(?!{_LEVELS}\])(?=[^\]\n]{{0,29}}[A-Za-z])[\w#./+-][\w#./+ -]{{1,29}}\]"
    r"|\((?=[^)\n]{0,29}[A-Za-z])[\w#./+-][\w#./+ -]{1,29}\)"
    r"|<[@#!][\w|.-]{1,40}>|@[A-Za-z][\w.-]{0,39}|#[A-Za-z][\w-]{0,39})"
)
#: At most this many tags in a row ("[PROJ-7] @bot ..."), each followed by blanks.
TAGS = 3
_TAGS = rf"(?:{_TAG}[:,]?[ \t]+){{1,{TAGS}}}"
_TAGGED = re.compile(_TAGS)
#: A line that is not machine text by its start: at most three spaces of indentation, then
#: none of the shapes above but a code statement (``_Statements``). Found by one scan of
#: the whole message (in C, not per line); its trailing blanks are cut after (a lazy group
#: before them cost the square of a run of blanks followed by text).
_PROSE_LINE = re.compile(
    rf"^ {{0,3}}(?!{'|'.join(x for x in _SHAPES if x is not _STATEMENT)})(\S[^\n]*)$", re.M
)
_KEYWORD_AT = re.compile(_KEYWORD)
#: A character that ends a code statement's line, and a sentence's end.
_STATEMENT_END = re.compile(r"[:;{(=]")
_SENTENCE_END = re.compile(r"[.!?]")
_BLANKS = re.compile(r"\s*")
#: A number written with thousands separators, money or not: "$2,000,000", "1,250.50".
_NUMBER = re.compile(r"(?<![\w,.])[$€£]?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w]|,\d)")
#: A ``key=value`` pair (logfmt, a query string's fields, a config dump), its key a name
#: of two characters or more (not "a=2, b=6" of an equation); a line with ``PAIRS`` of
#: them is machine text wherever they sit.
_PAIR = re.compile(r"(?<![\w.-])[A-Za-z_][\w.-]+=(?:\"[^\"]*\"|[^\s=]+)")
PAIRS = 3
#: A base64 or hex blob, a hash, a token.
_BLOB = re.compile(r"[A-Za-z0-9+/=_-]{40}")
#: One of a part's words read as plain: a word, a number, a quoted word, with punctuation.
_PLAIN = re.compile(
    r"[(\"'\u201c\u2018]?[$€£]?[\w\u2019'&-]+(?:[.,:/]\d+)*%?[.,:;!?)\"'\u201d\u2019]*"
)
#: Sentence ends inside a line.
_SENTENCE = re.compile(
    r"(?<=[.!?])(?<!\b[A-Z]\.)(?<!\b(?:Mr|Dr|St|Ms|vs)\.)\s+(?=[\"'(\u201c\u2018]?[A-Z0-9])"
)
#: A leading list marker: "- ", "* ", "1. ", "2) ".
_BULLET = re.compile(r"\A(?:[-*•]|\d{1,2}[.)])\s+")
_ASKING = re.compile(
    r"\b(?:please|pls|can you|could you|would you|will you|can i|could i|"
    r"(?:i|we)(?:'d like| (?:really |also |just )?(?:need|want|wanna|wish|would like))|"
    r"(?:i'm|i am|we're|we are) (?:looking|seeking|searching|trying|hoping|interested)|"
    r"help me|help us|let me know|tell me|show me|give me|how do i|how can i|"
    r"(?:i|i'm|i am|we|we're)\b[^.!?]{0,80}\b"
    r"(?:need|needs|want|wondering|hoping|seeking|looking for|trying to)\b|"
    r"is there a way|is it possible|what is|what's|what are|where is|where can|which|"
    r"who is|when is|why does|why is|any (?:suggestions|recommendations|ideas)|"
    r"(?:my|our|the) (?:actual |real |main |only |one |quick |last )?"
    r"(?:question|request|ask|task)(?: is)?\s*[:\-\u2013\u2014]|tl;?dr\s*:)",
    re.IGNORECASE,
)
#: A question without its question mark: "what shipped in ...", "are there any ...".
_QUESTION = re.compile(
    r"(?:who|what|when|where|why|how|which|whose|is there|are there|is it|do|does|did|"
    r"can|could|should|would|will|have you|has)\b",
    re.IGNORECASE,
)
#: Chinese, Japanese and Korean text, written without spaces between words: a sentence
#: with this many of its characters is read by its asking marks instead of its words.
CJK_CHARS = 4
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
#: A question mark, "please", "help me", a question particle; "kudasai", "onegai",
#: "oshiete"; Korean "please (do)".
_CJK_ASKING = re.compile(
    r"[\uff1f?]|请|請|帮我|幫我|吗|嗎|能否|可以|ください|お願い|教えて|주세요|해줘|하세요|알려"
)
#: How documentation speaks to its reader: "you can ...", "if you ...", "make sure ...".
_MANUAL = re.compile(
    r"\b(?:you (?:can|should|must|may|might|will|need to|have to|do not|don't)|if you|"
    r"unless you|when you|make sure|ensure that|note that|be aware)\b",
    re.IGNORECASE,
)
#: Openings read before a request's first word: a second one follows the first
#: ("Unrelated to that log, my actual question: ...").
OPENINGS = 2
#: A short opening before the request itself: "Anyway, ...", "What I need now: ...",
#: "btw ...".
_OPENING = re.compile(
    r"(?:\S+\s+){0,3}?\S+?(?:,|:|\s-|\s\u2013|\s\u2014)\s+|"
    r"(?:btw|fyi|ps|p\.s\.|anyway|anyhow|also|oh and|and also|ok so|so|by the way)\s+",
    re.IGNORECASE,
)
_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|me|my|we|our|us|you|your)\b", re.IGNORECASE)
#: Verbs a request starts with ("Find ...", "send ...").
_VERBS = frozenset(
    """add analyze analyse apply archive arrange assign assist book browse build buy
    calculate cancel change check clean clone close collect compare compile compose compute
    convert copy count create debug decode delete deploy describe design detect determine
    display download draft drop edit email encode estimate evaluate explain export extract
    fetch figure file fill filter find fix forecast format gather generate get give grab help
    identify import invite install launch list load locate look lookup make map merge message
    migrate monitor move notify obtain open order organize organise parse pay plan play post
    predict prepare print provide publish pull purchase push put query read recommend record
    refresh register remind remove rename render reply report request reschedule reserve
    reset resize resolve restart restore retrieve return review revert roll save scale
    schedule search send share show sort split start stop submit subscribe suggest summarize
    summarise sync tag tell track transcribe transfer translate turn undo unsubscribe update
    upgrade upload validate verify view watch write lock unlock mark store erase spin
    test keep let synthesize recognize flag pin star block mute ban approve reject label
    link rate ping buzz bump kick stream print rerun retry escalate""".split()
)
#: Words that start a statement, not an order: determiners, pronouns, conjunctions,
#: prepositions, auxiliaries ("The service ...", "Once the queue ...", "It is ...").
_NOT_VERBS = frozenset(
    """a an the this that these those each every all some any no my our your his her its
    their i you he she it we they there here what which who when where why how if once
    while because since although though as so and or but then also after before until
    unless in on at by for from with without of to into over under about is are was were
    be been being has have had do does did can could should would will shall may might
    must not yes hi hey hello thanks thank ok okay well""".split()
)
#: The word after an imperative verb: an object's determiner, a pronoun, a particle
#: ("Refund the payment", "power down the boxes").
_OBJECT_STARTS = frozenset(
    """a an the this that these those my our your all every some any me us it them him
    her up down out off over back in on""".split()
)
#: Verbs documentation uses for its own steps: a weaker sign of a request.
_DOC_VERBS = frozenset("run set see note use enable disable configure ensure call".split())


class _Statements:
    """Where ``_STATEMENT`` matches in a whole message (``re.M``), in one pass: its
    ``[^.!?]*`` crosses lines, so the regex scanned from every line that opens with a
    keyword to the next sentence end (the square of a paste's length without one). A
    statement opens at ``start`` when the keyword is there and the first ``:;{(=`` after it
    whose blanks run to a line's end comes before the first ``.!?`` after it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.ends = [m.start() for m in _STATEMENT_END.finditer(text) if self._ends_line(m.end())]
        self.stops = [m.start() for m in _SENTENCE_END.finditer(text)]

    def _ends_line(self, at: int) -> bool:
        """Whether ``\\s*$`` (``re.M``) matches at ``at``: its blanks reach the text's end or
        hold a line break. (Each run is read once: ``:;{(=`` is not a blank.)"""
        blanks = _BLANKS.match(self.text, at)
        end = blanks.end() if blanks else at
        return end == len(self.text) or self.text.find("\n", at, end) >= 0

    def opens(self, start: int) -> bool:
        keyword = _KEYWORD_AT.match(self.text, start)
        if keyword is None:
            return False
        after = keyword.end()
        end = bisect.bisect_left(self.ends, after)
        stop = bisect.bisect_left(self.stops, after)
        return end < len(self.ends) and (
            stop == len(self.stops) or self.ends[end] < self.stops[stop]
        )


@dataclass(frozen=True, slots=True)
class Part:
    """One line or sentence of a message, where it starts, and its request score."""

    text: str
    start: int
    score: int


def parts(text: str) -> list[Part]:
    """The message's prose: its lines that are not machine text (``_PROSE_LINE``, then the
    fields and blob checks, then ``REPEATS`` lines of one template), short ones whole and
    longer ones as sentences, each scored (``request_score``); in message order. Pasted
    lines are not parts."""
    lines = prose_lines(text)
    templates = Counter(_DIGITS.sub("#", line) for line, _ in lines)
    found: list[Part] = []
    seen: dict[str, list[Part]] = {}  # a paste repeats its lines: each is read once
    for i, (line, start) in enumerate(lines):
        if i % CHECK_EVERY == 0:
            checkpoint()
        if line not in seen:
            machine = templates[_DIGITS.sub("#", line)] >= REPEATS or _fields_or_blob(line)
            seen[line] = [] if machine else _line_parts(line, 0)
        found.extend(Part(p.text, start + p.start, p.score) for p in seen[line])
    return _past_tags(text, found)


def prose_lines(text: str) -> list[tuple[str, int]]:
    """Each line of ``text`` that is not machine text by its start, without its trailing
    blanks, and where it starts: what ``_PROSE_LINE`` with every shape of ``_SHAPES`` in its
    lookahead found, without the two shapes that cost the square of a message's length (a
    lazy group before trailing blanks; a code statement read across lines: ``_Statements``)
    and with the URL-only shape read within its line (``_URLS``)."""
    statements = _Statements(text)
    return [
        (m.group(1).rstrip(" \t\r\f\v"), m.start(1))
        for m in _PROSE_LINE.finditer(text)
        if not statements.opens(m.start(1))
    ]


def _past_tags(text: str, found: list[Part]) -> list[Part]:
    """``found`` with the message's first and last lines read past the tags they open with
    (``_tagged_line``); every other line is read as it always was."""
    for start, line, first in _edges(text):
        tagged = _tagged_line(line, text)
        if tagged is not None:
            read = [Part(p.text, start + p.start, p.score) for p in tagged]
            kept = [p for p in found if not start <= p.start < start + len(line)]
            found = read + kept if first else kept + read
    return found


def _tagged_line(line: str, text: str) -> list[Part] | None:
    """An edge line's parts past the tags it opens with (``_TAGS``), or ``None`` (read as
    always): the message's first and last lines are the sender's, around a paste, so a tag
    neither hides a request nor makes it look pasted, when the words after it are not
    machine text and the line is not one of ``REPEATS`` alike. In the middle, a tagged line
    is a paste's (a ticket list, a chat export), read as always."""
    tags = _TAGGED.match(line)
    if tags is None:
        return None
    rest = line[tags.end() :]
    if _PASTED.match(rest) or _fields_or_blob(rest) or _repeated(line, text):
        return None
    return _line_parts(rest, tags.end())


def _edges(text: str) -> list[tuple[int, str, bool]]:
    """The message's first and last lines (one when it has one line): where each starts,
    its text, and whether it is the first; only lines indented three spaces at most, as
    ``_PROSE_LINE`` reads them."""
    first = len(text) - len(text.lstrip())
    end = len(text.rstrip())
    out: list[tuple[int, str, bool]] = []
    for begin in dict.fromkeys((first, max(first, text.rfind("\n", 0, end) + 1))):
        stop = text.find("\n", begin, end)
        line = text[begin : end if stop < 0 else stop].rstrip(" \t\r\f\v")
        start = begin + len(line) - len(line.lstrip())
        indent = text[text.rfind("\n", 0, start) + 1 : start]
        if len(indent) <= 3 and not indent.strip(" ") and line.strip():
            out.append((start, line.lstrip(), start == first))
    return out


def _repeated(line: str, text: str) -> bool:
    """Whether ``REPEATS`` lines of ``text`` have ``line``'s template (digits as one mark;
    its first ``_HEAD`` characters when longer). The template is searched as text (a fast
    literal search from the tag's first mark), then each match checked to open a line."""
    template = _DIGITS.sub(r"\\d+", re.escape(line[:_HEAD]))
    close = r"(?=[ \t\r\f\v]*(?:\n|\Z))" if len(line) <= _HEAD else ""
    alike = 0
    for match in re.finditer(template + close, text):
        indent = text[text.rfind("\n", 0, match.start()) + 1 : match.start()]
        alike += len(indent) <= 3 and not indent.strip(" ")
        if alike >= REPEATS:
            return True
    return False


def _line_parts(line: str, offset: int) -> list[Part]:
    """A prose line as parts: a short line whole, scored by its best sentence (a request's
    own details stay with it); a longer one, its sentences, where a plain sentence after a
    request sentence is that request's detail ("I need to rent a car. I'll pick it up on
    April 8th at 10.") and scores ``REQUEST_SCORE``: kept when the budget has room, after
    the stronger parts, rather than dropped."""
    sentences = _SENTENCE.split(line)
    if len(line) <= LINE_CHARS:
        return [Part(line, offset, max(request_score(s) for s in sentences))]
    out: list[Part] = []
    begin = 0
    asked = False
    scores: dict[str, int] = {}  # a line of one sentence repeated reads it once
    for i, sentence in enumerate(sentences):
        if i % CHECK_EVERY == 0:
            checkpoint()
        begin = line.find(sentence, begin)
        score = scores.get(sentence)
        if score is None:
            score = scores[sentence] = request_score(sentence)
        if asked and 0 <= score < REQUEST_SCORE and _plain(sentence.split()):
            score = REQUEST_SCORE
        asked = score >= REQUEST_SCORE
        out.append(Part(sentence, offset + begin, score))
        begin += len(sentence)
    return out


def _fields_or_blob(line: str) -> bool:
    """Whether a line's start is CSV or TSV fields, ``key=value`` pairs, or holds a blob
    (base64, a hash). A number's thousands separators are not fields: "a net income of
    $2,000,000, equity of $10,000,000" is a sentence."""
    head = _NUMBER.sub("0", line[:_HEAD])
    commas = head.count(",") - head.count(", ")  # prose puts a space after its commas
    return (
        commas >= 3
        or head.count("\t") >= 2
        or len(_PAIR.findall(head)) >= PAIRS
        or bool(_BLOB.search(head))
    )


def request_score(sentence: str) -> int:
    """How much ``sentence`` reads as written to the assistant (see the module); 0 for a
    pasted-looking part."""
    if len(sentence) > MAX_PART_CHARS:
        return 0
    if len(_CJK.findall(sentence, 0, _HEAD)) >= CJK_CHARS:  # unsegmented: no words to read
        return 2 * REQUEST_SCORE if _CJK_ASKING.search(sentence) else 0
    words = sentence.split()
    if not _plain(words):
        return 0
    starts = _starts(sentence)
    closed = sentence.rstrip("\"')\u201d\u2019 ").endswith("?")
    asked = closed or any(_QUESTION.match(s) for s in starts)
    score = 2 if asked else 0
    score += 2 if _ASKING.search(sentence) else 0
    score += _verb_score(starts)
    score += 1 if _PERSON.search(sentence) else 0
    score -= 2 if _MANUAL.search(sentence) else 0
    return score - (1 if "`" in sentence else 0)


def _plain(words: list[str]) -> bool:
    """Whether a sentence's words read as prose: 2-120 of them, mostly plain words."""
    if not 2 <= len(words) <= 120:
        return False
    return sum(1 for w in words if _PLAIN.fullmatch(w)) >= MIN_PLAIN_SHARE * len(words)


def _starts(sentence: str) -> list[str]:
    """Where the sentence's own words may start: after a list marker, and after up to
    ``OPENINGS`` short openings ("Anyway, find ...", "What I need now: find ...",
    "Unrelated to that log, my actual question: translate ...")."""
    text = _BULLET.sub("", sentence, count=1)
    out = [text]
    for _ in range(OPENINGS):
        opening = _OPENING.match(out[-1])
        if not opening:
            break
        out.append(out[-1][opening.end() :])
    return out


def _verb_score(starts: list[str]) -> int:
    """2 for a request's verb first ("Find ...", "Anyway, find ..."), 1 for a verb that
    documents start their own steps with, else 0."""
    best = 0
    for text in starts:
        words = [w.lower().strip(",:;\"'") for w in text.split(None, 2)[:2]] + ["", ""]
        first, second = words[0], words[1]
        if first in _DOC_VERBS:
            best = max(best, 1)
        elif first in _VERBS or _imperative_shape(first, second):
            best = 2
    return best


def _imperative_shape(first: str, second: str) -> bool:
    """A verb the list lacks, known by its shape: a base-form word that is not a function
    word, followed by an object's first word ("scrap the standup", "power down the boxes")."""
    if first in _NOT_VERBS or not first.isalpha() or first.endswith(("s", "ed", "ing")):
        return False
    return second in _OBJECT_STARTS


#: Which reading of a long message was ranked: its request parts, its own prose (no part
#: read as a request), or the caller's positional cut (no prose at all). A closed set: the
#: ``kind`` label of ``tool_selector_patterns_cut_total`` and the log line's
#: ``pattern_kind``.
PatternKind = Literal["request_found", "prose_fallback", "positional_cut"]
PATTERN_KINDS: tuple[PatternKind, ...] = get_args(PatternKind)


def find_pattern(text: str, budget: int, prose_budget: int) -> str | None:
    """What a long message is ranked on: its request parts (``request_pattern``), else its
    own prose (``prose_pattern``), else ``None``; the message's parts are read once."""
    found = read_message(text, budget, prose_budget)
    return found[0] if found else None


def read_message(text: str, budget: int, prose_budget: int) -> tuple[str, PatternKind] | None:
    """``find_pattern`` with the reading that gave it: ``request_found`` or
    ``prose_fallback``; ``None`` when the message has no prose (the caller cuts it)."""
    found = parts(text)
    requests = _requests(found, budget)
    if requests:
        return requests, "request_found"
    prose = _own_words(found, prose_budget)
    return (prose, "prose_fallback") if prose else None


def request_pattern(text: str, budget: int) -> str | None:
    """The request parts of ``text`` joined in message order, at most ``budget``
    characters (highest scores first when they do not all fit; earlier first on ties), or
    ``None`` when no part reads as a request."""
    return _requests(parts(text), budget)


def _requests(found: list[Part], budget: int) -> str | None:
    scored = [p for p in found if p.score >= REQUEST_SCORE]
    if not scored:
        return None
    kept: list[Part] = []
    used = 0
    for part in sorted(scored, key=lambda p: (-p.score, p.start)):
        cost = len(part.text) + (1 if kept else 0)
        if used + cost <= budget:
            kept.append(part)
            used += cost
    if not kept:  # the best part alone is longer than the budget: its start
        best = min(scored, key=lambda p: (-p.score, p.start))
        return best.text[:budget].strip() or None
    return " ".join(p.text for p in sorted(kept, key=lambda p: p.start))


def prose_pattern(text: str, budget: int) -> str | None:
    """When no part reads as a request (``request_pattern`` gave ``None``): the message's
    prose parts (plain words, or a CJK sentence) in message order when together they fit
    ``budget``; else its first and last ones, the longer cut at a word to what is left
    (each at least half); ``None`` when it has no prose at all."""
    return _own_words(parts(text), budget)


def _own_words(found: list[Part], budget: int) -> str | None:
    prose = [p.text for p in found if _is_prose(p.text)]
    # a line ending in a colon frames the paste after it ("Here is the log:"): it names
    # what follows, not the need, so it is ranked only when the message has nothing else
    prose = [p for p in prose if not p.endswith(":")] or prose
    if not prose:
        return None
    joined = " ".join(prose)
    if len(joined) <= budget:
        return joined
    if len(prose) == 1:
        return _cut_at_word(joined, budget) or None
    first, last = prose[0], prose[-1]
    room = max(budget - 1, 0)
    last = _cut_at_word(last, max(room // 2, room - len(first)))
    first = _cut_at_word(first, room - len(last))
    return " ".join(p for p in (first, last) if p) or None


def _is_prose(part: str) -> bool:
    return len(_CJK.findall(part, 0, _HEAD)) >= CJK_CHARS or _plain(part.split())


def _cut_at_word(text: str, size: int) -> str:
    """``text`` itself when it fits ``size``, else its start without the word the cut splits."""
    if len(text) <= size:
        return text
    if size <= 0:
        return ""
    head = text[:size]
    return head.rsplit(None, 1)[0] if text[size] != " " and " " in head else head
