"""`python -m dprelease`: the command line."""

from dprelease.cli import main

raise SystemExit(main())
