"""The one loader of analysis's SQL: every query of every analysis package is a file of analysis/sql/ (fragments,
named with a leading underscore, included by {{ name }}), read through store.sql.SqlFiles."""
from pathlib import Path

from store.sql import SqlFiles

SQL_DIR = Path(__file__).parent / "sql"
sql = SqlFiles(SQL_DIR).text
