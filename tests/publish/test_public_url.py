"""`HORON_PUBLISH_PUBLIC_URL` (publish/public_url.py): the https address a store is served
from, normalised, or refused with `publish.public-url` without echoing credentials; and the
pinned host downloads from every address accepted here (its `plugin validate` judges archive
URLs), and refuses the local ones refused here."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from horon_bundle.core.errors import Refused
from horon_bundle.publish.public_url import PublicUrl, parse_public_url, read_public_url
from tests.claude_host import ClaudeHost

NO_NETWORK = ["unshare", "--user", "--map-root-user", "--net", "--"]
ACCEPTED = {
    "https://plugins.example.com": ("https://plugins.example.com", "plugins.example.com"),
    "https://Plugins.Example.COM/": ("https://plugins.example.com", "plugins.example.com"),
    "https://acme.github.io/horon-plugins/": ("https://acme.github.io/horon-plugins",
                                              "acme.github.io"),
    "HTTPS://cdn.example.com:8443/a/b%20c": ("https://cdn.example.com:8443/a/b%20c",
                                            "cdn.example.com"),
    "https://203.0.113.7/store": ("https://203.0.113.7/store", "203.0.113.7"),
    "https://[2001:db8::1]/": ("https://[2001:db8::1]", "2001:db8::1"),
}
REFUSED = {
    "http://plugins.example.com": "scheme 'http'",
    "file:///srv/store": "scheme 'file'",
    "plugins.example.com": "scheme ''",
    "https://user:pw@plugins.example.com": "user information",
    "https://plugins.example.com/?x=1": "query or fragment",
    "https://plugins.example.com/#top": "query or fragment",
    "https://plugins.example.com/a b": "whitespace",
    "https://plugins.example.com:0/": "port 0",
    "https://plugins.example.com:99999/": "cannot be parsed",
    "https:///path": "no host",
    "https://localhost/": "local or cloud metadata name",
    "https://store.localhost/": "local or cloud metadata name",
    "https://metadata.google.internal/": "local or cloud metadata name",
    "https://127.0.0.1:8443/": "loopback",
    "https://[::1]/": "loopback",
    "https://169.254.169.254/": "loopback, link-local",
    "https://under_score.example/": "not a host name",
    "https://plugins.example.com//a": "path",
    "https://plugins.ex\u00e4mple.com/": "non-ASCII",
}


@pytest.mark.parametrize("value", list(ACCEPTED))
def test_an_https_address_is_normalised(value: str) -> None:
    base, host = ACCEPTED[value]
    assert parse_public_url(value) == PublicUrl(base=base, host=host)
    assert parse_public_url(value).of("blobs/sha256/ab") == f"{base}/blobs/sha256/ab"


@pytest.mark.parametrize("value", list(REFUSED))
def test_an_address_claude_code_cannot_download_from_is_refused(value: str) -> None:
    with pytest.raises(Refused) as refused:
        parse_public_url(value)
    [finding] = refused.value.findings
    assert finding.code.name == "publish.public-url"
    assert REFUSED[value] in finding.message, finding.message
    assert "pw@" not in finding.message


def test_unset_or_empty_means_no_marketplace() -> None:
    assert read_public_url({}) is None
    assert read_public_url({"HORON_PUBLISH_PUBLIC_URL": ""}) is None


@pytest.mark.process
def test_the_pinned_host_takes_every_address_taken_here(tmp_path: Path,
                                                         claude_host: ClaudeHost) -> None:
    refused_here = ("https://localhost/", "https://store.localhost/", "https://127.0.0.1:8443/",
                    "https://169.254.169.254/", "https://metadata.google.internal/",
                    "http://plugins.example.com")
    urls = [f"{parse_public_url(v).base}/blobs/sha256/{'0' * 64}" for v in ACCEPTED]
    urls += [f"{v.rstrip('/')}/blobs/sha256/{'0' * 64}" for v in refused_here]
    market = tmp_path / "market"
    (market / ".claude-plugin").mkdir(parents=True)
    (market / ".claude-plugin" / "marketplace.json").write_text(json.dumps({
        "name": "team-tools", "owner": {"name": "Team"}, "description": "addresses",
        "plugins": [{"name": f"kit-{i}", "version": "1.0.0", "source": {
            "source": "archive", "url": url, "sha256": "0" * 64}}
            for i, url in enumerate(urls)]}))
    ran = claude_host.run("plugin", "validate", market, "--json", home=tmp_path / "home",
                          prefix=NO_NETWORK)
    report = ran.json()
    assert isinstance(report, dict)
    refused = {int(found.group(1)) for error in report["manifest"]["errors"]
               if (found := re.fullmatch(r"plugins\.(\d+)\.source\.url", error["path"]))}
    assert refused == set(range(len(ACCEPTED), len(urls))), report["manifest"]["errors"]
