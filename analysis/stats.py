"""Pure math on rows the queries return: rank correlation, least-squares slope, bucket widths.

No I/O and no third-party imports. Every function returns None where the value is undefined
(too few points, no variance), never 0.
"""
import math

# Series bucket widths (ms) that read well on an axis; those past a minute are whole minutes.
NICE_WIDTHS_MS = (1_000, 2_000, 5_000, 10_000, 15_000, 20_000, 30_000, 60_000, 120_000, 300_000, 600_000,
                  900_000, 1_800_000, 3_600_000, 7_200_000, 21_600_000, 86_400_000)


def finite(x):
    """x as a float, or None when it is None, NaN or infinite (ClickHouse's empty aggregates)."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def ratio(numerator, denominator):
    """numerator / denominator, None when the denominator is 0 or either is unknown."""
    if numerator is None or not denominator:
        return None
    return numerator / denominator


def ranks(xs: list[float]) -> list[float]:
    """1-based ranks of xs; ties share the mean of their ranks."""
    order = sorted(range(len(xs)), key=xs.__getitem__)
    out = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def pearson(xs: list[float], ys: list[float]):
    """Pearson's r; None for fewer than 3 pairs or when either side has no variance."""
    n = len(xs)
    if n < 3 or n != len(ys):
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if not sxx or not syy:
        return None
    return sxy / math.sqrt(sxx * syy)


def spearman(xs: list[float], ys: list[float]):
    """Spearman's rank correlation (Pearson's r of the ranks, ties averaged); None as pearson()."""
    if len(xs) != len(ys):
        return None
    return pearson(ranks(xs), ranks(ys))


def slope(xs: list[float], ys: list[float]):
    """Least-squares slope of ys on xs (units of y per unit of x); None for < 2 points or constant xs."""
    n = len(xs)
    if n < 2 or n != len(ys):
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if not sxx:
        return None
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx


def pairs(rows: list[dict], x: str, y: str) -> tuple[list[float], list[float]]:
    """The (x, y) columns of rows where both are finite numbers."""
    kept = [(finite(r[x]), finite(r[y])) for r in rows]
    kept = [(a, b) for a, b in kept if a is not None and b is not None]
    return [a for a, _ in kept], [b for _, b in kept]


def series_width_ms(window_ms: float, points: int = 200) -> int:
    """Bucket width for about `points` points over a window: the smallest nice width >= window / points
    (at least 1 s). Widths under a minute divide it; longer ones are whole minutes."""
    target = max(1_000.0, window_ms / points)
    for width in NICE_WIDTHS_MS:
        if width >= target:
            return width
    return NICE_WIDTHS_MS[-1]
