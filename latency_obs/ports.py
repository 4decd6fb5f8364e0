"""The one-line answer of a start-up whose port is taken: which port, why, and what to change."""
import errno

from django.core.management.base import CommandError

# what `make run` passes to `up` (Makefile: run) and the command's own flag, per server
HINTS = {"web": ("PORT", "--port"), "grpc": ("GRPC_PORT", "--grpc-port")}
WHAT = {"web": "web and OTLP/HTTP", "grpc": "OTLP/gRPC"}


def port_error(server: str, host: str, port: int, exc: OSError, make_run: bool = True) -> CommandError:
    """A CommandError (Django prints it as one line, exit status 1, no traceback) naming the port, the reason
    and the variable (for `make run`) or flag to change."""
    variable, flag = HINTS[server]
    reason = "in use by another process" if exc.errno == errno.EADDRINUSE else (exc.strerror or str(exc))
    change = f"{variable}=<port> make run, or {flag} <port>" if make_run else f"{flag} <port>"
    return CommandError(f"cannot listen on {host}:{port} for {WHAT[server]} ({reason}): choose another port with "
                        f"{change}")
