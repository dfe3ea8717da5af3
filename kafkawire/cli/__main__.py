"""``python -m kafkawire.cli``: the same as the ``kafkawire`` console script."""

import sys

from .main import main

sys.exit(main())
