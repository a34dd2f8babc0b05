"""``plan_chunks`` counts a growing chunk's tokens incrementally; its chunks must be exactly
those of the rule as written (WilmerAI's estimate of the chunk's contents joined by newlines),
whatever the contents: empty, whitespace only, newlines and other whitespace inside."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from omoide.chunking import (
    ChunkMessage,
    Ledger,
    chunk_tokens,
    plan_chunks,
)
from omoide.config import ChunkConfig

CONTENT = st.text(alphabet=st.sampled_from(["a", "é", "東", " ", "\n", "\t", "\u00a0", "\u2028"]))


def reference(messages: list[ChunkMessage], config: ChunkConfig, standard: bool) -> list[int]:
    """Chunk sizes by the rule as written: the joined chunk re-estimated after each message."""
    eligible = messages[: max(0, len(messages) - config.lookback_start_turn)]
    sizes, current = [], []
    for message in eligible:
        current.append(message)
        full = chunk_tokens(current) >= config.chunk_estimated_token_size
        if full or (standard and len(current) >= config.max_messages_between_chunks):
            sizes.append(len(current))
            current = []
    return sizes


@settings(max_examples=300, deadline=None)
@given(
    contents=st.lists(CONTENT, max_size=30),
    tokens=st.integers(1, 40),
    most=st.integers(1, 8),
    standard=st.booleans(),
)
def test_chunks_are_those_of_the_joined_estimate(
    contents: list[str], tokens: int, most: int, standard: bool
) -> None:
    messages = [ChunkMessage(hash=f"h{i}", content=c, key=(i,)) for i, c in enumerate(contents)]
    config = ChunkConfig(
        chunk_estimated_token_size=tokens, max_messages_between_chunks=most, lookback_start_turn=1
    )
    decision = plan_chunks(messages, Ledger(exists=standard), config)
    assert [len(c) for c in decision.chunks] == reference(messages, config, standard)
