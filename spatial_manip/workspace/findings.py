"""One finding of a workspace check, the record check.py (the table and its fixtures) and
shelf_check.py (boards and slots) both write."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Finding:
    id: str
    status: str          # "ok" | "unexpected" | "table_ok" | "not_seen" (not checked), or one of check.PROBLEMS
    message: str
    distance_m: float | None = None
