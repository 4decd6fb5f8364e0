"""The one loader of .sql files: one statement per file, read once, with named fragments put in place.

A query names a fragment as `{{name}}` (on a line of its own or inside one); the fragment is the file
`_name.sql` of the same directory, its leading `--` comment lines (which say what it is) left out.
Fragments may name other fragments. Only values travel as server-side parameters (`{start:DateTime64(9)}`);
identifiers are literals in the files, never formatted in.
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

    def _load(self, name: str) -> str:
        return self._expand(self._read(name), (name,))

    def _read(self, name: str) -> str:
        path = self.directory / f"{name}.sql"
        if not path.is_file():
            raise FileNotFoundError(f"no query {name!r}: {path} does not exist")
        return path.read_text()

    def _expand(self, text: str, seen: tuple) -> str:
        def fragment(match: re.Match) -> str:
            name = match[1]
            if name in seen:
                raise ValueError(f"SQL fragment {name!r} includes itself ({' -> '.join(seen + (name,))})")
            lines = self._read(f"_{name}").splitlines()
            while lines and lines[0].lstrip().startswith("--"):
                lines.pop(0)
            return self._expand("\n".join(lines).strip(), seen + (name,))

        return _INCLUDE.sub(fragment, text)
