"""``python -m nodeweave.kge``: the ``nodeweave-kge`` command line."""

import sys

from nodeweave.kge.cli import main

sys.exit(main())
