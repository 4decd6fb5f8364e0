"""Read queries of the ingest app; one function per .sql file of the same name."""
from pathlib import Path

from store import client
from store.sql import SqlFiles

_sql = SqlFiles(Path(__file__).parent / "sql").text


def ingest_status(project_id: int) -> dict:
    """{"spans_stored", "attempts_stored", "last_ingested_at", "forms"} for a project (None when nothing yet)."""
    [row] = client.query(_sql("ingest_status"), parameters={"project_id": project_id})
    if not row["spans_stored"]:
        row["last_ingested_at"] = None
    return {**row, "forms": ingest_forms(project_id)}


def ingest_forms(project_id: int) -> dict:
    """{service: {form: attempts}}: the span forms each service's attempts came in, most frequent first."""
    out: dict = {}
    for r in client.query(_sql("ingest_forms"), parameters={"project_id": project_id}):
        out.setdefault(r["service"], {})[r["form"]] = r["attempts"]
    return out
