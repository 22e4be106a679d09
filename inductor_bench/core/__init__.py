"""The pure side: trace parsing, classification, aggregation, statistics, records and diffs.
Never imports torch (tests/test_layers.py checks)."""
