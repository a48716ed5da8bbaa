"""``python -m pecli`` and the ``pecli`` console script."""

from __future__ import annotations

import sys


def main() -> None:
    from pecli.cli.app import main as run

    sys.exit(run())


if __name__ == "__main__":
    main()
