"""The query-aware adjustments of a ranking (omoide/retrieval/rerank.py): what a question's
speaker names and dates mean, and which words pseudo-relevance feedback adds."""

from __future__ import annotations

from datetime import UTC, datetime

from omoide import Memory
from omoide.retrieval.rerank import (
    MAX_PERIODS,
    Period,
    boost_factors,
    date_matches,
    feedback_terms,
    named_speakers,
    periods,
    speaker,
)
from omoide.store.protocol import NewMemory
from omoide.types import dt_to_ms


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_a_transcript_line_names_its_speaker() -> None:
    assert speaker("Caroline: I went to a support group.") == "caroline"
    assert speaker("Dr Ana Lima: take two a day") == "dr ana lima"
    assert speaker("I said: no") is None  # a lower-case start is not a name
    assert speaker("The user likes tea") is None


def test_a_question_names_a_speaker_by_first_name_or_possessive() -> None:
    speakers = {"caroline", "melanie"}
    assert named_speakers("What is Caroline's identity?", speakers) == {"caroline"}
    assert named_speakers("What did Caroline and Melanie paint?", speakers) == speakers
    assert named_speakers("What is the weather?", speakers) == set()


def test_dates_in_questions() -> None:
    assert periods("What did Gina find on 1 February, 2023?") == [Period(2023, 2, 1)]
    assert periods("What painting did she show on October 13, 2023?") == [Period(2023, 10, 13)]
    assert periods("What setback did Melanie face in October 2023?") == [Period(2023, 10)]
    assert periods("When did Melanie go camping in June?") == [Period(None, 6)]
    assert periods("How many times has she gone to the beach in 2023?") == [Period(2023)]
    assert periods("May I ask what you did?") == []  # "may" alone is the verb
    assert periods("When did she go to the museum?") == []


def test_a_query_that_repeats_dates_is_read_as_the_few_it_names() -> None:
    """Every candidate is compared with each period: a query that names one period thousands
    of times, or hundreds of years, must not make a search compare them all."""
    assert periods("what happened in May? " * 2000) == [Period(None, 5)]
    years = periods(" ".join(f"in {y}," for y in range(1900, 2100)))
    assert years == [Period(y) for y in range(1900, 1900 + MAX_PERIODS)]
    times = {"a": datetime(2023, 5, 3, tzinfo=UTC), "b": datetime(2023, 7, 3, tzinfo=UTC)}
    assert date_matches("in May " * 2000, times, 0) == date_matches("in May", times, 0) == {"a"}


def test_a_period_contains_the_days_after_it_up_to_the_slack() -> None:
    june = Period(None, 6)
    assert june.contains(at("2023-06-30T23:00:00"), 0)
    assert not june.contains(at("2023-07-01T00:00:00"), 0)
    assert june.contains(at("2023-07-10T00:00:00"), 14)
    assert not june.contains(at("2023-05-31T00:00:00"), 14)  # never before it
    december = Period(2022, 12)
    assert december.contains(at("2023-01-05T00:00:00"), 14)
    assert Period(2023, 10, 13).contains(at("2023-10-13T18:00:00"), 0)


def test_boosts_go_to_the_one_named_speaker_and_the_named_period() -> None:
    texts = {"a": "Caroline: hi", "b": "Melanie: hello", "c": "Melanie: in June"}
    times = {"a": at("2023-06-02T10:00:00"), "b": at("2023-05-01T10:00:00")}
    times["c"] = at("2023-06-20T10:00:00")
    factors = boost_factors("What did Melanie do in June?", texts, times, 0.25, 1.0, 0)
    assert factors == {"a": 2.0, "b": 1.25, "c": 2.5}
    both = boost_factors("What did Melanie and Caroline say?", texts, times, 0.25, 1.0, 0)
    assert both == {"a": 1.0, "b": 1.0, "c": 1.0}


def test_feedback_adds_the_words_the_top_hits_share() -> None:
    texts = [
        "Melanie: We went camping by the lake with the kids.",
        "Caroline: Camping by a lake sounds lovely!",
        "Melanie: The kids loved the lake and the marshmallows.",
    ]
    # most shared first (ties in order of appearance); once-only words and names are left out
    assert feedback_terms("Where has Melanie camped?", texts, 5) == ["lake", "camping", "kids"]
    assert feedback_terms("Where is the lake?", texts, 1) == ["camping"]


def test_search_puts_the_turns_of_the_named_month_and_speaker_first(memory: Memory) -> None:
    def said(text: str, when: str) -> NewMemory:
        return NewMemory(text=text, created_at_ms=dt_to_ms(at(when)))

    memory.add_many(
        [
            said("Melanie: We went camping by the lake.", "2023-03-10T10:00:00"),
            said("Caroline: We went camping by the lake.", "2023-03-12T10:00:00"),
            said("Melanie: We went camping by the lake.", "2023-06-20T10:00:00"),
        ],
        user_id="u",
    )
    hits = memory.search("Where did Melanie go camping in June?", user_id="u", limit=3).hits
    first = hits[0].memory
    assert (first.text, first.created_at.month) == ("Melanie: We went camping by the lake.", 6)
    hits = memory.search("Where did Caroline go camping?", user_id="u", limit=3).hits
    assert hits[0].memory.text.startswith("Caroline:")
    assert all(0.0 <= h.score <= 1.0 for h in hits)
