"""`python -m inductor_bench` is `inductor-bench`."""

from .cli import main

main()
