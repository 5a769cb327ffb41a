import sys

from paneboard.cli import main

sys.exit(main())
