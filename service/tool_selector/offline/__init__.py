"""Tools that do not serve: the CLI, evaluation, shadow-compare and its report, the proxy-log
reader, the naive baseline used by the benchmarks."""
