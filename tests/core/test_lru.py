"""The byte-bounded LRU caches: what they hold, what they count, and one cache per model object."""

import gc
import threading

from bertlens.lru import BytesLRU, PerModel


def held_bytes(cache: BytesLRU) -> int:
    """The sizes of the values the cache holds now, summed independently of its own count."""
    return sum(len(value) for value, _ in cache._items.values())


def test_a_cache_can_be_exactly_full():
    cache: BytesLRU[bytes] = BytesLRU(8, len)
    cache.put("a", b"1234")
    cache.put("b", b"5678")  # 8 of 8 bytes: nothing has to go
    assert (cache.get("a"), cache.get("b"), cache.nbytes, len(cache)) == (b"1234", b"5678", 8, 2)
    cache.put("whole", b"x" * 8)  # a value as large as the budget is kept; the others make room for it
    assert (cache.get("whole"), cache.get("a"), cache.get("b"), cache.nbytes) == (b"x" * 8, None, None, 8)


def test_putting_a_key_again_keeps_one_copy_and_counts_it_once():
    cache: BytesLRU[bytes] = BytesLRU(10, len)
    cache.put("a", b"1234")
    cache.put("a", b"1234")
    cache.put("a", b"123456")  # results are computed from the key: the first is kept
    assert (len(cache), cache.nbytes, cache.get("a")) == (1, 4, b"1234")
    cache.put("b", b"123456")  # 10 bytes: both fit (a double-counted "a" would have evicted itself)
    assert (cache.get("a"), cache.get("b"), cache.nbytes) == (b"1234", b"123456", 10)


def test_clear_empties_the_byte_count_too():
    cache: BytesLRU[bytes] = BytesLRU(10, len)
    cache.put("a", b"12345678")
    cache.clear()
    assert (len(cache), cache.nbytes) == (0, 0)
    cache.put("b", b"12345678")
    cache.put("c", b"12")  # 10 bytes after the clear: both kept
    assert (cache.get("b"), cache.get("c"), cache.nbytes) == (b"12345678", b"12", 10)


def test_concurrent_puts_keep_the_count_true_and_the_budget():
    cache: BytesLRU[bytes] = BytesLRU(1000, len)

    def student(n: int) -> None:
        for i in range(300):
            cache.put((n, i % 40), bytes(1 + (n * 7 + i) % 60))
            cache.get((n, (i * 3) % 40))

    threads = [threading.Thread(target=student, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert cache.nbytes == held_bytes(cache) <= 1000 and len(cache) > 0


class Model:
    """Stands in for a loaded model: any object that can be weakly referenced."""


def test_one_cache_per_model_object_gone_with_its_model():
    caches = PerModel(lambda: BytesLRU(100, len))
    first, second = Model(), Model()
    cache = caches.of(first)
    cache.put("text", b"first model's result")
    assert caches.of(first) is cache
    assert caches.of(second) is not cache and caches.of(second).get("text") is None  # another model's results
    del first
    gc.collect()
    assert len(caches._caches) == 1  # the reloaded (or dropped) model's cache went with it
