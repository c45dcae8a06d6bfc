"""``python -m wmr_dynamics.sweep``: the ``wmr-sweep`` command line."""

import sys

from wmr_dynamics.sweep.cli import main

if __name__ == "__main__":
    sys.exit(main())
