"""`RedisStore`: a `Store` in a Redis server, shared by every process that reaches it.

`redis` (the `hookwrap[redis]` extra) is imported when a `RedisStore` is made, so
importing `hookwrap.stores` never needs it.
"""

from __future__ import annotations

import asyncio
import difflib
import inspect
import json
import math
import threading
from collections.abc import AsyncGenerator, Iterable
from types import TracebackType
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import parse_qs, unquote_plus, urlsplit, urlunsplit

from ._base import (
    Closing,
    _lone_surrogate,  # pyright: ignore[reportPrivateUsage]
    check_key,
    check_ttl,
    dump,
)

if TYPE_CHECKING:
    import redis
    import redis.asyncio

__all__ = ["RedisStore"]

# Redis refuses an expiry that overflows its millisecond clock; a ttl that long (over a
# hundred million years) is kept without one.
_MAX_PX = 2**62

_Entry = tuple["redis.asyncio.Redis", AsyncGenerator[None, None]]

# redis's default pools raise `MaxConnectionsError` for a call that finds all of their
# `max_connections` busy (many threads, or tasks in one `asyncio.gather`); these pools make
# it wait for one, up to `timeout` seconds. The URL's query can set both.
_POOL: dict[str, Any] = {"decode_responses": True, "max_connections": 100, "timeout": 20}

# The connection class each scheme makes, by its name in `redis.connection` and
# `redis.asyncio.connection`.
_CONNECTIONS = {
    "redis": "Connection",
    "rediss": "SSLConnection",
    "unix": "UnixDomainSocketConnection",
}


