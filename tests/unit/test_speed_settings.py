"""The speed and cache settings parse, and bad values fail naming the key."""

from __future__ import annotations

import pytest

from tool_selector.errors import ConfigError
from tool_selector.settings import Settings


@pytest.mark.parametrize(
    ("env", "field", "value"),
    [
        ({"TOOL_SELECTOR_ENCODER": "onnx-int8"}, "encoder", "onnx-int8"),
        ({"TOOL_SELECTOR_PIPELINE": "naive"}, "pipeline", "naive"),
        ({"TOOL_SELECTOR_REDIS_URL": "redis://r:6379/0"}, "redis_url", "redis://r:6379/0"),
        ({"TOOL_SELECTOR_EMBED_DEADLINE_MS": "0"}, "embed_deadline_ms", 0),
        ({"TOOL_SELECTOR_CATALOG_CACHE_TOOLS": "0"}, "catalog_cache_tools", 0),
    ],
    ids=["onnx", "naive", "redis-url", "deadline-zero", "catalog-cache-off"],
)
def test_speed_settings_parse(env: dict[str, str], field: str, value: object) -> None:
    assert getattr(Settings.from_env(env), field) == value


@pytest.mark.parametrize(
    "env",
    [
        {"TOOL_SELECTOR_PIPELINE": "fastest"},
        {"TOOL_SELECTOR_REDIS_TIMEOUT_MS": "0"},
        {"TOOL_SELECTOR_EMBED_QUEUE_SIZE": "0"},
    ],
    ids=["pipeline", "redis-timeout", "queue-size"],
)
def test_bad_speed_settings_fail_naming_the_key(env: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match=next(iter(env))):
        Settings.from_env(env)
