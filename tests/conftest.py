"""Test configuration shared by every folder: Apache Beam's message that its optional BigQuery
client (apitools) is missing, logged once when PipelineDP imports Beam, is expected here and
dropped, so it does not show in the output of the tests that print their logs."""

from __future__ import annotations

import logging


class _ExpectedBeamMessages(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("apitools not found")


logging.getLogger().addFilter(_ExpectedBeamMessages())
