"""``python -m paseo`` is the ``paseo`` command."""

import sys

from paseo.cli import main

sys.exit(main())
