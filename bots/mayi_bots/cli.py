"""Run a reference bot against a server: ``python -m mayi_bots.<name> --server URL ...``.

By polling (the default)::

    python -m mayi_bots.strong --server http://127.0.0.1:8000 --token "$TOKEN"

or by webhook (the service POSTs each decision to ``http://HOST:PORT/``, signed with the
bot's webhook secret; the bot still answers through the API with its token)::

    python -m mayi_bots.strong --server http://127.0.0.1:8000 --token "$TOKEN" --webhook 8080 --secret "$SECRET"

The token may come from the environment (``MAYI_TOKEN``) instead of the command line
(which other users of the machine can read), the secret likewise (``MAYI_WEBHOOK_SECRET``).
Without a token the bot registers a new bot account (``POST /v1/bots``, named ``--name``)
and prints its id and token once on standard error: keep the token to run it again as
the same bot. With ``--webhook`` too, the account is registered with its webhook URL
(``--url``, default ``http://HOST:PORT/``) and the secret the service gave it is used
(and printed once). ``--join GAME_ID`` (repeatable) first takes a seat at that table, under
``--name``. It then plays every game its account sits in until interrupted (Ctrl-C), or,
with ``--until-idle``, until none of its games is still going.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

from mayi_sdk import Client, run_polling
from mayi_sdk.helpers import EngineMissing
from mayi_sdk.webhooks import serve_webhooks


def main(name: str, argv: list[str] | None = None) -> int:
    """Parse ``argv`` and run the reference bot ``name`` until interrupted."""
    from . import make

    parser = argparse.ArgumentParser(prog=f"python -m mayi_bots.{name}", description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", required=True, help="the service's base URL, e.g. http://127.0.0.1:8000")
    parser.add_argument("--token", default=os.environ.get("MAYI_TOKEN"), help="the bot's token (or MAYI_TOKEN)")
    parser.add_argument("--name", default=name, help=f"the name to register under without a token (default {name})")
    parser.add_argument("--webhook", type=int, metavar="PORT", help="receive decisions by webhook on this port")
    parser.add_argument("--host", default="127.0.0.1", help="the webhook receiver's address (default 127.0.0.1)")
    parser.add_argument(
        "--secret", default=os.environ.get("MAYI_WEBHOOK_SECRET"), help="the webhook secret (or MAYI_WEBHOOK_SECRET)"
    )
    parser.add_argument("--join", action="append", default=[], metavar="GAME_ID", help="first take a seat there")
    parser.add_argument("--url", help="registering with --webhook: the URL the service posts to")
    parser.add_argument("--until-idle", action="store_true", help="polling: stop once no game of the bot is going")
    parser.add_argument("--seed", type=int, help="seed of a bot that draws random numbers (random, expert)")
    parser.add_argument(
        "--budget", type=float, metavar="SECONDS", help="a searching bot's CPU seconds a decision (expert)"
    )
    args = parser.parse_args(argv)
    if args.webhook is not None and not args.secret and args.token:
        parser.error("--webhook needs --secret (or MAYI_WEBHOOK_SECRET): the secret the service signs deliveries with")
    try:
        bot = make(name, seed=args.seed, budget=args.budget)
    except EngineMissing as exc:  # (expert searches with the rules engine)
        print(f"python -m mayi_bots.{name}: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    token, secret = args.token, args.secret
    if not token:
        url = None if args.webhook is None else (args.url or f"http://{args.host}:{args.webhook}/")
        with Client(args.server) as anonymous:
            account = anonymous.register_bot(args.name, webhook_url=url)
        token = account.token
        print(f"registered bot {account.bot_id} ({args.name}); its token, shown only once: {token}", file=sys.stderr)
        if url is not None:
            secret = account.webhook_secret
            print(f"its webhook secret, shown only once: {secret} (deliveries to {url})", file=sys.stderr)
    with Client(args.server, token) as client:
        for game_id in args.join:
            taken = client.take_seat(game_id, args.name)
            print(f"{name}: seat {taken.seat} at {game_id}", file=sys.stderr)
        try:
            if args.webhook is not None:
                print(f"{name}: receiving decisions at http://{args.host}:{args.webhook}/", file=sys.stderr)
                serve_webhooks(bot, client, secret, args.host, args.webhook)
            else:
                stats = run_polling(bot, client, until_idle=args.until_idle)
                print(f"{name}: {stats.moves} moves in {len(stats.games)} games", file=sys.stderr)
        except KeyboardInterrupt:
            pass
    return 0
