"""GET /api/v1/health: the server is up (and the baseline the benchmark compares with)."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel

router = APIRouter(prefix="/api/v1", tags=["health"])


class Health(BaseModel):
    status: Literal["ok"] = "ok"


@router.get("/health", response_model=Health)
async def health() -> Health:
    """Always ``{"status": "ok"}`` while the server runs."""
    return Health()
