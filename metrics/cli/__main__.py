"""``python -m kometrics.cli`` (what ``accelerate launch -m kometrics.cli ...`` runs): the ``kometrics`` command."""

import sys

from . import main

sys.exit(main())
