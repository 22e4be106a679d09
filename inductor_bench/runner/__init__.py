"""The torch side: workers that compile, capture and profile, and the orchestration that
starts them and saves what they measured."""
