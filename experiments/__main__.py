"""``python -m tabular.experiments [NAME ...] [--quick] [--out DIR] [--runs N] [--set KEY=VALUE]
[--backend local|ray] [--force] [--replot] [--wait SECONDS] [--list]``; ``NAME --help`` lists
its settings; ``--set alpha=0.1,0.5`` sweeps a setting, one folder ``NAME@alpha=...`` per
point."""

import sys

from tabular.experiments.harness.cli import main

if __name__ == "__main__":
    sys.exit(main())
