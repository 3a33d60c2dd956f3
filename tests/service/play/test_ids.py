"""Ids the service hands out (games, ladder matches) can be typed on a command line as they
are: none begins with ``-``, which a shell tool would take for an option."""

from __future__ import annotations

import re

from mayi_service.play.tables import new_id


def test_fresh_ids_never_begin_with_a_dash():
    # One token_urlsafe id in 64 begins with "-": 5,000 draws would meet ~78 of them.
    ids = [new_id() for _ in range(5000)]
    assert not [i for i in ids if i.startswith("-")]
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{12}", i) for i in ids)
    assert len(set(ids)) == len(ids)
