import sys

from listener.cli import main

sys.exit(main())
