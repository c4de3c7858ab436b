"""The Grafana dashboard and the alert rules ask only for series that are exported.

Every PromQL expression of ``deploy/grafana/tool-selector.json`` (panel targets and the
namespace variable) and of the ``PrometheusRule`` is parsed with ``promql-parser`` (a port of
Prometheus' own grammar). Each metric an expression selects must be in a real scrape: the
service's ``/metrics`` after searches, an error and feedback, and the companion client's
registry after calls made through it (the client's metrics live in the proxy's process, on
the registry it passes). Each label an expression uses, in a matcher, ``by``/``without``,
``on``/``ignoring`` or ``group_left``, must be on that metric's samples, or be one Prometheus
adds to every target it scrapes (``TARGET_LABELS``). The two parts of each ratio count the
requests of the same routes (``COUNTED_ON``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import promql_parser
import pytest
import yaml
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from tests.support import (
    ROOT,
    SAMPLE_TOOLS,
    free_port,
    start_service,
    wait_until,
    warm_catalog,
)
from tool_selector.metrics import LATENCY_BUCKETS, ROUTES
from tool_selector_client import ClientMetrics, Rollout, SelectorClient
from tool_selector_client.metrics import LATENCY_BUCKETS as CLIENT_BUCKETS
from tool_selector_client.wire import FEEDBACK_PATH, SEARCH_ID_HEADER, SEARCH_PATH

DASHBOARD = ROOT / "deploy" / "grafana" / "tool-selector.json"
RULES = ROOT / "deploy" / "k8s" / "components" / "servicemonitor" / "prometheusrule.yaml"
#: Labels Prometheus attaches to every series of a scraped target (ServiceMonitor or pod).
TARGET_LABELS = frozenset({"namespace", "pod", "job", "instance"})
#: Grafana's interval variables, replaced by a duration PromQL parses.
GRAFANA_INTERVALS = {"$__rate_interval": "5m", "$__interval": "1m", "$__range": "1h"}
#: The proxy's latency budget (docs/operations.md, Metrics): p95 <= 150 ms.
BUDGET_S = 0.15
LATENCY_ALERTS = ("ToolSelectorLatencyOverBudget", "ToolSelectorClientLatencyOverBudget")
#: One encoder, no multilingual arm (a quick start); shadow compare on, so its metrics exist;
#: a Redis URL nothing listens on, so the breaker opens and its transitions are counted.
SERVICE_ENV = {
    "TOOL_SELECTOR_SECOND_ENCODER": "false",
    "TOOL_SELECTOR_MULTILINGUAL": "false",
    "TOOL_SELECTOR_SHADOW": "relevance",
}
PATTERN = "post a message to the team's slack channel"
#: Series that come after the answers: shadow compare runs once the response is sent, and
#: some of the Redis calls that open the breaker are the writer thread's.
LATE = ("tool_selector_shadow_top1_total", "tool_selector_redis_breaker_transitions_total")

#: The routes (``metrics.ROUTES``) whose requests each series of a ratio's part counts; an
#: ``errors_total`` selector's own ``route`` matchers narrow its routes. A ratio of two
#: different series divides counts of the same routes (``ratio_problems``).
SEARCHES = frozenset({"search", "compress"})
COUNTED_ON = {
    "tool_selector_request_duration_seconds_count": SEARCHES,
    "tool_selector_request_duration_seconds_bucket": SEARCHES,
    "tool_selector_empty_answers_total": SEARCHES,
    "tool_selector_no_match_total": SEARCHES,
    "tool_selector_learned_answers_total": SEARCHES,
    "tool_selector_errors_total": frozenset(ROUTES),
    "tool_selector_feedback_total": frozenset({"feedback"}),
}

Exported = Mapping[str, frozenset[str]]


def _panels(panels: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for panel in panels:
        yield panel
        yield from _panels(panel.get("panels", []))


def _label_values(query: str) -> str:
    """Grafana's ``label_values(selector, label)`` as the PromQL that asks the same."""
    found = re.fullmatch(r"label_values\((.+),\s*(\w+)\)", query.strip())
    assert found, f"not a label_values query: {query}"
    return f"group by ({found[2]}) ({found[1]})"


