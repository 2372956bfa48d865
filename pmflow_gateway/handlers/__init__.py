"""What each stage decides: pure cores that take one event and return the next."""
