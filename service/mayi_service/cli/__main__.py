"""``python -m mayi_service.cli``: the ``mayi`` command line."""

from mayi_service.cli import main

main()
