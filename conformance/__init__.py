"""Conformance checks: privacy and accuracy contracts for registered mechanisms."""
