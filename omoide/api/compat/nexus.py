"""The nexusAI memory-service routes (seed 000): sessions, episodes, entities, projects."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()
