"""store/reasons.py: the one enum of reason codes. docs/api.md's table lists exactly its members with their statuses,
every refusal in the code names a member (no reason as a bare string), and a code that is none of them is refused."""
import re
from pathlib import Path

import pytest

from ingest.errors import IngestError
from ingest.limits import OverLimit
from projects.errors import AccessError
from store.errors import ClickHouseError
from store.reasons import Reason

ROOT = Path(__file__).resolve().parents[2]
CODE_DIRS = ("alerts", "analysis", "budgets", "dashboard", "ingest", "latency_obs", "projects", "reports", "slos",
             "store", "simulator")
# a ReasonError subclass (or OverLimit) built from a string literal
BARE = re.compile(r"\b(?:[A-Z]\w*Error_?|OverLimit)\(\s*[\"'][a-z_]+[\"']")


def test_docs_table_is_the_enum():
    rows = re.findall(r"^\| `([a-z_]+)` \| (\d{3}) \|", (ROOT / "docs/api.md").read_text(), re.MULTILINE)
    assert dict((code, int(status)) for code, status in rows) == {r.value: r.status for r in Reason}
    assert len(rows) == len(Reason)


def test_no_refusal_names_its_reason_as_a_bare_string():
    bare = [f"{path.relative_to(ROOT)}:{text[:text.index(match.group())].count(chr(10)) + 1}"
            for d in CODE_DIRS for path in (ROOT / d).rglob("*.py")
            for text in [path.read_text()] for match in BARE.finditer(text)]
    assert bare == []


def test_the_status_comes_from_the_reason_unless_told():
    assert IngestError(Reason.BODY_TOO_LARGE, "big").status == 413
    assert AccessError(Reason.MISSING_SCOPE, "no").answer() == (403, "missing_scope", "no")
    assert OverLimit(Reason.RATE_LIMITED, "slow").status == 429
    assert ClickHouseError(Reason.UNAVAILABLE, "down").status == 503
    assert IngestError(Reason.MALFORMED_JSON, "x", status=422).status == 422
    assert IngestError("malformed_json", "x").reason is Reason.MALFORMED_JSON  # a known code as a string is its member


def test_an_unknown_code_is_refused():
    with pytest.raises(ValueError):
        IngestError("no_such_reason", "x")
