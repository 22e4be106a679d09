"""The commands: options in, one call into core/runner, a document out, an exit code."""
