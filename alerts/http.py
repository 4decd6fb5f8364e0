"""One POST to an address checked beforehand: the TCP connection goes to that address while TLS and the
Host header still use the URL's name, so DNS cannot answer differently between check and send."""
from dataclasses import dataclass
from urllib.parse import urlsplit

import certifi
import urllib3


@dataclass
class Answer:
    status: int
    headers: urllib3.HTTPHeaderDict  # case-insensitive, as HTTP header names are
    text: str


def post(url: str, address: str, body: bytes, headers: dict, timeout: float) -> Answer:
    """POST without following redirects; urllib3.exceptions.HTTPError on connection errors and timeouts."""
    parts = urlsplit(url)
    host, https = parts.hostname, parts.scheme == "https"
    port = parts.port or (443 if https else 80)
    options = {"host": address, "port": port, "timeout": urllib3.Timeout(total=timeout), "retries": False,
               "maxsize": 1}
    if https:
        pool = urllib3.HTTPSConnectionPool(server_hostname=host, assert_hostname=host, cert_reqs="CERT_REQUIRED",
                                           ca_certs=certifi.where(), **options)
    else:
        pool = urllib3.HTTPConnectionPool(**options)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    host_header = host if parts.port is None else f"{host}:{parts.port}"
    with pool:
        response = pool.urlopen("POST", path, body=body, headers={**headers, "Host": host_header},
                                redirect=False, preload_content=True)
    return Answer(response.status, response.headers, response.data[:2000].decode("utf-8", "replace"))
