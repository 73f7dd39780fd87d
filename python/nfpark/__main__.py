"""`python3 -m nfpark VERB ...` (what `nfpark VERB ...` forwards to)."""

import sys

from nfpark.cli import main

sys.exit(main())
