"""The one loader of .sql files: one statement per file, read once, with named fragments put in place.

A query names a fragment as `{{name}}` (on a line of its own or inside one); the fragment is the file
`_name.sql` of the same directory, its leading `--` comment lines (which say what it is) left out.
Fragments may name other fragments. Only values travel as server-side parameters (`{start:DateTime64(9)}`);
identifiers are literals in the files, never formatted in.

A part a statement can do without is a fragment with an empty stand-in beside it, `_no_name.sql` (its columns, no
row): `text(query, without=("name",))` puts the stand-in in its place, for a caller that knows the part would read
nothing (ClickHouse plans the whole tree of every part it is sent, rows or none).
"""
import re
from functools import lru_cache
from pathlib import Path

_INCLUDE = re.compile(r"\{\{([a-z][a-z0-9_]*)\}\}")


class SqlFiles:
    """The queries of one directory: `SqlFiles(dir).text("bucket_distribution")` is bucket_distribution.sql."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self.text = lru_cache(maxsize=None)(self._load)

    def _load(self, name: str, without: tuple[str, ...] = ()) -> str:
        included: set[str] = set()
        text = self._expand(self._read(name), (name,), frozenset(without), included)
        missing = sorted(set(without) - included)
        if missing:
            raise ValueError(f"query {name!r} has no part {missing[0]!r} to leave out")
        return text

    def _read(self, name: str) -> str:
        path = self.directory / f"{name}.sql"
        if not path.is_file():
            raise FileNotFoundError(f"no query {name!r}: {path} does not exist")
        return path.read_text()

    def _expand(self, text: str, seen: tuple, without: frozenset, included: set) -> str:
        def fragment(match: re.Match) -> str:
            name = match[1]
            if name in seen:
                raise ValueError(f"SQL fragment {name!r} includes itself ({' -> '.join(seen + (name,))})")
            included.add(name)
            lines = self._read(f"_no_{name}" if name in without else f"_{name}").splitlines()
            while lines and lines[0].lstrip().startswith("--"):
                lines.pop(0)
            return self._expand("\n".join(lines).strip(), seen + (name,), without, included)

        return _INCLUDE.sub(fragment, text)
