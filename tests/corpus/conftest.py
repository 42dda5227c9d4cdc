"""tests/corpus holds result files and the programs that produced them (`_generators`, run by hand, never by
`make test`: pytest-benchmark's own `test_*.py` among them); pytest collects nothing here."""

collect_ignore_glob = ["*"]
