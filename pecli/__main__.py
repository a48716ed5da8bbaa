"""``python -m pecli`` and the ``pecli`` console script."""

from __future__ import annotations

import sys


def main() -> None:
    try:
        from pecli.cli.app import main as run
    except KeyboardInterrupt:  # Ctrl-C while the app is still importing: as quiet as later on
        sys.stderr.write("pecli: interrupted\n")
        sys.exit(130)
    sys.exit(run())


if __name__ == "__main__":
    main()
