"""`python -m inductor_bench` is `inductor-bench`."""

from .entry import main

main()
