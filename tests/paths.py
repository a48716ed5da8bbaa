"""Where the tests' files are, whichever folder a test lives in."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent  #: the checkout
DATA = TESTS / "data"  #: tables, configs and corpora the tests read (each with the script that wrote it)
SNAPSHOTS = TESTS / "snapshots"  #: the terminal views' committed captures
