#!/usr/bin/env python3
"""A loopback HTTP/1.1 proxy that adds a bearer token to every request, for CI only.

The official MCP conformance suite (run by .ci/conformance.sh) has no option to send an
Authorization header, but `cairn serve` answers `/mcp` only with a valid bearer token. This
proxy sits between the two: it listens on 127.0.0.1:<listen port>, opens one connection to
127.0.0.1:<target port> per client connection, and forwards each request on that connection
(keep-alive included) with `Authorization: Bearer <token>` added at the end of its header
block. A client's own Authorization header is dropped so that exactly one is sent. Nothing
else is rewritten: the request line, every other header (Host included) and the body go
through byte for byte; Content-Length bodies and chunked bodies are framed as the client
framed them. A Content-Length body (up to 4 MiB) is sent in one write with its header
block, as clients send small requests; chunked bodies are streamed as they come. Responses
are a plain byte pipe, so SSE streams flow unbuffered. When either side closes, so does
the other.

    AUTH_PROXY_TOKEN=<secret> python3 .ci/auth_proxy.py --listen 0 --target 7777

The token comes from the environment so that it does not show in process listings. Once
listening, one line `auth_proxy listening on http://127.0.0.1:<port>` goes to stderr.
Python 3 standard library only.
"""

import argparse
import asyncio
import os
import signal
import sys

HOST = "127.0.0.1"
MAX_HEADER_BYTES = 64 * 1024
MAX_LINE_BYTES = 8 * 1024
CHUNK = 64 * 1024
# Content-Length bodies up to this size are read whole and sent with their header block.
MAX_COALESCED_BODY = 4 * 1024 * 1024


class BadRequest(Exception):
    """The client sent something this proxy cannot frame; the connection is closed."""


def inject(head: bytes, authorization: bytes) -> tuple[bytes, int | None, bool]:
    """The header block `head` (request line to the blank line) with our Authorization header.

    Returns the new block, the Content-Length (None without one) and whether the body is chunked.
    """
    lines = head[:-4].split(b"\r\n")
    kept = [lines[0]]
    length, chunked = None, False
    for line in lines[1:]:
        name, sep, value = line.partition(b":")
        if not sep:
            raise BadRequest(f"malformed header line {line[:80]!r}")
        key = name.strip().lower()
        if key == b"authorization":
            continue
        if key == b"content-length":
            try:
                length = int(value.strip())
            except ValueError as err:
                raise BadRequest(f"bad Content-Length {value!r}") from err
        elif key == b"transfer-encoding":
            chunked = chunked or b"chunked" in value.lower()
        kept.append(line)
    kept.append(authorization)
    return b"\r\n".join(kept) + b"\r\n\r\n", length, chunked


