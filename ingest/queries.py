"""Read queries of the ingest app; one function per .sql file of the same name."""
from functools import lru_cache
from pathlib import Path

from store import client

SQL_DIR = Path(__file__).parent / "sql"


@lru_cache(maxsize=None)
def _sql(name: str) -> str:
    return (SQL_DIR / f"{name}.sql").read_text()


def ingest_status(project_id: int) -> dict:
    """{"spans_stored", "attempts_stored", "last_ingested_at"} for a project (None when nothing yet)."""
    [row] = client.query(_sql("ingest_status"), parameters={"project_id": project_id})
    if not row["spans_stored"]:
        row["last_ingested_at"] = None
    return row
