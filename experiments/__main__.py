"""``python -m experiments [NAME ...] [--quick] [--out DIR] [--runs N] [--backend local|ray]
[--force] [--replot] [--list]``."""

import sys

from .runner import main

sys.exit(main())
