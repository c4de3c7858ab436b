"""Load tests: a Locust mix (``locustfile.py``) and a bounded benchmark (``bench.py``)."""