async def copy_exactly(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
    while n > 0:
        data = await reader.read(min(n, CHUNK))
        if not data:
            raise BadRequest("the client closed the connection inside a request body")
        writer.write(data)
        await writer.drain()
        n -= len(data)


async def read_line(reader: asyncio.StreamReader) -> bytes:
    try:
        return await reader.readuntil(b"\r\n")
    except asyncio.LimitOverrunError as err:
        raise BadRequest("line too long") from err
    except asyncio.IncompleteReadError as err:
        raise BadRequest("the client closed the connection inside a chunked body") from err


async def copy_chunked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Forwards a chunked body as the client framed it: chunks, last chunk, trailers."""
    while True:
        size_line = await read_line(reader)
        writer.write(size_line)
        try:
            size = int(size_line.split(b";", 1)[0].strip(), 16)
        except ValueError as err:
            raise BadRequest(f"bad chunk size line {size_line[:80]!r}") from err
        if size == 0:
            break
        await copy_exactly(reader, writer, size + 2)  # the chunk and its CRLF
    while True:  # trailer fields, up to the empty line
        line = await read_line(reader)
        writer.write(line)
        if line == b"\r\n":
            break
    await writer.drain()


async def requests(client: asyncio.StreamReader, upstream: asyncio.StreamWriter, authorization: bytes) -> None:
    """Forwards the client's requests, one after the other, until it closes its side."""
    while True:
        try:
            head = await client.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as err:
            if err.partial.strip():
                raise BadRequest("the client closed the connection inside a header block") from err
            return  # a clean close between requests
        except asyncio.LimitOverrunError as err:
            raise BadRequest("header block too large") from err
        head, length, chunked = inject(head, authorization)
        if not chunked and length and length <= MAX_COALESCED_BODY:
            # One write for head and body, as the client sent them: a server that answers
            # from the head alone (a 401 or 403 before reading the body) and then finds the
            # body not yet there may close the connection without `Connection: close`, and
            # the client's next request on it fails ("other side closed").
            try:
                body = await client.readexactly(length)
            except asyncio.IncompleteReadError as err:
                raise BadRequest("the client closed the connection inside a request body") from err
            upstream.write(head + body)
            await upstream.drain()
            continue
        upstream.write(head)
        await upstream.drain()
        if chunked:
            await copy_chunked(client, upstream)
        elif length:
            await copy_exactly(client, upstream, length)


async def responses(upstream: asyncio.StreamReader, client: asyncio.StreamWriter) -> None:
    """Copies the server's bytes to the client as they come."""
    while True:
        data = await upstream.read(CHUNK)
        if not data:
            return
        client.write(data)
        await client.drain()


async def close(writer: asyncio.StreamWriter) -> None:
    writer.close()
    try:
        await writer.wait_closed()
    except (ConnectionError, OSError):
        pass


async def handle(
    client_reader: asyncio.StreamReader,
    client_writer: asyncio.StreamWriter,
    target: int,
    authorization: bytes,
) -> None:
    try:
        upstream_reader, upstream_writer = await asyncio.open_connection(HOST, target, limit=MAX_HEADER_BYTES)
    except OSError as err:
        body = f"auth_proxy: cannot reach {HOST}:{target}: {err}\n".encode()
        client_writer.write(
            b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nConnection: close\r\n"
            + b"Content-Length: %d\r\n\r\n" % len(body)
            + body
        )
        await close(client_writer)
        return

    async def forward() -> None:
        try:
            await requests(client_reader, upstream_writer, authorization)
            if upstream_writer.can_write_eof():
                upstream_writer.write_eof()  # pass the client's half-close on
        except BadRequest as err:
            print(f"auth_proxy: {err}; closing the connection", file=sys.stderr, flush=True)
            upstream_writer.close()
        except (ConnectionError, OSError):
            upstream_writer.close()

    async def backward() -> None:
        try:
            await responses(upstream_reader, client_writer)
        except (ConnectionError, OSError):
            pass

    up = asyncio.create_task(forward())
    down = asyncio.create_task(backward())
    try:
        # The exchange ends when the server stops sending (it closed, or we closed it after a
        # client reset or a request we could not frame).
        await down
    finally:
        up.cancel()
        try:
            await up
        except asyncio.CancelledError:
            pass
        await close(upstream_writer)
        await close(client_writer)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listen", type=int, required=True, help="loopback port to listen on (0: any free port)")
    parser.add_argument("--target", type=int, required=True, help="loopback port of the server to forward to")
    args = parser.parse_args()
    token = os.environ.get("AUTH_PROXY_TOKEN", "").strip()
    if not token:
        parser.error("set AUTH_PROXY_TOKEN to the bearer secret")
    authorization = b"Authorization: Bearer " + token.encode("ascii")

    server = await asyncio.start_server(
        lambda r, w: handle(r, w, args.target, authorization), HOST, args.listen, limit=MAX_HEADER_BYTES
    )
    port = server.sockets[0].getsockname()[1]
    print(f"auth_proxy listening on http://{HOST}:{port} (forwarding to {HOST}:{args.target})", file=sys.stderr,
          flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with server:
        await stop.wait()


if __name__ == "__main__":
    asyncio.run(main())
