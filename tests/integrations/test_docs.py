"""Each page of docs/integrations shows its example file exactly as the tests run it."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).parents[2]
PAGES = {
    "langgraph.md": "examples/langgraph_store.py",
    "openai-agents.md": "examples/openai_agents_tools.py",
    "llamaindex.md": "examples/llamaindex_memory.py",
    "typescript.md": "clients/typescript/examples/quickstart.ts",
}


@pytest.mark.parametrize(("page", "example"), PAGES.items())
def test_page_shows_the_tested_example(page: str, example: str) -> None:
    text = (REPO / "docs" / "integrations" / page).read_text()
    code = (REPO / example).read_text()
    lang = "ts" if example.endswith(".ts") else "python"
    assert f"```{lang}\n{code}```" in text, f"{page}: the example differs from {example}"


def test_every_page_says_what_was_tested_and_what_is_missing() -> None:
    for page in PAGES:
        text = (REPO / "docs" / "integrations" / page).read_text()
        assert "## Tested with" in text and "## Not supported yet" in text, page
