"""Benchmarks (not part of the test run): `python -m bench`."""