class RedisStore(Closing):
    """A `Store` in a Redis server: for many processes on many machines.

    Args:
        url: the server, as `redis://[[user]:[password]@]host[:port][/db]`, `rediss://...`
            (TLS) or `unix:///path/to/socket?db=0`. Nothing connects until the first call.
        prefix: put in front of every key, so several applications can share one database.

    Values are kept as JSON text; a `ttl` becomes Redis's own `PX` expiry (rounded up to
    whole milliseconds), so keys expire on the server's clock. The sync methods share one
    thread-safe connection pool; a call that finds its connections busy waits for one. The
    `a*` methods use `redis.asyncio` with one client per
    event loop, made on first use: a `redis.asyncio` client belongs to the loop it first
    ran on. That client is closed when its loop shuts down (`asyncio.run` does this), or
    at once by `await store.aclose()`.
    """

    def __init__(self, url: str, *, prefix: str = "hookwrap:") -> None:
        if not isinstance(url, str):
            raise TypeError(
                "RedisStore(url) expects a str such as 'redis://localhost:6379/0' "
                f"(got {type(url).__name__}: {url!r})"
            )
        if not isinstance(prefix, str):
            raise TypeError(
                f"RedisStore(prefix=...) expects a str (got {type(prefix).__name__}: {prefix!r})"
            )
        at = _lone_surrogate(prefix)
        if at is not None:  # every key would fail as it is sent, in the encoder
            raise ValueError(
                f"RedisStore(prefix=...) must be Unicode text: {prefix!r} holds the lone "
                f"surrogate {prefix[at]!r} at index {at}"
            )
        try:
            import redis
            import redis.asyncio
        except ImportError as exc:
            raise ImportError(
                "RedisStore needs the redis package: pip install 'hookwrap[redis]'"
            ) from exc
        # a redis URL has no fragment: a '#' is in a password (or an option), unencoded
        if "#" in url or _stray_at(url):
            raise ValueError(
                "RedisStore(url) expects a redis://, rediss:// or unix:// URL (got one with a "
                "'#', or an '@' after its host, not shown as it may hold a password): write a "
                "password's '#', '/', '?' and '@' as %23, %2F, %3F and %40, and a '#' or '@' "
                "in a query option as %23 or %40"
            )
        try:
            _check_db(url)
            # redis leaves `from_url(**kwargs)` unannotated
            pool = redis.BlockingConnectionPool.from_url(url, **_POOL)  # pyright: ignore[reportUnknownMemberType]
            self._client = redis.Redis.from_pool(pool)
            _check_options(url)
            _check_timeouts(url)
        except ValueError as exc:
            raise ValueError(
                "RedisStore(url) expects a redis://, rediss:// or unix:// URL "
                f"(got {_redacted(url)!r}): {exc}"
            ) from None
        self._aredis = redis.asyncio.Redis
        self._apool = redis.asyncio.BlockingConnectionPool
        self.url = url
        self.prefix = prefix
        self._closed = False
        self._lock = threading.Lock()
        self._loops: dict[asyncio.AbstractEventLoop, _Entry] = {}

    def __repr__(self) -> str:
        closed = ", closed" if self._closed else ""
        return f"RedisStore({_redacted(self.url)!r}, prefix={self.prefix!r}{closed})"

    def get(self, key: str) -> Any | None:
        """The value stored under `key` (a fresh copy), or `None` if none or expired."""
        name = self.prefix + check_key(key)
        return _load(self._sync().get(name))

    def set(self, key: str, value: Any, ttl: float | None = None) -> None:
        """Store a copy of `value` under `key`, for `ttl` seconds (`None`: no expiry)."""
        name, text, px = self._entry(key, value, ttl)
        self._sync().set(name, text, px=px)

    def delete(self, key: str) -> None:
        """Forget `key`; a missing key is not an error."""
        name = self.prefix + check_key(key)
        self._sync().delete(name)

    async def aget(self, key: str) -> Any | None:
        """`get` through this event loop's `redis.asyncio` client."""
        name = self.prefix + check_key(key)
        return _load(await (await self._async()).get(name))

    async def aset(self, key: str, value: Any, ttl: float | None = None) -> None:
        """`set` through this event loop's `redis.asyncio` client."""
        name, text, px = self._entry(key, value, ttl)
        await (await self._async()).set(name, text, px=px)

    async def adelete(self, key: str) -> None:
        """`delete` through this event loop's `redis.asyncio` client."""
        name = self.prefix + check_key(key)
        await (await self._async()).delete(name)

    def close(self) -> None:
        """Close the sync connections; the store cannot be used afterwards. The async client
        of a loop still running closes when that loop shuts down, or use `aclose`."""
        self._closed = True
        self._client.close()

    async def aclose(self) -> None:
        """`close`, and close the running loop's async client now."""
        self.close()
        with self._lock:
            entry = self._loops.pop(asyncio.get_running_loop(), None)
        if entry is not None:
            await entry[1].aclose()

    async def __aenter__(self) -> RedisStore:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def _entry(self, key: str, value: Any, ttl: float | None) -> tuple[str, str, int | None]:
        """What `set` writes: the prefixed key, the value as JSON text, the `PX` expiry."""
        check_key(key)
        seconds = check_ttl(ttl)
        text = dump(key, value)
        if seconds is None or seconds > _MAX_PX / 1000:  # compared before it overflows
            return self.prefix + key, text, None
        # PX counts whole milliseconds and refuses 0: round up, never down to 0
        return self.prefix + key, text, math.ceil(seconds * 1000)

    def _sync(self) -> redis.Redis:
        if self._closed:
            raise ValueError(f"{self!r} cannot be used: it was closed")
        return self._client

    async def _async(self) -> redis.asyncio.Redis:
        """The running loop's client, made (and tied to the loop's shutdown) on first use."""
        if self._closed:
            raise ValueError(f"{self!r} cannot be used: it was closed")
        loop = asyncio.get_running_loop()
        with self._lock:
            entry = self._loops.get(loop)
            if entry is not None:
                return entry[0]
            # loops closed without shutting down their async generators leave entries behind
            for old in [old for old in self._loops if old.is_closed()]:
                del self._loops[old]
            pool = self._apool.from_url(self.url, **_POOL)  # pyright: ignore[reportUnknownMemberType]
            client = self._aredis.from_pool(pool)
            keeper = self._close_with_loop(loop, client)
            self._loops[loop] = (client, keeper)
        # Started, the generator is registered with the loop, whose `shutdown_asyncgens`
        # (run by `asyncio.run` before it closes the loop) resumes it to close the client
        # while its loop can still run the closing.
        await keeper.__anext__()
        return client

    async def _close_with_loop(
        self, loop: asyncio.AbstractEventLoop, client: redis.asyncio.Redis
    ) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            with self._lock:
                entry = self._loops.get(loop)
                if entry is not None and entry[0] is client:
                    del self._loops[loop]
            await client.aclose()


def _load(text: object) -> Any | None:
    return None if text is None else json.loads(cast("str", text))


def _check_db(url: str) -> None:
    """A `ValueError` for a database in `url`'s path that is not a number (redis would use
    database 0 instead)."""
    parts = urlsplit(url)
    if parts.scheme in ("redis", "rediss"):
        db = parts.path.strip("/")
        if db and not db.isdigit():
            raise ValueError(f"the database {db!r} is not a number")


