"""A TCP proxy in the test's event loop, in front of a real server, that the test can make
refuse connections, hang (connections stay open, no byte passes either way) and restore.

A hung link keeps what was sent and delivers it on restore, as a healed network does.
"""

from __future__ import annotations

import asyncio
import contextlib
from urllib.parse import urlsplit, urlunsplit

from tests.support.processes import free_port


class TcpProxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = free_port()
        self._server: asyncio.Server | None = None
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._links: set[asyncio.StreamWriter] = set()
        self._pumps: set[asyncio.Task[None]] = set()

    @classmethod
    def in_front_of(cls, url: str) -> TcpProxy:
        parts = urlsplit(url)
        return cls(parts.hostname or "127.0.0.1", parts.port or 5432)

    def url(self, url: str) -> str:
        """`url` with its host and port replaced by the proxy's."""
        parts = urlsplit(url)
        userinfo = parts.netloc.rpartition("@")[0]
        netloc = f"{userinfo}@127.0.0.1:{self.port}" if userinfo else f"127.0.0.1:{self.port}"
        return urlunsplit(parts._replace(netloc=netloc))

    async def start(self) -> TcpProxy:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", self.port)
        return self

    async def _accept(self, client_r: asyncio.StreamReader,
                      client_w: asyncio.StreamWriter) -> None:
        try:
            server_r, server_w = await asyncio.open_connection(*self.target)
        except OSError:
            client_w.transport.abort()
            return
        self._links |= {client_w, server_w}
        for reader, writer in ((client_r, server_w), (server_r, client_w)):
            task = asyncio.create_task(self._pump(reader, writer))
            self._pumps.add(task)
            task.add_done_callback(self._pumps.discard)

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                await self._flowing.wait()
                writer.write(data)
                await writer.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            self._links.discard(writer)
            writer.transport.abort()

    async def refuse(self) -> None:
        """Stop listening (a new connection is refused) and reset every open connection."""
        if self._server is not None:
            self._server.close()
            self._server = None
        for writer in list(self._links):
            writer.transport.abort()
        self._links.clear()

    def hang(self) -> None:
        """Connections (new ones too) stay open, but nothing passes until `restore`."""
        self._flowing.clear()

    async def restore(self) -> None:
        self._flowing.set()
        if self._server is None:
            await self.start()

    async def aclose(self) -> None:
        await self.refuse()
        for task in list(self._pumps):
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.gather(*self._pumps, return_exceptions=True)
