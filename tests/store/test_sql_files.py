"""The one SQL loader: fragments in place, nested, cached, and loud about mistakes."""
import pytest

from store.sql import SqlFiles


def test_fragments_are_put_in_place_without_their_comment_lines(tmp_path):
    (tmp_path / "_window.sql").write_text("-- the window\n-- (two lines of comment)\nqueued_at >= {start:DateTime64(9)}\n")
    (tmp_path / "_filter.sql").write_text("project_id = {p:UInt32} AND {{window}}\n")
    (tmp_path / "q.sql").write_text("SELECT 1\nFROM t\nWHERE {{filter}}\n  AND x = 1\n")
    assert SqlFiles(tmp_path).text("q") == (
        "SELECT 1\nFROM t\nWHERE project_id = {p:UInt32} AND queued_at >= {start:DateTime64(9)}\n  AND x = 1\n")


def test_a_query_is_read_once(tmp_path):
    (tmp_path / "q.sql").write_text("SELECT 1")
    files = SqlFiles(tmp_path)
    assert files.text("q") == "SELECT 1"
    (tmp_path / "q.sql").write_text("SELECT 2")
    assert files.text("q") == "SELECT 1"


def test_a_missing_query_or_fragment_and_a_loop_are_errors(tmp_path):
    (tmp_path / "q.sql").write_text("SELECT {{nope}}")
    (tmp_path / "_a.sql").write_text("{{b}}")
    (tmp_path / "_b.sql").write_text("{{a}}")
    (tmp_path / "loop.sql").write_text("{{a}}")
    files = SqlFiles(tmp_path)
    with pytest.raises(FileNotFoundError, match="_nope.sql"):
        files.text("q")
    with pytest.raises(FileNotFoundError, match="missing"):
        files.text("missing")
    with pytest.raises(ValueError, match="includes itself"):
        files.text("loop")