def dashboard_expressions() -> list[tuple[str, str]]:
    doc = json.loads(DASHBOARD.read_text())
    found = [
        (f"panel {panel['title']!r} {target['refId']}", target["expr"])
        for panel in _panels(doc["panels"])
        for target in panel.get("targets", [])
    ]
    found += [
        (f"variable {var['name']}", _label_values(var["query"]))
        for var in doc["templating"]["list"]
        if var["type"] == "query"
    ]
    return found


def rules() -> list[dict[str, Any]]:
    doc = yaml.safe_load(RULES.read_text())
    return [rule for group in doc["spec"]["groups"] for rule in group["rules"]]


def rule_expressions() -> list[tuple[str, str]]:
    return [(f"alert {rule['alert']}", rule["expr"]) for rule in rules()]


EXPRESSIONS = dashboard_expressions() + rule_expressions()
IDS = [where for where, _ in EXPRESSIONS]


def parse(expr: str) -> promql_parser.Expr:
    for variable, value in GRAFANA_INTERVALS.items():
        expr = expr.replace(variable, value)
    assert "$__" not in expr, f"a Grafana variable PromQL cannot read: {expr}"
    return promql_parser.parse(expr)


def _nodes(expr: promql_parser.Expr) -> list[promql_parser.Expr]:
    found: list[promql_parser.Expr] = []

    def visit(node: promql_parser.Expr) -> bool:
        found.append(node)
        return True

    promql_parser.walk(expr, visit)
    return found


def _metric(selector: promql_parser.VectorSelector) -> str:
    """The metric a selector names ("" for a ``__name__`` regex, which names none)."""
    names = [m.value for m in selector.matchers.matchers if m.name == "__name__"]
    return selector.name or next(iter(names), "")


def _selectors(expr: promql_parser.Expr) -> list[promql_parser.VectorSelector]:
    return [n for n in _nodes(expr) if isinstance(n, promql_parser.VectorSelector)]


def _groupings(expr: promql_parser.Expr) -> Iterator[tuple[promql_parser.Expr, list[str]]]:
    """Each ``by``/``without``, ``on``/``ignoring`` and ``group_left``/``group_right`` label
    list, with the subexpression whose series must carry those labels."""
    for node in _nodes(expr):
        if isinstance(node, promql_parser.AggregateExpr) and node.modifier:
            yield node.expr, node.modifier.labels
        elif isinstance(node, promql_parser.BinaryExpr) and node.modifier:
            matching = node.modifier.matching
            labels = [*(matching.labels if matching else []), *(node.modifier.group_labels or [])]
            yield node, labels


def problems(expr: promql_parser.Expr, exported: Exported) -> list[str]:
    """What ``expr`` asks for that ``exported`` (series name -> its labels) does not have."""
    found = []
    for selector in _selectors(expr):
        name = _metric(selector)
        if name not in exported:
            found.append(f"no series {name!r}")
            continue
        used = {m.name for m in selector.matchers.matchers} - {"__name__", *TARGET_LABELS}
        found += [f"{name} has no label {label!r}" for label in used - exported[name]]
    for sub, labels in _groupings(expr):
        names = {_metric(s) for s in _selectors(sub)}
        have = TARGET_LABELS.union(*(exported.get(n, frozenset()) for n in names))
        missing = [label for label in labels if label not in have]
        found += [f"no label {label!r} on {sorted(names)}" for label in missing]
    return found


def _matches(matcher: promql_parser.Matcher, value: str) -> bool:
    op = matcher.op
    if op in (promql_parser.MatchOp.Equal, promql_parser.MatchOp.NotEqual):
        found = value == matcher.value
    else:
        found = re.fullmatch(matcher.value, value) is not None
    return found == (op in (promql_parser.MatchOp.Equal, promql_parser.MatchOp.Re))


def routes(expr: promql_parser.Expr) -> frozenset[str] | None:
    """The routes whose requests the series ``expr`` selects count (``None``: one is not in
    ``COUNTED_ON``)."""
    found: set[str] = set()
    for selector in _selectors(expr):
        counted = COUNTED_ON.get(_metric(selector))
        if counted is None:
            return None
        for m in selector.matchers.matchers:
            if m.name == "route":
                counted = frozenset(r for r in counted if _matches(m, r))
        found |= counted
    return frozenset(found)


