"""A realistic traffic mix for Locust: ``locust -f loadtests/locustfile.py --host http://127.0.0.1:8080``.

Catalog sizes from 20 to 5,000 tools; most requests repeat a catalog a proxy session already
sent (warm), some bring a catalog never seen before (cold); patterns are half keyword-style
("slack send message"), half sentences from the benchmark queries. Tasks are weighted like a
fleet of proxies: small and medium catalogs dominate, and a few sessions carry huge ones.
"""

from __future__ import annotations

import random

from locust import FastHttpUser, between, task

from loadtests import workload

SEARCH = "/v1/tool-discovery/search"
HEADERS = {"Content-Type": "application/json"}
_SIZES = {"small": 20, "medium": 300, "large": 1_500, "huge": 5_000}
_CATALOGS = {
    name: workload.catalog(size, offset=97 * i) for i, (name, size) in enumerate(_SIZES.items())
}


class ProxyUser(FastHttpUser):
    """One proxy session: a pattern per model turn, against the session's deferred tools."""

    wait_time = between(0.05, 0.5)

    def on_start(self) -> None:
        self.rng = random.Random()

    def _search(self, tools: list[dict[str, object]], name: str) -> None:
        pattern = workload.patterns(self.rng, 1)[0]
        body = workload.body(pattern, tools, top_k=self.rng.choice([3, 5, 10]))
        with self.client.post(
            SEARCH, data=body, headers=HEADERS, name=name, catch_response=True
        ) as r:
            if r.status_code != 200:
                r.failure(f"status {r.status_code}")
            else:
                r.success()

    @task(40)
    def warm_small(self) -> None:
        self._search(_CATALOGS["small"], "warm 20")

    @task(30)
    def warm_medium(self) -> None:
        self._search(_CATALOGS["medium"], "warm 300")

    @task(8)
    def warm_large(self) -> None:
        self._search(_CATALOGS["large"], "warm 1500")

    @task(2)
    def warm_huge(self) -> None:
        self._search(_CATALOGS["huge"], "warm 5000")

    @task(15)
    def cold_medium(self) -> None:
        self._search(workload.fresh_catalog(self.rng, self.rng.choice([20, 50, 300])), "cold")

    @task(5)
    def subset_of_known(self) -> None:
        tools = _CATALOGS["large"]
        start = self.rng.randrange(len(tools) - 100)
        self._search(tools[start : start + 100], "known tools, new mix")
