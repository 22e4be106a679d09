"""inductor-bench: where a TorchInductor-compiled model spends its time."""

__version__ = "0.1.0"
