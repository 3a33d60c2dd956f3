"""Registration refuses every webhook address that delivery refuses (issue 20): a host
written as an IPv4 address in any form the resolver reads (``2130706433``, ``127.1``,
``0x7f.1``, ``0``: they passed registration and were refused only at delivery), and both
refuse the special ranges that passed both: 6to4 addresses of private or loopback ones,
Teredo, site-local ``fec0::/10``, ``192.0.0.8``, ``192.88.99.1``, IPv4-compatible IPv6.
One function decides (``addresses.address_problem``), over the real API on a real socket
with the default ``MAYI_WEBHOOK_ALLOW_PRIVATE=false``. A host is read as the resolver reads
it (``socket.inet_aton``, after the IDNA mapping that turns full-width digits and
ideographic full stops into ASCII: those passed registration too), and every refusal is
one line that names the field.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests

from mayi_service.bots.addresses import RefusedURL, resolve

TIMEOUT = 30

#: Hosts of webhook URLs that name an address that is not public, and what it is.
REFUSED = [
    ("2130706433", "127.0.0.1", "loopback"),  # decimal
    ("127.1", "127.0.0.1", "loopback"),  # short
    ("0x7f.1", "127.0.0.1", "loopback"),  # hexadecimal
    ("0x7f000001", "127.0.0.1", "loopback"),
    ("017700000001", "127.0.0.1", "loopback"),  # octal
    ("0177.0.0.1", "127.0.0.1", "loopback"),
    ("0", "0.0.0.0", "unspecified"),
    ("127.0.0.1.", "127.0.0.1", "loopback"),  # a final dot
    ("3232235777", "192.168.1.1", "private"),
    ("0xa9.0xfe.0xa9.0xfe", "169.254.169.254", "metadata"),
    ("[2002:7f00:1::1]", "2002:7f00:1::1", "6to4 address of 127.0.0.1, a loopback"),
    ("[2002:c0a8:101::1]", "2002:c0a8:101::1", "6to4 address of 192.168.1.1, a private"),
    ("[2002:a9fe:a9fe::1]", "2002:a9fe:a9fe::1", "cloud metadata"),
    ("[2001:0:4136:e378:8000:63bf:3fff:fdd2]", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"),
    # Teredo of 127.0.0.1 (its client's address is stored inverted): the address is named.
    ("[2001:0:4136:e378:8000:63bf:80ff:fffe]", "2001:0:4136:e378:8000:63bf:80ff:fffe", "Teredo address of 127.0.0.1"),
    ("[fec0::1]", "fec0::1", "site-local"),
    ("192.0.0.8", "192.0.0.8", "IETF protocol assignment"),
    ("192.88.99.1", "192.88.99.1", "6to4 relay anycast"),
    ("[::127.0.0.1]", "::7f00:1", "IPv4-compatible"),
    ("[::ffff:127.0.0.1]", "::ffff:7f00:1", "IPv4-mapped"),
    ("[::ffff:8.8.8.8]", "::ffff:808:808", "IPv4-mapped"),
    # What the resolver maps to ASCII first (IDNA): full-width digits, ideographic full stops.
    ("\uff11\uff12\uff17.\uff10.\uff10.\uff11", "127.0.0.1", "loopback"),
    ("127\u30020\u30020\u30021", "127.0.0.1", "loopback"),
    ("\uff10\uff58\uff17\uff46.\uff11", "127.0.0.1", "loopback"),  # 0x7f.1
    ("192\uff0e168\uff0e1\uff0e1", "192.168.1.1", "private"),
]


@pytest.fixture
def base(live_server: Any) -> Iterator[str]:
    yield live_server.url


@pytest.mark.parametrize(("host", "address", "why"), REFUSED)
def test_registration_refuses_what_delivery_refuses(base: str, host: str, address: str, why: str) -> None:
    url = f"http://{host}:8080/hook"
    refused = requests.post(f"{base}/v1/bots", json={"name": "Sneaky", "webhook_url": url}, timeout=TIMEOUT)
    assert refused.status_code == 422, refused.text
    detail = refused.json()["detail"]
    assert detail.startswith("webhook_url: ") and why in detail and "MAYI_WEBHOOK_ALLOW_PRIVATE" in detail, detail
    if host.strip("[]").rstrip(".") != address:
        assert f"({address})" in detail, detail  # the address the host is written as, named
    # Setting it later is refused the same way.
    bot = requests.post(f"{base}/v1/bots", json={"name": "Later"}, timeout=TIMEOUT)
    assert bot.status_code == 201, bot.text
    auth = {"Authorization": f"Bearer {bot.json()['token']}"}
    patched = requests.patch(f"{base}/v1/bots/me", json={"webhook_url": url}, headers=auth, timeout=TIMEOUT)
    assert patched.status_code == 422 and why in patched.json()["detail"], patched.text
    # And delivery refuses it (the resolver reads the host as registration did).
    with pytest.raises(RefusedURL, match=why):
        resolve(url)


@pytest.mark.parametrize(
    "host",
    ["134744072", "8.8.8.8", "[2002:808:808::1]", "[2606:4700:4700::1111]"],  # 8.8.8.8, its 6to4, Cloudflare's
)
def test_public_addresses_in_any_form_are_accepted(base: str, host: str) -> None:
    """Read as addresses, like the loopback forms beside them that are refused."""
    refused = requests.post(
        f"{base}/v1/bots", json={"name": "L", "webhook_url": "https://2130706433/"}, timeout=TIMEOUT
    )
    assert refused.status_code == 422, refused.text
    url = f"https://{host}/hook"
    created = requests.post(f"{base}/v1/bots", json={"name": "Public", "webhook_url": url}, timeout=TIMEOUT)
    assert created.status_code == 201, created.text
    assert resolve(url).address in ("8.8.8.8", "2002:808:808::1", "2606:4700:4700::1111")


def test_a_name_that_only_looks_numeric_is_a_host_name(base: str) -> None:
    """Not an address in any form: a name, resolved (and checked) at delivery; while the
    numbers of an address, even past 255 in its last part, are an address."""
    refused = requests.post(f"{base}/v1/bots", json={"name": "L", "webhook_url": "http://127.0.256/"}, timeout=TIMEOUT)
    assert refused.status_code == 422 and "(127.0.1.0)" in refused.json()["detail"], refused.text
    url = "https://1.2.3.256.example/hook"
    created = requests.post(f"{base}/v1/bots", json={"name": "Named", "webhook_url": url}, timeout=TIMEOUT)
    assert created.status_code == 201, created.text


@pytest.mark.parametrize(
    "url",
    [
        "http://127.1:8080/hook",  # refused for its address
        "http://\uff11\uff12\uff17.\uff10.\uff10.\uff11/hook",
        "http://no-such-host.invalid/hook",  # does not resolve
        "ftp://bot.example/hook",  # refused for its form
    ],
)
def test_a_refused_url_names_the_field_and_why_in_one_line(url: str) -> None:
    """The message is the delivery log's ``error`` (after ``refused: ``) and the API's detail."""
    with pytest.raises(RefusedURL) as refused:
        resolve(url)
    message = str(refused.value)
    assert message.startswith("webhook_url: ") and "\n" not in message, message
    assert any(why in message for why in ("loopback", "does not resolve", "https://")), message
