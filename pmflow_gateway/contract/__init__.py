"""The rules several stages and adapters share: pure functions, no I/O."""
