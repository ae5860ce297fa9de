"""A password in a `RedisStore` URL's query (`?password=...`, which redis reads as the
userinfo one) never appears in messages or `repr` (SPEC §7), while the store still
connects with it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from test_stores_redis import redis_url  # noqa: F401  # pyright: ignore[reportUnusedImport]

from hookwrap.stores._redis import RedisStore

pytest.importorskip("redis")


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://h:6379/0?password=SECRETPW", "redis://h:6379/0?password=***"),
        (
            "redis://h/0?socket_timeout=5&password=SECRETPW",
            "redis://h/0?socket_timeout=5&password=***",
        ),
        ("redis://h/0?pass%77ord=SECRETPW", "redis://h/0?pass%77ord=***"),  # redis decodes it
        ("redis://u:SECRETPW@h/0?password=SECRETPW", "redis://u:***@h/0?password=***"),
        (
            "unix:///run/redis.sock?db=1&password=SECRETPW",
            "unix:///run/redis.sock?db=1&password=***",
        ),
        (
            "redis://h/0?db=2&client_name=SECRETPW&socket_timeout=5",
            "redis://h/0?db=2&client_name=***&socket_timeout=5",  # only numbers and flags
        ),
    ],
)
def test_repr_hides_a_password_in_the_query(url: str, shown: str) -> None:
    store = RedisStore(url, prefix="a:")
    assert repr(store) == f"RedisStore({shown!r}, prefix='a:')"
    assert store.url == url  # what connects is the URL as given
    store.close()
    assert "SECRETPW" not in repr(store)
    with pytest.raises(ValueError, match="it was closed") as caught:
        store.get("k")
    assert repr(shown) in str(caught.value)


@pytest.mark.parametrize(
    "url",
    [
        "redis://127.0.0.1:6379/0?password=SECRETPW&db=x",
        "redis://127.0.0.1:6379/x?password=SECRETPW",
    ],
)
def test_a_bad_url_is_refused_without_its_password(url: str) -> None:
    with pytest.raises(ValueError, match="expects a redis://") as caught:
        RedisStore(url)
    assert "password=***" in str(caught.value)
    assert "SECRETPW" not in str(caught.value)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "redis://127.0.0.1:6379/0?max_conections=5",
            "redis takes no query option 'max_conections' (did you mean 'max_connections'?); "
            "it takes ",
        ),
        ("redis://h/0?socket_timeout=5&colour=blue", "redis takes no query option 'colour';"),
        ("redis://h/0?nodelay", "redis takes no query option 'nodelay';"),  # with no value too
        ("redis://h/0?ssl_certfile=c.pem", "'ssl_certfile'"),  # a rediss:// one
        ("unix:///run/redis.sock?db=1&password=SECRETPW&pot=1", "'pot'"),
        ("unix:///run/redis.sock?host=h", "'host'"),  # a socket has no host
    ],
)
def test_a_query_option_redis_does_not_take_is_refused_naming_it(url: str, message: str) -> None:
    """redis would hand it on to its connections, and the first call would fail with a
    `TypeError` of theirs."""
    with pytest.raises(ValueError, match="expects a redis://") as caught:
        RedisStore(url)
    assert message in str(caught.value)
    assert "db, " in str(caught.value)  # the options it takes are listed
    assert "SECRETPW" not in str(caught.value)


@pytest.mark.parametrize(
    "url",
    [
        "redis://h/0?pasword=SECRETPW",
        "redis://h/0?retry=3&password=SECRETPW",  # no URL text makes a `Retry`
        "redis://h/0?parser_class=x",
        "redis://h/0?decode_responses=false",
        "redis://h/0?socket_type=1",
        "redis://h/0?retry_on_error=ValueError",  # read as a list of characters
    ],
)
def test_only_options_that_work_as_url_text_are_taken(url: str) -> None:
    with pytest.raises(ValueError, match="redis takes no query option") as caught:
        RedisStore(url)
    message = str(caught.value)
    assert "SECRETPW" not in message
    taken = message.rpartition("; it takes ")[2].split(", ")
    assert {"db", "socket_timeout", "client_name", "password", "timeout"} <= set(taken)
    assert {"retry", "parser_class", "event_dispatcher", "credential_provider"}.isdisjoint(taken)
    assert not any(name.startswith(("maint", "orig_")) for name in taken)


def test_a_refused_option_redis_would_parse_shows_no_value() -> None:
    with pytest.raises(ValueError) as caught:
        RedisStore("redis://h:6379/0?retry_on_error=SECRETPW")
    assert "retry_on_error=***" in str(caught.value)
    assert "SECRETPW" not in str(caught.value)


def test_a_misspelled_password_option_is_refused_with_a_hint_but_not_its_value() -> None:
    with pytest.raises(ValueError) as caught:
        RedisStore("redis://h:6379/0?pasword=SECRETPW")
    assert "(got 'redis://h:6379/0?pasword=***'): " in str(caught.value)
    assert "(did you mean 'password'?)" in str(caught.value)


@pytest.mark.parametrize(
    "url",
    [
        "redis://:ab#SECRETPW@127.0.0.1:6379/0",
        "redis://:ab/SECRETPW@127.0.0.1:6379/0",
        "redis://:ab?SECRETPW@127.0.0.1:6379/0",
        "redis://:123?SECRETPW@127.0.0.1:6379/0",  # would read as port 123
        "redis://alice:ab@SECRET#PW@127.0.0.1:6379/0",
        "rediss://:ab#SECRETPW@h/0?ssl_certfile=c.pem",
        "unix://:ab#SECRETPW@/run/redis.sock?db=0",
        "redis://127.0.0.1:6379/0?password=ab#SECRETPW",  # redis would send "ab"
        "redis://127.0.0.1:6379/0?db=1#&max_conections=5",
    ],
)
def test_a_password_with_an_unencoded_hash_slash_or_question_mark_is_refused_unseen(
    url: str,
) -> None:
    with pytest.raises(ValueError, match="expects a redis://") as caught:
        RedisStore(url)
    message = str(caught.value)
    assert "write a password's '#', '/', '?' and '@' as %23, %2F, %3F and %40" in message
    assert "SECRET" not in message
    assert "ab" not in message.replace("about", "")


def test_an_at_sign_in_a_socket_path_is_no_password() -> None:
    store = RedisStore("unix:///run/redis@main.sock?db=0")
    assert repr(store) == "RedisStore('unix:///run/redis@main.sock?db=0', prefix='hookwrap:')"
    store.close()


def test_an_encoded_password_connects(redis_url: str) -> None:  # noqa: F811
    import redis

    admin: Any = redis.Redis.from_url(redis_url)  # pyright: ignore[reportUnknownMemberType]
    admin.acl_setuser("bob", enabled=True, passwords=["+a#b/c?d@e"], keys=["*"], commands=["+@all"])
    try:
        url = redis_url.replace("redis://", "redis://bob:a%23b%2Fc%3Fd%40e@")
        with RedisStore(url, prefix="enc:") as store:
            assert "a%23" not in repr(store)
            store.set("k", [1])
            assert store.get("k") == [1]
            store.delete("k")
    finally:
        admin.acl_deluser("bob")
        admin.close()


def test_the_options_redis_takes_work_sync_and_async(redis_url: str) -> None:  # noqa: F811
    options = "socket_timeout=5&health_check_interval=30&client_name=hw&max_connections=4"
    with RedisStore(f"{redis_url}?{options}", prefix="opt:") as store:
        store.set("k", [1])

        async def read() -> Any:
            return await store.aget("k")

        assert asyncio.run(read()) == [1]
        assert store.get("k") == [1]
        store.delete("k")


@pytest.fixture
def user_url(redis_url: str) -> Iterator[str]:  # noqa: F811
    """`redis_url` as the user `alice`, password `SECRETPW`, both in the query."""
    import redis

    admin: Any = redis.Redis.from_url(redis_url)  # pyright: ignore[reportUnknownMemberType]
    admin.acl_setuser(
        "alice", enabled=True, passwords=["+SECRETPW"], keys=["*"], commands=["+@all"]
    )
    try:
        yield f"{redis_url}?username=alice&password=SECRETPW"
    finally:
        admin.acl_deluser("alice")
        admin.close()


def test_the_store_connects_with_the_password_in_the_query(user_url: str) -> None:
    import redis

    with RedisStore(user_url, prefix="qpw:") as store:
        assert "SECRETPW" not in repr(store)
        store.set("k", {"n": 1})
        assert store.get("k") == {"n": 1}

        async def read() -> Any:
            value = await store.aget("k")
            await store.adelete("k")
            return value

        assert asyncio.run(read()) == {"n": 1}
    wrong = user_url.replace("SECRETPW", "nope")  # the same URL but for the password
    with RedisStore(wrong) as store, pytest.raises(redis.AuthenticationError):
        store.get("k")
