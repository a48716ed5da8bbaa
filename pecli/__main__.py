"""``python -m pecli`` and the ``pecli`` console script."""

from __future__ import annotations

import gc
import sys


def main() -> None:
    # no cycle collection while Typer and the command's options are built (tens of thousands of
    # objects, none of them garbage): the command turns it back on (pecli.cli.app.start_collecting)
    gc.disable()
    try:
        from pecli.cli.app import main as run
    except KeyboardInterrupt:  # Ctrl-C while the app is still importing: as quiet as later on
        sys.stderr.write("pecli: interrupted\n")
        sys.exit(130)
    sys.exit(run())


if __name__ == "__main__":
    main()
