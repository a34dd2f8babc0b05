"""The WilmerAI discussion memory (seed 004): /v1/discussions/{discussion_id}/...."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()
