"""The registry transport and client as the in-process hostile-registry tests drive them
(tests/publish/test_oci_http.py, test_oci_deadline.py, test_oci_auth.py, test_oci_realms.py,
test_oci_proxy.py, test_registry_client.py): short deadlines given explicitly, and one way to
assert a refusal."""

from __future__ import annotations

import base64
import ssl
import time
from collections.abc import Callable

import pytest

from horon_bundle.core.errors import Refused
from horon_bundle.publish.destinations.interface import OciAddress, parse_address
from horon_bundle.publish.destinations.oci_client import RegistryClient
from horon_bundle.publish.destinations.oci_deadline import Limits
from horon_bundle.publish.destinations.oci_http import Answer, RegistryHttp
from horon_bundle.publish.destinations.oci_proxy import read_proxies
from tests.hostile_registry import HostileRegistry

DISPLAY = "oci://test/ns"  # the transport's name in its messages
QUICK_HTTP = Limits(small=1.0, blob=1.0, min_blob_rate=1 << 20, connect=0.5, idle=0.6,
                    retry_delays=(0.01, 0.02))
QUICK_CLIENT = Limits(small=2.0, blob=2.0, connect=1.0, idle=1.0, retry_delays=(0.01, 0.02))
USER, PASSWORD = "ci", "pa55-word"
BASIC = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
CREDENTIALS = {"HORON_REGISTRY_USERNAME": USER, "HORON_REGISTRY_PASSWORD": PASSWORD}
REPO = "horon/example"


def transport(registry: HostileRegistry, limits: Limits = QUICK_HTTP, *,
              on_retry: Callable[[str], None] | None = None,
              tls: ssl.SSLContext | None = None) -> RegistryHttp:
    return RegistryHttp(registry.origin, display=DISPLAY, limits=limits, on_retry=on_retry,
                        tls=tls)


def get(http: RegistryHttp, url: str, **options: object) -> Answer:
    return http.send("GET", url, deadline=http.deadline(), **options)  # type: ignore[arg-type]


def client_of(registry: HostileRegistry, environ: dict[str, str] | None = None,
              limits: Limits = QUICK_CLIENT, said: list[str] | None = None, *,
              tls: ssl.SSLContext | None = None, named: str | None = None) -> RegistryClient:
    """A client of `registry` (with the test credentials unless `environ` says otherwise),
    through the proxies `environ` names; `named`: the registry by that host name (one only a
    test proxy resolves) over HTTPS, instead of its loopback address."""
    environ = CREDENTIALS if environ is None else environ
    address = parse_address(f"oci://{named}:{registry.port}/horon" if named
                            else registry.destination())
    assert isinstance(address, OciAddress)
    http = RegistryHttp(f"https://{named}:{registry.port}" if named else registry.origin,
                        display=address.display, limits=limits, tls=tls,
                        proxies=read_proxies(environ),
                        on_retry=None if said is None else said.append)
    return RegistryClient(address, environ, http=http)


def refusal(code: str, prefix: str, call: Callable[..., object], *args: object,
            **kwargs: object) -> str:
    """The message of the one finding `call` refuses with, after checking its code and that it
    starts with `prefix` (the registry's name), is one short line and holds no password."""
    with pytest.raises(Refused) as refused:
        call(*args, **kwargs)
    assert refused.value.codes() == [code], refused.value
    [finding] = refused.value.findings
    assert finding.message.startswith(prefix), finding.message
    assert "\n" not in finding.message and len(finding.message) < 600
    assert PASSWORD not in finding.message
    return finding.message


def timed(code: str, prefix: str, call: Callable[..., object], *args: object,
          **kwargs: object) -> tuple[float, str]:
    """`refusal`, and how long it took."""
    started = time.monotonic()
    finding = refusal(code, prefix, call, *args, **kwargs)
    return time.monotonic() - started, finding
