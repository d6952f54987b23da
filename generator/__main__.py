import sys

from generator.main import main

sys.exit(main())
