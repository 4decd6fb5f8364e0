#!/usr/bin/env python
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "latency_obs.settings")
    from django.core.management import execute_from_command_line

    from store.errors import ClickHouseError

    try:
        execute_from_command_line(sys.argv)
    except ClickHouseError as exc:
        if exc.reason != "store_busy":
            raise
        # chDB allows one process per data directory: say who holds it instead of a stack trace
        sys.exit(f"error: {exc}")
