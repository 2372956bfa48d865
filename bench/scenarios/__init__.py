"""One module per scenario; each has `async def run(bootstrap, *, quick) -> dict`."""
