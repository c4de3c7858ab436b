"""The request inside a long message: found among pasted material, bounded, else ``None``."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tool_selector.pipeline.decoding import Decoder, cut_pattern
from tool_selector.ranking.request_parts import (
    PATTERN_KINDS,
    PROSE_CHARS,
    REQUEST_CHARS,
    REQUEST_SCORE,
    find_pattern,
    parts,
    prose_pattern,
    read_message,
    request_pattern,
    request_score,
)
from tool_selector.settings import Settings

PY_TRACE = "\n".join(
    [
        "2026-03-14 09:12:03,481 INFO [uvicorn.access] 10.0.3.17:51234 - "
        '"POST /api/v1/orders HTTP/1.1" 200',
        "2026-03-14 09:12:04,002 ERROR [app.worker] Task process_invoice[3f2a] raised "
        "unexpected: KeyError('customer_id'), please check your payload",
        "Traceback (most recent call last):",
        '  File "/srv/app/worker.py", line 88, in run',
        "    result = self.handler(payload, timeout=self.timeout)",
        "KeyError: 'customer_id'",
    ]
)
JAVA_TRACE = "\n".join(
    [
        "2026-03-14T10:00:01.120Z ERROR 4242 --- [nio-8080-exec-3] c.a.orders.OrderService : "
        "Request processing failed; you may need to retry",
        'java.lang.NullPointerException: Cannot invoke "String.length()" because "name" is null',
        "\tat com.acme.orders.OrderService.validate(OrderService.java:118)",
        "\t... 42 more",
    ]
)
DOCS = "\n".join(
    [
        "## Orders service",
        "",
        "The service reads its configuration once at startup. You can override any of these "
        "settings with an environment variable.",
        "Make sure the clock of every host is synchronised before you enable signing.",
        "1. Install the package with `pip install acme-orders`.",
        "```yaml",
        "orders:",
        "  timeout: 5s",
        "```",
        "| setting | default | meaning |",
        "|---|---|---|",
        "**How do I rotate the keys?** Use the admin console.",
    ]
)
JSON = '{\n  "data": [\n    {"id": "ord_1", "note": "please deliver after 5pm"}\n  ]\n}'
CSV = "date,region,product,units\n2026-01-03,EMEA,Pro,12\n2026-01-04,APAC,Team,7"
BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5E"
PASTE = "\n\n".join([PY_TRACE * 8, JAVA_TRACE * 8, DOCS * 4, JSON * 4, CSV * 6, BASE64])
ASK = "Can you post a short summary of this failure to the #ops channel in Slack?"


@pytest.mark.parametrize(
    "line",
    [
        "Can you post a short summary of this failure to the #ops channel in Slack?",
        "please open a ticket for the billing team",
        "I need the weather forecast for Rome for the next 10 days.",
        "Calculate the area of a triangle with base 6 and height 10.",
        "Anyway, play Baby Shark in the kitchen",
        "What I need now: find a unisex salon in San Jose",
        "what shipped in the last few versions of acme/cli",
        "scrap the Thursday standup",
    ],
)
def test_requests_read_as_written_to_the_assistant(line: str) -> None:
    assert request_score(line) >= REQUEST_SCORE


@pytest.mark.parametrize(
    "text",
    [
        PY_TRACE,
        JAVA_TRACE,
        DOCS,
        JSON,
        CSV,
        BASE64,
        "https://status.acme.dev https://docs.acme.dev",
        "> Please keep the old key for an hour.",
        "    return self.send(message)  # please keep",
    ],
    ids=["python-log", "java-log", "docs", "json", "csv", "base64", "urls", "quote", "code"],
)
def test_pasted_material_has_no_request_part(text: str) -> None:
    assert [p for p in parts(text) if p.score >= REQUEST_SCORE] == []


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (f"{PASTE}\n\n{ASK}\n\n{PASTE}", ASK),
        (f"{PY_TRACE * 20}\nWhat I need now: {ASK}\n{PY_TRACE * 20}", f"What I need now: {ASK}"),
        (f"{ASK}\n\n{PASTE}", ASK),
        (f"Here is the log:\n\n{PASTE}\n\n{ASK}", ASK),
        (
            f"My deploy broke. Here is the log:\n{JAVA_TRACE * 30}\n{ASK}",
            ASK,
        ),
    ],
    ids=["middle", "middle-of-a-traceback", "start", "end", "a-statement-is-no-request"],
)
def test_the_request_is_found_wherever_it_is(message: str, expected: str) -> None:
    assert request_pattern(message, REQUEST_CHARS) == expected


def test_a_message_with_no_request_gives_none_and_the_decoder_cuts_it() -> None:
    assert request_pattern(PASTE, REQUEST_CHARS) is None
    decoded = Decoder(Settings())._pattern(PASTE)
    assert decoded == (cut_pattern(PASTE, Settings().max_pattern_chars), "positional_cut")


STATEMENT = "Refund payment pi_3Nq8 in Stripe, the customer was charged twice"
FRAMING = "This is what the server printed:"


@pytest.mark.parametrize(
    "message",
    [
        f"{STATEMENT}\n\n{PY_TRACE * 20}",
        f"{FRAMING}\n\n{JAVA_TRACE * 20}\n{STATEMENT}",
        f"{FRAMING}\n{PY_TRACE * 10}\n{STATEMENT}\n{JAVA_TRACE * 10}",
    ],
    ids=["start", "end", "middle-of-machine-text"],
)
def test_with_no_request_part_the_senders_own_words_are_ranked(message: str) -> None:
    assert request_pattern(message, REQUEST_CHARS) is None  # nothing here asks
    found, kind = Decoder(Settings())._pattern(message)
    assert kind == "prose_fallback"
    assert STATEMENT in found
    assert "Traceback" not in found
    assert "at com.acme" not in found
    assert len(found) <= PROSE_CHARS


def test_prose_too_long_for_the_budget_gives_its_first_and_last_parts() -> None:
    middle = [f"The {w} team reviewed the {w} report on Tuesday." for w in ("red", "blue")]
    prose = [STATEMENT, *middle, "Thanks a lot for the help with all of this today."]
    message = f"\n{PY_TRACE * 5}\n".join(prose)
    assert prose_pattern(message, 1000) == " ".join(prose)
    edges = prose_pattern(message, 120)
    assert edges == f"{STATEMENT} {prose[-1]}"
    cut = prose_pattern(message, 60)
    assert cut is not None
    assert len(cut) <= 60
    assert cut.startswith("Refund payment")
    assert "reviewed" not in cut


def test_a_message_without_prose_keeps_the_positional_cut() -> None:
    machine = "\n\n".join([PY_TRACE * 20, JSON * 10, CSV * 10, BASE64])
    assert prose_pattern(machine, PROSE_CHARS) is None
    assert Decoder(Settings())._pattern(machine) == (cut_pattern(machine, 2000), "positional_cut")


@given(st.text(min_size=1, max_size=3000), st.integers(1, 1200))
def test_the_prose_pattern_fits_its_budget_and_comes_from_the_message(
    text: str, budget: int
) -> None:
    found = prose_pattern(text, budget)
    if found is not None:
        assert 0 < len(found) <= budget
        assert all(word in text for word in found.split())


def test_a_pattern_within_the_budget_is_ranked_exactly_as_sent() -> None:
    short = f"  {ASK}\n{JSON}  "
    assert Decoder(Settings())._pattern(short) == (short, None)


def test_finding_the_request_can_be_turned_off() -> None:
    message = f"{PASTE}\n\n{ASK}\n\n{PASTE}"
    off = Decoder(Settings(find_request=False))._pattern(message)
    assert off == (cut_pattern(message, Settings().max_pattern_chars), "positional_cut")
    assert Decoder(Settings())._pattern(message) == (ASK, "request_found")


def test_many_requests_are_kept_within_the_budget_best_first_in_message_order() -> None:
    names = [a + b for a in "bcdfghjklm" for b in "aeiou"]
    lines = [f"Please look up the {name} order in the shop." for name in names]
    lines[40] = "Can you please find the invoice of the last order and email it to me?"
    found = request_pattern("\n".join(lines), 200)
    assert found is not None
    assert len(found) <= 200
    assert "Can you please find the invoice" in found
    assert found.index("the ba order") < found.index("Can you please")  # message order
    assert found.count("Please look up") >= 2


def test_a_one_megabyte_message_is_bounded() -> None:
    message = f"{PASTE * 70}\n\n{ASK}\n\n{PASTE * 70}"
    assert len(message) > 1_000_000
    assert request_pattern(message, REQUEST_CHARS) == ASK
    assert len(Decoder(Settings())._pattern(message)[0]) <= REQUEST_CHARS


@given(st.text(min_size=1, max_size=3000), st.integers(1, 1200))
def test_the_pattern_fits_its_budget_and_comes_from_the_message(text: str, budget: int) -> None:
    found = request_pattern(text, budget)
    if found is not None:
        assert 0 < len(found) <= budget
        assert all(word in text for word in found.split())


@pytest.mark.parametrize(
    ("line", "asks"),
    [
        ("能帮我查一下中国广州市和北京市现在的天气状况吗\uff1f请使用公制单位。", True),
        ("東京の明日の天気を教えてください", True),
        ("服务启动时读取配置文件并保持连接池。", False),
    ],
    ids=["chinese-question", "japanese-please", "chinese-statement"],
)
def test_a_cjk_sentence_is_a_request_when_it_asks(line: str, asks: bool) -> None:
    assert (request_score(line) >= REQUEST_SCORE) is asks
    assert (request_pattern(f"{PY_TRACE * 20}\n{line}\n{PY_TRACE * 20}", 1000) == line) is asks


# --- what the finder lost through the real v0.4.3 pre-filter -------------------------------

#: Money with thousands separators: a request, not pasted CSV.
ROE = (
    "Calculate the return on equity for a company with a net income of $2,000,000, "
    "shareholder's equity of $10,000,000 and dividends of $200,000."
)
#: A request after a second opening, which scored below the request threshold.
TRANSLATE = (
    "Unrelated to that log, my actual question: Translate 'I would like to book a table for "
    "two' into French."
)
#: nginx's combined format: a line starting with the client's IP passed as prose.
NGINX = "\n".join(
    f'203.0.113.{i % 250} - - [27/Nov/2026:10:{i % 60:02d}:01 +0000] "GET /api/v1/items/{i} '
    f'HTTP/1.1" 200 {512 + i} "https://shop.example.com/" "Mozilla/5.0 (X11; Linux x86_64)"'
    for i in range(60)
)


def _placed(ask: str, paste: str, placement: str) -> str:
    half = paste[: len(paste) // 2].rsplit("\n", 1)[0]
    return {
        "start": f"{ask}\n\n{paste}",
        "middle": f"{half}\n\n{ask}\n\n{paste[len(half) :]}",
        "end": f"{paste}\n\n{ask}",
    }[placement]


@pytest.mark.parametrize("placement", ["start", "middle", "end"])
@pytest.mark.parametrize("ask", [ROE, TRANSLATE], ids=["money", "second-opening"])
@pytest.mark.parametrize(
    ("paste", "kb"),
    [(NGINX, 3), (CSV * 250, 20), (PY_TRACE * 20, 8), (NGINX * 4, 20)],
    ids=["nginx-3kb", "csv-20kb", "log-8kb", "nginx-20kb"],
)
def test_the_issues_requests_are_found_in_every_placement(
    ask: str, placement: str, paste: str, kb: int
) -> None:
    message = _placed(ask, (paste * 40)[: kb * 1000], placement)
    assert len(message) > 2000
    assert read_message(message, REQUEST_CHARS, PROSE_CHARS) == (ask, "request_found")
    assert Decoder(Settings())._pattern(message) == (ask, "request_found")


@pytest.mark.parametrize(
    "line",
    [
        ROE,
        "Upgrade the cluster from 1.27.3 to 1.28.0 on 2026-12-01, about 1,200 nodes.",
        "Transfer €1,250.50 from savings to checking on 12/01/2026 at 10:30.",
        "Book 2 rooms, 3 nights, from 1,200 to 1,500 dollars a night, near 5th Ave.",
    ],
    ids=["money", "versions-and-dates", "euros-and-times", "ranges"],
)
def test_numbers_with_separators_inside_a_sentence_are_prose(line: str) -> None:
    assert [p.text for p in parts(line)] == [line]
    assert request_score(line) >= REQUEST_SCORE


@pytest.mark.parametrize(
    "line",
    [
        TRANSLATE,
        "my actual question: find the cheapest flight to Oslo",
        "Anyway, translate this into German",
        "btw order a pizza for the team",
        "so: book the meeting room for Friday",
        "TL;DR: the invoice for ACME is missing, resend it",
        "The deploy broke at noon, what went wrong with the payment service?",
    ],
    ids=["unrelated-my-question", "my-question", "anyway", "btw", "so", "tldr", "question-last"],
)
def test_a_request_after_a_second_opening_is_a_request(line: str) -> None:
    assert request_score(line) >= REQUEST_SCORE


@pytest.mark.parametrize(
    "text",
    [
        NGINX,
        "\n".join(
            f'2001:db8::{i:x} - - [27/Nov/2026:10:00:{i:02d} +0000] "GET / HTTP/2" 200 12'
            for i in range(5)
        ),
        "\n".join(
            f"shop.example.com - frank [27/Nov/2026:10:00:{i:02d} +0000] "
            f'"GET /please/help HTTP/1.1" 404 {i}'
            for i in range(5)
        ),
        "\n".join(
            f"Nov {i + 1:2d} 10:00:0{i} web-1 sshd[812]: Connection reset by peer, please retry"
            for i in range(5)
        ),
        "\n".join(
            f'{{"ts": "2026-11-27T10:00:0{i}Z", "level": "error", "msg": "please retry {i}"}}'
            for i in range(5)
        ),
        "\n".join(
            f'time=2026-11-27T10:00:0{i}Z level=warn msg="payment failed, please check" id={i}'
            for i in range(5)
        ),
        "\n".join(
            f'service=orders level=info msg="please send the invoice" user_id={i} ms={i}'
            for i in range(5)
        ),
        "1701080000.123 please restart the orders worker now\n" * 2,
        "On Tue, Nov 4, 2026 at 9:12 AM Ada <ada@example.com> wrote:",
    ],
    ids=["nginx", "ipv6", "common-log", "syslog", "json-lines", "logfmt", "kv", "epoch", "mail"],
)
def test_log_lines_are_known_by_their_shape(text: str) -> None:
    assert parts(text) == []


def test_an_unsure_finder_ranks_the_senders_words_without_the_lines_framing_the_paste() -> None:
    short = "delegate digging through the auth flow to a helper"
    message = f"The API returned this:\n{JSON * 40}\n{short}\nThe page source:\n{JSON * 40}"
    assert read_message(message, REQUEST_CHARS, PROSE_CHARS) == (short, "prose_fallback")
    only_framing = f"The API returned this:\n{JSON * 80}"
    assert prose_pattern(only_framing, PROSE_CHARS) == "The API returned this:"


def test_find_pattern_is_read_message_without_the_kind() -> None:
    message = _placed(ROE, CSV * 250, "middle")
    assert find_pattern(message, REQUEST_CHARS, PROSE_CHARS) == ROE
    assert find_pattern(CSV * 250, REQUEST_CHARS, PROSE_CHARS) is None
    assert PATTERN_KINDS == ("request_found", "prose_fallback", "positional_cut")


def test_a_long_requests_details_stay_with_it() -> None:
    line = (
        "I need to rent a car in Los Angeles for a family trip next week, something big "
        "enough for five people and their luggage. I'll be picking it up on April 8th 2023 "
        "at 10 in the morning at the airport terminal. It goes back on April 10th to the "
        "same place, with a full tank. Our flight lands at terminal 4 around half past nine."
    )
    assert len(line) > 300  # read as sentences, not as one part
    message = f"{PY_TRACE * 20}\n{line}\n{PY_TRACE * 20}"
    assert read_message(message, REQUEST_CHARS, PROSE_CHARS) == (line, "request_found")


@pytest.mark.parametrize(
    "line",
    [
        "Solve a quadratic equation where a=2, b=6, and c=5",
        "Calculate the area under the curve from x=1 to x=5 for f(x)=x^2, and the slope at x=3.",
    ],
    ids=["coefficients", "bounds"],
)
def test_an_equations_variables_are_not_key_value_pairs(line: str) -> None:
    assert [p.text for p in parts(line)] == [line]


# --- a request behind a leading tag (issue V part 6) ---------------------------------------

#: Labels people open a message with, each with its test id.
TAGS = {
    "id": "[a1b2c3] ",
    "ticket": "[JIRA-123] ",
    "marker": "(urgent) ",
    "mention": "@bot ",
    "channel": "#ops ",
    "slack-mention": "<@U024BE7LH> ",
    "two-tags": "[PROJ-7] @bot ",
}


@pytest.mark.parametrize("placement", ["start", "end"])
@pytest.mark.parametrize("tag", TAGS.values(), ids=TAGS.keys())
def test_a_request_behind_a_tag_is_the_request_without_it(tag: str, placement: str) -> None:
    message = _placed(f"{tag}{ROE}", NGINX * 4, placement)
    assert read_message(message, REQUEST_CHARS, PROSE_CHARS) == (ROE, "request_found")
    assert Decoder(Settings())._pattern(message) == (ROE, "request_found")


@pytest.mark.parametrize("tag", TAGS.values(), ids=TAGS.keys())
def test_the_senders_words_behind_a_tag_open_the_message_as_without_it(tag: str) -> None:
    words = "Looking for a housekeeper in Chatuchak District on March 19 at 1 p.m."
    message = f"{tag}{words}\n\n{NGINX * 4}"
    assert read_message(message, REQUEST_CHARS, PROSE_CHARS) == (words, "prose_fallback")


@pytest.mark.parametrize(
    "line",
    [
        "[WARN] Disk almost full, please clean up /var/log",
        "[10:02] Ada: can you check the dashboard again",
        "[10:02 AM] Ada: can you check the dashboard again",
        "#define MAX_RETRIES 5",
        "[PROJ-12] Fixed the login redirect for SSO users",
        "> [JIRA-9] Please keep the old key for an hour.",
    ],
    ids=["log-level", "chat-time", "chat-time-am", "c-define", "changelog", "quote"],
)
def test_what_only_looks_like_a_tag_is_no_request(line: str) -> None:
    for message in (f"{line}\n{PY_TRACE * 10}", f"{PY_TRACE * 10}\n{line}"):
        assert [p for p in parts(message) if p.score >= REQUEST_SCORE] == []


def test_a_tagged_first_line_of_a_log_is_the_logs() -> None:
    log = "\n".join(f"[worker-{i}] please retry the payment" for i in range(5))
    assert [p for p in parts(f"{log}\n{PY_TRACE * 10}") if p.score >= REQUEST_SCORE] == []


def test_tagged_lines_inside_a_paste_are_the_pastes() -> None:
    tickets = [
        "Add retry to the payment client",
        "Update the on-call rota for December",
        "Migrate the billing database to Postgres 16",
        "Remove the legacy export endpoint",
    ]
    listed = "\n".join(f"[PROJ-{i}] {t}" for i, t in enumerate(tickets, 12))
    ask = "Which of these should I schedule first? Please create a calendar event for it."
    message = f"These are still open:\n{listed}\n{PY_TRACE * 10}\n{ask}"
    assert read_message(message, REQUEST_CHARS, PROSE_CHARS) == (ask, "request_found")
