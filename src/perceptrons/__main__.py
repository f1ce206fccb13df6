"""``python -m perceptrons``: the same as the ``perceptrons`` command."""

from perceptrons.cli import main

raise SystemExit(main())
