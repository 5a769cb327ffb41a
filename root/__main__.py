import sys

from paneboard.listener.cli import main

sys.exit(main())
