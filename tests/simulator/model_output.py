"""What the simulator's own tests compute from its output (the model's attempts, the records of a preset's emitted
spans), computed once per machine and code and read back after: while the simulator is unchanged they need not
simulate again. Kept beside the simulated traffic (tests/simulated.py: the same folder, named for the simulator's
code). The presets' and incidents' model runs were ~55 CPU-s of a warm `make test` (2026-11-29)."""
import hashlib
import os
import pickle
import zlib
from collections.abc import Callable
from pathlib import Path

from tests.simulated import _cache_dir, _load


def model_output(what: tuple, make: Callable[[], object], *sources: str | Path) -> object:
    """make()'s value (picklable). `what` names it; `sources` are the test files that shape it (their text is part of
    the key, as the simulator's is of the folder's name)."""
    digest = hashlib.sha256(repr(what).encode())
    for source in sources:
        digest.update(Path(source).read_bytes())
    path = _cache_dir() / f"{digest.hexdigest()[:24]}.value"
    hit = _load(path)
    if hit is not None:
        return hit[0]
    value = make()
    # written as tests/simulated.py's generated() writes its bodies; not a helper shared with it, because that file's
    # text is part of the traffic's digest: moving its write would send every machine's cache back to cold
    scratch = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    scratch.write_bytes(zlib.compress(pickle.dumps((value,), protocol=pickle.HIGHEST_PROTOCOL), 1))
    os.replace(scratch, path)  # whole or not at all: another worker may read it now
    return value
