"""The order-scoring job with the Kafka action-state store (needs a broker).

Runs when ``FLINKGO_KAFKA`` names a bootstrap address (e.g. ``127.0.0.1:9092``,
a broker started by ``testdata``'s Kafka script); skipped otherwise. Each run
uses a fresh topic, which the store creates.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_e2e import check_failure_once_gives_the_same_committed_output

from flinkgo import GoAgentOptions

KAFKA = os.environ.get("FLINKGO_KAFKA", "")

pytestmark = [pytest.mark.e2e, pytest.mark.kafka,
              pytest.mark.skipif(not KAFKA, reason="needs FLINKGO_KAFKA (a Kafka bootstrap address)")]


def test_kafka_store_failure_once_gives_the_same_committed_output(env_factory: Callable[..., Any], agent_binary: str,
                                                                   tmp_path: Path) -> None:
    options = GoAgentOptions(
        binary=agent_binary,
        batch_size=32,
        action_state_store_backend="kafka",
        kafka_bootstrap_servers=KAFKA,
        kafka_action_state_topic=f"flinkgo-pytest-{uuid.uuid4().hex[:12]}",
        kafka_action_state_topic_num_partitions=4,
    )
    check_failure_once_gives_the_same_committed_output(env_factory, options, tmp_path)
