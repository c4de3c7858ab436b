from pathlib import Path
from typing import get_type_hints

import pytest

from tool_selector.errors import ConfigError
from tool_selector.offline.evaluation.dataset import BENCH_DIR_ENV, default_bench_dir
from tool_selector.settings import NOT_SETTINGS, Settings, settings_table


def test_defaults_are_the_embedded_setup() -> None:
    s = Settings.from_env({})
    assert (s.host, s.port, s.encoder) == ("127.0.0.1", 8080, "onnx-int8")


def test_values_are_parsed_by_type() -> None:
    s = Settings.from_env(
        {
            "TOOL_SELECTOR_PORT": "9000",
            "TOOL_SELECTOR_LOG_REDACT": "no",
            "TOOL_SELECTOR_ENCODER": "none",
        }
    )
    assert (s.port, s.log_redact, s.encoder) == (9000, False, "none")


@pytest.mark.parametrize(
    "env",
    [
        {"TOOL_SELECTOR_PORT": "eighty"},
        {"TOOL_SELECTOR_MAX_TOOLS": "0"},
        {"TOOL_SELECTOR_LOG_REDACT": "maybe"},
        {"TOOL_SELECTOR_ENCODER": "gpt"},
        {"TOOL_SELECTOR_MAX_TOOLZ": "5"},
    ],
    ids=["not-int", "below-min", "not-bool", "not-choice", "unknown-key"],
)
def test_bad_value_fails_naming_the_key(env: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match=next(iter(env))):
        Settings.from_env(env)


def test_other_environment_is_ignored() -> None:
    assert Settings.from_env({"PATH": "/bin", "HOME": "/root"}) == Settings()


@pytest.mark.parametrize("key", sorted(NOT_SETTINGS))
def test_the_project_s_other_programs_keys_do_not_stop_the_service(key: str) -> None:
    assert Settings.from_env({key: "/somewhere"}) == Settings()


def test_the_bench_folder_is_the_one_its_key_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(BENCH_DIR_ENV, str(tmp_path))
    assert default_bench_dir() == tmp_path
    monkeypatch.delenv(BENCH_DIR_ENV)
    assert default_bench_dir() != tmp_path


def test_table_lists_every_setting() -> None:
    table = settings_table()
    for name in Settings.__dataclass_fields__:
        assert f"TOOL_SELECTOR_{name.upper()}" in table


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"TOOL_SELECTOR_MAX_TOP_K": "abc"}, "expected a whole number"),
        ({"TOOL_SELECTOR_LOG_LEVEL": "loud"}, "expected one of debug, info"),
        ({"TOOL_SELECTOR_REDIS_URL": "localhost:6379"}, "expected a redis://"),
        ({"TOOL_SELECTOR_LEARN_REDIS_URL": "localhost"}, "expected a redis://"),
        ({"TOOL_SELECTOR_REDIS_URL": "redis://127.0.0.1:notaport/0"}, "redis-py can read"),
        ({"TOOL_SELECTOR_LEARN_REDIS_URL": "redis://h:99999/0"}, "Port out of range"),
        ({"TOOL_SELECTOR_REDIS_URL": "redis://h:6379/0?db=x"}, "Invalid value for 'db'"),
        ({"TOOL_SELECTOR_HEADER_TIMEOUT_SECONDS": "1e30"}, "must be <= 3600"),
        ({"TOOL_SELECTOR_LEARN_CALLER_SHARE": "2"}, "must be <= 1"),
        ({"TOOL_SELECTOR_REDIS_TTL_SECONDS": "10000000000000000"}, "must be <= 1e\\+15"),
        ({"TOOL_SELECTOR_MAX_PATTERN_CHARS": "31"}, "must be >= 32"),
    ],
    ids=[
        "not-int",
        "log-level",
        "redis-url",
        "learn-redis-url",
        "redis-port-not-a-number",
        "learn-redis-port-out-of-range",
        "redis-db-not-a-number",
        "header-timeout-past-granian",
        "caller-share-above-all",
        "redis-ttl-past-redis",
        "pattern-budget-below-a-sentence",
    ],
)
def test_a_value_the_service_cannot_use_says_what_it_expects(
    env: dict[str, str], expected: str
) -> None:
    with pytest.raises(ConfigError, match=expected):
        Settings.from_env(env)


FLOAT_KEYS = [
    f"TOOL_SELECTOR_{name.upper()}"
    for name, kind in get_type_hints(Settings).items()
    if kind is float
]


@pytest.mark.parametrize("key", FLOAT_KEYS)
@pytest.mark.parametrize("raw", ["nan", "inf", "-inf", "NaN"])
def test_a_number_that_is_not_finite_is_refused_naming_the_key(key: str, raw: str) -> None:
    with pytest.raises(ConfigError, match=f"{key}='{raw}': expected a finite number"):
        Settings.from_env({key: raw})