def _check_options(url: str) -> None:
    """A `ValueError` for an option in `url`'s query that the connections made from it do
    not take from URL text: redis would hand it on as it is (a str), and the first call
    would fail. An option must suit the sync and the async connections alike."""
    parts = urlsplit(url)
    kind = _CONNECTIONS.get(parts.scheme)
    if kind is None or not parts.query:
        return
    takes = _options(kind)
    for name in parse_qs(parts.query, keep_blank_values=True):
        if name not in takes:
            close = difflib.get_close_matches(name, takes, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(
                f"redis takes no query option {name!r}{hint}; it takes {', '.join(sorted(takes))}"
            )


# The query options in seconds: the pool's wait for a free connection (0: do not wait) and
# the sockets' own limits (0 would make a socket non-blocking, which redis's connections do
# not expect). redis's URL parser takes any float; a sync call then fails on a negative,
# infinite or NaN one, or one past `threading.TIMEOUT_MAX` (about 292 years on Linux, 49.7
# days on Windows), which neither a thread's wait nor a socket's takes.
_WAIT_OPTIONS = {"timeout"}
_SOCKET_OPTIONS = {"socket_timeout", "socket_connect_timeout"}


def _check_timeouts(url: str) -> None:
    """A `ValueError` for a query option in seconds that is not a number at least 0 (above
    0 for a socket's) and at most `threading.TIMEOUT_MAX`."""
    longest = threading.TIMEOUT_MAX
    for name, values in parse_qs(urlsplit(url).query).items():
        if name in _WAIT_OPTIONS:
            expected, least_ok = "a finite number of seconds at least 0", True
        elif name in _SOCKET_OPTIONS:
            expected, least_ok = "a finite number of seconds above 0", False
        else:
            continue
        for text in values:
            try:
                seconds = float(text)
            except ValueError:
                seconds = math.nan  # redis's parser names it too; this says what it expects
            if not (seconds <= longest and (seconds > 0 or (seconds == 0 and least_ok))):
                raise ValueError(
                    f"the option {name!r} expects {expected}, at most {longest:.0f} "
                    f"(threading.TIMEOUT_MAX, the longest a wait can be; got {text!r:.40})"
                )


def _options(kind: str) -> set[str]:
    """The query options a `kind` connection takes as URL text: those redis's URL parser
    converts (numbers and flags), and those that are text, as both the sync and the async
    connection take them; and the pool's own."""
    import redis.asyncio.connection
    import redis.connection

    sync = _keywords(getattr(redis.connection, kind))
    both = sync & _keywords(getattr(redis.asyncio.connection, kind))
    # (`retry_on_error`, which the parser makes a list of characters, names exception classes)
    taken = (_numbers() - {"retry_on_error"}) | _TEXT_OPTIONS
    return (both & taken) | {"max_connections", "timeout"}


def _numbers() -> set[str]:
    """The query options redis's URL parser converts from text: numbers and flags."""
    import redis.connection

    parsers = redis.connection.URL_QUERY_ARGUMENT_PARSERS  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return set(cast("Iterable[str]", parsers))  # redis leaves some parsers unannotated


# The options a connection takes as text, as a URL's query gives it (a port as text too).
_TEXT_OPTIONS = {
    "client_name",
    "username",
    "password",
    "encoding",
    "encoding_errors",
    "lib_name",
    "lib_version",
    "host",
    "port",
    "path",
    "ssl_keyfile",
    "ssl_certfile",
    "ssl_cert_reqs",
    "ssl_ca_certs",
    "ssl_ca_data",
    "ssl_ca_path",
    "ssl_password",
    "ssl_ciphers",
}


def _keywords(cls: type) -> set[str]:
    """The keyword arguments `cls(...)` takes: its `__init__`'s, and those of the classes
    above it that its `**kwargs` go on to."""
    names: set[str] = set()
    for base in cls.__mro__:
        init = base.__dict__.get("__init__")
        if init is None:
            continue
        parameters = inspect.signature(init).parameters.values()
        names.update(
            p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        )
        if all(p.kind is not p.VAR_KEYWORD for p in parameters):
            break
    names.discard("self")
    return names


def _stray_at(url: str) -> bool:
    """Whether `url` has an '@' after its host: there a password holding an unencoded '#',
    '/' or '?' (which end the host) ends, and no part of the URL can be shown as surely
    free of the password, which is spread over what reads as the host, path and query."""
    try:
        netloc = urlsplit(url).netloc
    except ValueError:
        return False
    after = url.partition("://")[2][len(netloc) :]
    return bool(netloc) and "@" in after


def _redacted(url: str) -> str:
    """`url` without its password, for messages and `repr`: the one before the host, and
    the value of every query option but the numbers and flags (the value of a misspelled
    `password` option is a password too)."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return "<an unparsable URL>"
    if password is not None:
        host = parts.netloc.rpartition("@")[2]
        url = urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))
    if not parts.query:
        return url
    # the query, masked in place: rebuilt, a `unix:///path` URL would lose its `//`
    head, _, tail = url.partition("?")
    query, hash_mark, fragment = tail.partition("#")
    shown = _numbers() - {"retry_on_error"}  # the options taken (see `_options`) shown
    fields = "&".join(_masked(field, shown) for field in query.split("&"))
    return f"{head}?{fields}{hash_mark}{fragment}"


def _masked(field: str, shown: set[str]) -> str:
    """One `name=value` field of a query, its value hidden unless `name` (decoded as redis
    decodes it) is one of `shown`."""
    name, equals, _ = field.partition("=")
    return f"{name}=***" if equals and unquote_plus(name) not in shown else field