def ratio_problems(expr: promql_parser.Expr) -> list[str]:
    """Each ratio of ``expr`` whose parts select different series counting other routes."""
    found = []
    for node in _nodes(expr):
        if not isinstance(node, promql_parser.BinaryExpr) or str(node.op) != "/":
            continue
        names = [{_metric(s) for s in _selectors(part)} for part in (node.lhs, node.rhs)]
        if names[0] == names[1]:
            continue
        counts = [routes(part) for part in (node.lhs, node.rhs)]
        if None in counts or counts[0] != counts[1]:
            found.append(f"{node.lhs} counts routes {counts[0]}, {node.rhs} {counts[1]}")
    return found


def series(text: str) -> dict[str, frozenset[str]]:
    """Each sample name of a Prometheus text exposition, with the labels its samples carry."""
    labels: dict[str, set[str]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels.setdefault(sample.name, set()).update(sample.labels)
    return {name: frozenset(names) for name, names in labels.items()}


def _exercise(url: str) -> None:
    """Searches answered and empty, a malformed body, feedback kept with an unshown name."""
    warm_catalog(url, SAMPLE_TOOLS)
    answered = httpx.post(url + SEARCH_PATH, json={"pattern": PATTERN, "tools": SAMPLE_TOOLS})
    assert answered.status_code == 200, answered.text
    empty = {"pattern": PATTERN, "tools": SAMPLE_TOOLS, "filters": {"deny": ["*"]}}
    assert httpx.post(url + SEARCH_PATH, json=empty).json()["selected_names"] == []
    bad = httpx.post(url + SEARCH_PATH, content=b"{", headers={"Content-Type": "application/json"})
    assert bad.status_code == 400
    called = [answered.json()["selected_names"][0], "not_in_the_answer"]
    body = {"search_id": answered.headers[SEARCH_ID_HEADER], "called": called}
    assert httpx.post(url + FEEDBACK_PATH, json=body).status_code == 200


def _client_scrape(url: str) -> str:
    """The client's metrics after a shadow call to the service and one to a closed port."""
    registry = CollectorRegistry()
    metrics = ClientMetrics(registry)
    with SelectorClient(url) as up, SelectorClient(f"http://127.0.0.1:{free_port()}") as down:
        assert Rollout(up, "shadow", metrics=metrics).search(PATTERN, SAMPLE_TOOLS).tools
        Rollout(down, "enforce", metrics=metrics).search(PATTERN, SAMPLE_TOOLS)
    return generate_latest(registry).decode()


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Exported:
    env = {**SERVICE_ENV, "TOOL_SELECTOR_REDIS_URL": f"redis://127.0.0.1:{free_port()}/0"}
    service = start_service(tmp_path_factory.mktemp("dashboards"), env)
    try:
        _exercise(service.url)
        client = series(_client_scrape(service.url))

        def scraped() -> dict[str, frozenset[str]]:
            found = series(httpx.get(service.url + "/metrics").text)
            return found if all(name in found for name in LATE) else {}

        return {**wait_until(scraped, 30, " and ".join(LATE)), **client}
    finally:
        service.stop()


def test_the_files_hold_enough_expressions() -> None:
    assert len(EXPRESSIONS) >= 8
    assert len(rule_expressions()) >= 5
    assert len(dashboard_expressions()) >= 8


@pytest.mark.parametrize(("where", "expr"), EXPRESSIONS, ids=IDS)
def test_expression_parses_and_names_our_metrics(where: str, expr: str) -> None:
    names = [_metric(s) for s in _selectors(parse(expr))]
    assert names, where
    assert all(name.startswith("tool_selector_") for name in names), names


@pytest.mark.parametrize(("where", "expr"), EXPRESSIONS, ids=IDS)
def test_expression_asks_for_exported_series_and_labels(
    exported: Exported, where: str, expr: str
) -> None:
    assert problems(parse(expr), exported) == [], where


EXAMPLE: Exported = {
    "tool_selector_ranking_path_total": frozenset({"path"}),
    "tool_selector_request_duration_seconds_bucket": frozenset({"outcome", "le"}),
}


@pytest.mark.parametrize(
    ("expr", "problem"),
    [
        ("sum by (path) (rate(tool_selector_ranking_path_total[5m]))", None),
        ("rate(tool_selector_ranking_path[5m])", "no series 'tool_selector_ranking_path'"),
        ("tool_selector_ranking_path_total{paht='x'}", "has no label 'paht'"),
        ("sum by (contract) (tool_selector_ranking_path_total)", "no label 'contract'"),
        ("sum without (pod, stage) (tool_selector_ranking_path_total)", "no label 'stage'"),
        (
            "tool_selector_ranking_path_total / ignoring(outcome) group_left(tier) "
            "tool_selector_request_duration_seconds_bucket",
            "no label 'tier'",
        ),
        ("tool_selector_request_duration_seconds{outcome='match'}", "no series"),
    ],
    ids=["fine", "counter-without-total", "matcher", "by", "without", "group-left", "histogram"],
)
def test_the_check_finds_what_is_not_exported(expr: str, problem: str | None) -> None:
    found = problems(parse(expr), EXAMPLE)
    if problem is None:
        assert found == []
    else:
        assert len(found) == 1
        assert problem in found[0]


@pytest.mark.parametrize(("where", "expr"), EXPRESSIONS, ids=IDS)
def test_each_ratio_s_parts_count_the_same_routes(where: str, expr: str) -> None:
    assert ratio_problems(parse(expr)) == [], where


ERRORS = "sum(rate(tool_selector_errors_total{%s}[5m]))"
SEARCHED = " / sum(rate(tool_selector_request_duration_seconds_count[5m]))"


@pytest.mark.parametrize(
    ("expr", "fine"),
    [
        (ERRORS % 'route=~"search|compress"' + SEARCHED, True),
        (ERRORS % 'route!~"feedback|lint|other"' + SEARCHED, True),
        (ERRORS % 'code="overloaded"' + SEARCHED, False),
        (ERRORS % 'route="search"' + SEARCHED, False),
        (ERRORS % 'route!="feedback"' + SEARCHED, False),
        (ERRORS % 'code="x"' + " / sum(rate(tool_selector_errors_total[5m]))", True),
        (ERRORS % 'route="feedback"' + " / sum(rate(tool_selector_feedback_total[5m]))", True),
        ("sum(rate(tool_selector_shadow_top1_total[5m]))" + SEARCHED, False),
    ],
    ids=["search", "not-others", "all-paths", "one-contract", "lint", "same", "feedback", "other"],
)
def test_the_ratio_check_finds_parts_counting_other_routes(expr: str, fine: bool) -> None:
    assert (ratio_problems(parse(expr)) == []) == fine


@pytest.mark.parametrize("rule", rules(), ids=[r["alert"] for r in rules()])
def test_alert_says_for_how_long_how_bad_and_what_to_do(rule: dict[str, Any]) -> None:
    assert re.fullmatch(r"\d+[mh]", rule["for"])
    assert rule["labels"]["severity"] in {"warning", "critical"}
    assert rule["annotations"]["summary"]
    assert "What to do:" in rule["annotations"]["description"]


@pytest.mark.parametrize("alert", LATENCY_ALERTS)
def test_latency_alert_fires_over_the_budget_at_a_bucket_bound(alert: str) -> None:
    """A p95 threshold on a bucket bound is exact: histogram_quantile interpolates between
    bounds, so a threshold inside a bucket would fire on an estimate."""
    (rule,) = [r for r in rules() if r["alert"] == alert]
    expr = parse(rule["expr"])
    assert isinstance(expr, promql_parser.BinaryExpr)
    assert isinstance(expr.rhs, promql_parser.NumberLiteral)
    assert expr.rhs.val == BUDGET_S
    assert BUDGET_S in LATENCY_BUCKETS
    assert BUDGET_S in CLIENT_BUCKETS


def test_dashboard_panels_have_unique_ids_and_one_datasource_variable() -> None:
    doc = json.loads(DASHBOARD.read_text())
    ids = [panel["id"] for panel in _panels(doc["panels"])]
    assert len(ids) == len(set(ids))
    sources = {
        json.dumps(target["datasource"])
        for panel in _panels(doc["panels"])
        for target in panel.get("targets", [])
    }
    assert sources == {json.dumps({"type": "prometheus", "uid": "${datasource}"})}


def test_dashboard_file_is_what_the_grafana_component_ships() -> None:
    kustomization = yaml.safe_load((DASHBOARD.parent / "kustomization.yaml").read_text())
    (generator,) = kustomization["configMapGenerator"]
    assert [Path(f).name for f in generator["files"]] == [DASHBOARD.name]
    assert generator["options"]["labels"] == {"grafana_dashboard": "1"}