@pytest.mark.parametrize(
    "url",
    ["redis://redis:6379/0", "rediss://:secret@redis:6380/2", "unix:///run/redis.sock", ""],
)
def test_a_redis_url_redis_py_reads_is_kept(url: str) -> None:
    assert Settings.from_env({"TOOL_SELECTOR_REDIS_URL": url}).redis_url == url


def test_a_log_level_in_any_case_is_kept() -> None:
    assert Settings.from_env({"TOOL_SELECTOR_LOG_LEVEL": "debug"}).log_level == "debug"


@pytest.mark.parametrize(
    ("key", "named"),
    [
        ("TOOL_SELECTOR_TOP_K", "TOOL_SELECTOR_TOP_K (did you mean TOOL_SELECTOR_MAX_TOP_K?)"),
        ("TOOL_SELECTOR_ZZZ", "TOOL_SELECTOR_ZZZ: unset it"),
    ],
    ids=["typo", "no-likeness"],
)
def test_an_unknown_key_names_its_likely_spelling_if_any(key: str, named: str) -> None:
    with pytest.raises(ConfigError) as refused:
        Settings.from_env({key: "1"})
    assert named in str(refused.value)


def test_all_scopes_together_must_hold_one_full_scope() -> None:
    env = {"TOOL_SELECTOR_LEARN_MAX_EVENTS": "500", "TOOL_SELECTOR_LEARN_MAX_TOTAL_EVENTS": "499"}
    with pytest.raises(ConfigError) as raised:
        Settings.from_env(env)
    assert "TOOL_SELECTOR_LEARN_MAX_TOTAL_EVENTS=499" in str(raised.value)
    assert "TOOL_SELECTOR_LEARN_MAX_EVENTS=500" in str(raised.value)
    env["TOOL_SELECTOR_LEARN_MAX_TOTAL_EVENTS"] = "500"
    assert Settings.from_env(env).learn_max_total_events == 500
    assert Settings().learn_max_total_events >= Settings().learn_max_events
    with pytest.raises(ConfigError):
        Settings().with_overrides(learn_max_total_events=1)


@pytest.mark.parametrize(
    ("env", "named"),
    [
        (
            {"TOOL_SELECTOR_EMBED_DEADLINE_MS": "5000"},
            "TOOL_SELECTOR_EMBED_DEADLINE_MS=5000 is not below "
            "TOOL_SELECTOR_REQUEST_DEADLINE_SECONDS=2 (2000 ms)",
        ),
        (
            {
                "TOOL_SELECTOR_EMBED_DEADLINE_MS": "500",
                "TOOL_SELECTOR_REQUEST_DEADLINE_SECONDS": "0.5",
            },
            "TOOL_SELECTOR_EMBED_DEADLINE_MS=500 is not below "
            "TOOL_SELECTOR_REQUEST_DEADLINE_SECONDS=0.5",
        ),
        (
            {"TOOL_SELECTOR_SHORTLIST_RESCUE_MS": "2000"},
            "TOOL_SELECTOR_SHORTLIST_RESCUE_MS=2000 is not below "
            "TOOL_SELECTOR_REQUEST_DEADLINE_SECONDS=2",
        ),
        (
            {"TOOL_SELECTOR_MAX_BODY_BYTES": "2000", "TOOL_SELECTOR_BODY_BUFFER_BYTES": "1999"},
            "TOOL_SELECTOR_MAX_BODY_BYTES=2000 is above TOOL_SELECTOR_BODY_BUFFER_BYTES=1999",
        ),
    ],
    ids=[
        "embed-past-default-deadline",
        "embed-at-deadline",
        "rescue-at-deadline",
        "body-past-buffer",
    ],
)
def test_settings_that_bound_each_other_are_refused_naming_both(
    env: dict[str, str], named: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        Settings.from_env(env)
    assert named in str(refused.value)


@pytest.mark.parametrize(
    "env",
    [
        {"TOOL_SELECTOR_EMBED_DEADLINE_MS": "1999", "TOOL_SELECTOR_SHORTLIST_RESCUE_MS": "1999"},
        {"TOOL_SELECTOR_EMBED_DEADLINE_MS": "5000", "TOOL_SELECTOR_REQUEST_DEADLINE_SECONDS": "6"},
        {"TOOL_SELECTOR_ENCODER": "none", "TOOL_SELECTOR_REQUEST_DEADLINE_SECONDS": "0.005"},
        {"TOOL_SELECTOR_MAX_BODY_BYTES": "2000", "TOOL_SELECTOR_BODY_BUFFER_BYTES": "2000"},
    ],
    ids=["waits-below-deadline", "deadline-raised", "no-encoder-no-wait", "body-fills-buffer"],
)
def test_settings_that_agree_are_kept(env: dict[str, str]) -> None:
    assert Settings.from_env(env) != Settings()


def test_the_shortest_pattern_budget_is_kept() -> None:
    assert Settings.from_env({"TOOL_SELECTOR_MAX_PATTERN_CHARS": "32"}).max_pattern_chars == 32
