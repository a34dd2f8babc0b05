"""Issue 31: each hit's score is its own relevance, and facts do not lend each other words.

The default search scores every candidate from its own evidence (``omoide.retrieval.relevance``):
a hit's score must not move when other hits or other tenants change, must stay a probability
(unrelated hits near 0, answers well above), and a standalone fact must never be found by the
words of the fact written a second before it.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omoide import Memory
from omoide.retrieval.relevance import FEATURES, Evidence, features, relevance
from omoide.types import MemoryType, SearchHit

FACTS = [
    "We adopted a grey rabbit called Clover last spring.",
    "My sister Mira works as a nurse in Utrecht.",
    "I am allergic to peanuts.",
    "I prefer tea over coffee, green tea most of all.",
    "We moved to Rotterdam in 2021.",
    "I run 5 km every Tuesday before work.",
    "I use Neovim as my editor.",
    "I am learning Japanese with an app every evening.",
    "My manager Tomas is leaving the company in March.",
    "I cannot stand cilantro.",
    "We plan a trip to Lisbon in May.",
    "Our kids are Noor, seven, and Sem, four.",
    "I take levothyroxine every morning.",
    "I am building a weather station with a Raspberry Pi.",
    "My partner Jonas teaches history at a secondary school.",
    "I play the cello in an amateur orchestra.",
    "My favourite novel is The Left Hand of Darkness.",
    "I drive an old blue Volvo estate.",
    "I volunteer at the food bank on Saturdays.",
    "I broke my left wrist skiing two winters ago.",
]
# (question, index of the fact that answers it)
QUESTIONS = [
    ("Does the user have pets?", 0),
    ("What does the user's sister do for a living?", 1),
    ("Any food allergies I should know about?", 2),
    ("What does the user like to drink?", 3),
    ("Which city does the user live in?", 4),
    ("How does the user exercise?", 5),
    ("Which text editor does the user use?", 6),
    ("What language is the user studying?", 7),
    ("Which musical instrument does the user play?", 15),
    ("What car does the user drive?", 17),
]
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def facts(memory: Memory) -> tuple[Memory, list[str]]:
    """The 20 facts, one plain-text add each, a second apart (explicit times, no sleeping)."""
    ids = []
    for n, text in enumerate(FACTS):
        (item,) = memory.add(text, user_id="ann", timestamp=T0 + timedelta(seconds=n), infer=False)
        ids.append(item.id)
    return memory, ids


def test_a_fact_lends_no_words_to_its_neighbours(facts: tuple[Memory, list[str]]) -> None:
    memory, ids = facts
    for query, n in (
        ("Mira nurse Utrecht", 1),
        ("run on Tuesday", 5),
        ("trip to Lisbon", 10),
        ("food bank on Saturdays", 18),
    ):
        hits = memory.search(query, user_id="ann").hits
        assert hits[0].memory.id == ids[n], (query, [h.memory.text for h in hits[:3]])
        assert all(h.score < hits[0].score for h in hits[1:])
        # only the fact holds the words: the facts written a second before and after it did
        # not take them as context
        words = memory.search(query, user_id="ann", recipe="keyword").hits
        assert [h.memory.id for h in words] == [ids[n]]
        assert all("keyword" not in h.signals for h in hits[1:])


def test_scores_are_probabilities_that_mean_what_they_say(
    facts: tuple[Memory, list[str]],
) -> None:
    """Calibration sanity: each answer is the best hit, the answers score far above the rest,
    unrelated hits score near 0, and the scores of all hits add up to about as many relevant
    hits as there are (one a question; the model, fitted on harder tenants, is cautious)."""
    memory, ids = facts
    answers, others, total = [], [], 0.0
    for question, n in QUESTIONS:
        hits = memory.search(question, user_id="ann", limit=20).hits
        assert hits[0].memory.id == ids[n], question
        for h in hits:
            (answers if h.memory.id == ids[n] else others).append(h.score)
        total += sum(h.score for h in hits)
    mean_answer, mean_other = sum(answers) / len(answers), sum(others) / len(others)
    assert mean_other <= 0.05
    assert mean_answer >= 10 * mean_other
    assert 0.3 * len(QUESTIONS) <= total <= 2.0 * len(QUESTIONS)


def test_nothing_said_scores_below_the_threshold(facts: tuple[Memory, list[str]]) -> None:
    memory, _ = facts
    for question in ("What is the user's favourite football team?", "Is the user married?"):
        assert memory.search(question, user_id="ann", threshold=0.3).hits == [], question


def test_a_hits_score_ignores_other_hits_and_tenants(facts: tuple[Memory, list[str]]) -> None:
    """The same hit scores the same whether or not the other hits are filtered out of the
    result, and after another tenant writes memories about the same things."""
    memory, ids = facts
    question, n = QUESTIONS[3]
    before = {h.memory.id: h.score for h in memory.search(question, user_id="ann").hits}
    alone = memory.search(
        question,
        user_id="ann",
        filters={
            "created_after": T0 + timedelta(seconds=n - 0.5),
            "created_before": T0 + timedelta(seconds=n + 0.5),
        },
    ).hits
    assert [h.memory.id for h in alone] == [ids[n]]
    assert alone[0].score == pytest.approx(before[ids[n]], abs=1e-9)
    for text in FACTS:
        memory.add(f"Bob says: {text}", user_id="bob", infer=False)
    after = {h.memory.id: h.score for h in memory.search(question, user_id="ann").hits}
    assert after == before


@settings(max_examples=200, deadline=None)
@given(
    cosine=st.one_of(st.none(), st.floats(-1, 1)),
    keyword=st.floats(0, 50),
    coverage=st.floats(0, 1),
    flags=st.tuples(st.booleans(), st.booleans(), st.booleans()),
    bump=st.floats(0.0, 1.0),
)
def test_more_evidence_never_lowers_the_score(
    cosine: float | None,
    keyword: float,
    coverage: float,
    flags: tuple[bool, bool, bool],
    bump: float,
) -> None:
    """Monotone in every kind of evidence, for turns and standalone memories alike."""
    speaker, date, turn = flags
    base = Evidence(cosine, keyword, coverage, speaker, date, turn)
    score = relevance(base)
    assert 0.0 <= score < 1.0
    assert len(features(base)) == len(FEATURES)
    raised = None if cosine is None else min(1.0, cosine + bump)
    stronger = [
        Evidence(raised, keyword, coverage, speaker, date, turn),
        Evidence(cosine, keyword + bump, coverage, speaker, date, turn),
        Evidence(cosine, keyword, min(1.0, coverage + bump), speaker, date, turn),
        Evidence(cosine, keyword, coverage, True, date, turn),
        Evidence(cosine, keyword, coverage, speaker, True, turn),
    ]
    for better in stronger:
        assert relevance(better) >= score


def test_a_small_tenant_raises_the_odds_and_a_large_one_keeps_them() -> None:
    """The prior: the same evidence scores higher in a tenant smaller than the ones the model
    was fitted on, more so the smaller, and the same from that size up or when unknown."""
    for turn in (False, True):
        evidence = Evidence(0.45, 2.0, 0.5, turn=turn)
        fitted = relevance(evidence)
        by_size = [relevance(replace(evidence, population=n)) for n in (2, 10, 40)]
        assert by_size == sorted(by_size, reverse=True) and by_size[-1] >= fitted
        assert by_size[0] > fitted
        for large in (10_000, 1_000_000):
            assert relevance(replace(evidence, population=large)) == fitted


def test_a_fact_in_a_tiny_tenant_clears_the_threshold(memory: Memory) -> None:
    """Two facts: a question one of them answers finds it above 0.3 (the same evidence in a
    tenant of the fitted size scores below it), the other fact below 0.3."""
    memory.add("The user likes jasmine tea", user_id="tiny", infer=False)
    memory.add("The user lives in Shenzhen", user_id="tiny", infer=False)
    hits = memory.search("What does the user like to drink?", user_id="tiny", limit=5).hits
    assert hits[0].memory.text == "The user likes jasmine tea" and hits[0].score >= 0.3
    assert all(h.score < 0.3 for h in hits[1:])
    signals = hits[0].signals
    keyword = signals["keyword"].score if "keyword" in signals else 0.0
    fitted = Evidence(signals["vector"].score, keyword, signals["coverage"].score)
    assert relevance(fitted) < 0.3


def test_a_fact_extracted_from_a_session_is_scored_as_a_standalone_memory(
    memory: Memory,
) -> None:
    """A derived memory keeps its session's id, yet is a fact, not one turn among many: it
    scores as the same text written on its own does."""
    session = memory.add(
        [{"role": "user", "content": "The user likes jasmine tea"}],
        user_id="a",
        session_id="chat-1",
        infer=False,
    )
    derived = memory.add(
        "The user likes jasmine tea",
        user_id="b",
        session_id="chat-1",
        type=MemoryType.SEMANTIC,
        infer=False,
    )
    alone = memory.add("The user likes jasmine tea", user_id="c", infer=False)
    query = "What tea does the user like?"

    def score(user: str) -> tuple[float, dict[str, float]]:
        (hit,) = memory.search(query, user_id=user, limit=1).hits
        return hit.score, {k: v.score for k, v in hit.signals.items()}

    assert session and derived and alone
    assert "turn" in score("a")[1] and "turn" not in score("b")[1]
    assert score("b") == score("c")


def test_a_keyword_hit_outside_the_vector_list_is_scored_by_its_own_cosine(
    memory: Memory,
) -> None:
    """A hit the keyword list finds but the vector list (the nearest 100) does not is scored
    by its own cosine, read with its text, not by where that list ended: 120 diary turns
    nearer the query in meaning push it out of the list, and its cosine stays what the list
    gave before (its bm25 moves with the tenant's statistics, as it should)."""
    for n in range(50):
        memory.add(f"Note {n}: the boiler was serviced.", user_id="ann", infer=False)
    (target,) = memory.add("Invoice QX-7741 is due Friday.", user_id="ann", infer=False)
    query = "sunny beach holiday by the sea with the kids on Friday"

    def hit() -> SearchHit:
        found = {h.memory.id: h for h in memory.search(query, user_id="ann", limit=100).hits}
        return found[target.id]

    before = hit()
    places = ["Bali", "Crete", "Goa", "Phuket", "Mallorca", "Tenerife", "Cancun", "Fiji"]
    diary = [
        {"role": "user", "content": f"Day {n} in {places[n % 8]}: we swam and built sandcastles."}
        for n in range(120)
    ]
    memory.add(diary, user_id="ann", session_id="diary", infer=False)
    after = hit()
    assert "vector" not in after.signals  # out of the list, its cosine read for the score
    cosine = after.signals["cosine"].score
    assert cosine == pytest.approx(before.signals["vector"].score, abs=1e-6)
    evidence = Evidence(
        cosine=cosine,
        keyword=after.signals["keyword"].score,
        coverage=after.signals["coverage"].score,
        population=171,
    )
    assert after.score == pytest.approx(relevance(evidence), abs=1e-9)


def test_what_the_user_said_outranks_the_assistants_retelling_of_it(memory: Memory) -> None:
    """In a chat between a user and an assistant, the user's own message is the memory of the
    user; the assistant's long reply repeats its words (and more of the question's) without
    being the answer. Its score says so (``assistant`` evidence), not only its rank."""
    chat = [
        ("user", "I booked a week in Kyoto for the cherry blossoms, flying out on April 3."),
        (
            "assistant",
            "A week in Kyoto for the cherry blossoms is a wonderful plan! When you go to Kyoto"
            " in April, the blossoms along the Philosopher's Path and in Maruyama Park are at"
            " their best; going early in the morning avoids the crowds. The user-friendly"
            " Kyoto bus pass helps you get around, and booking temples ahead is wise.",
        ),
        ("user", "Thanks! Can you also suggest a good rice cooker?"),
        (
            "assistant",
            "Sure: a fuzzy-logic rice cooker from Zojirushi or Tiger is reliable and simple.",
        ),
    ]
    memory.add(
        [{"role": r, "content": c} for r, c in chat], user_id="ann", session_id="s1", infer=False
    )
    hits = memory.search("When is the user going to Kyoto?", user_id="ann", limit=4).hits
    assert hits[0].memory.text == chat[0][1], [h.memory.text[:40] for h in hits]
    retelling = next(h for h in hits if h.memory.text == chat[1][1])
    assert retelling.signals["assistant"].score == 1.0
    assert "assistant" not in hits[0].signals
