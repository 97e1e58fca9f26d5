"""A cache bounded in bytes, least recently used out first, one per loaded model.

A class server keeps results for many students: a count of entries says nothing about memory (one
512-token analysis is 170 MB, a 20-token one 1 MB), so these caches are bounded by what they hold.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

Value = TypeVar("Value")
Cache = TypeVar("Cache", bound="BytesLRU[Any]")  # any value type: a cache of any kind of result


class BytesLRU(Generic[Value]):
    """At most ``max_bytes`` of values (as measured by ``size``); thread-safe. Values are shared by every
    caller, so they must be read-only."""

    def __init__(self, max_bytes: int, size: Callable[[Value], int]):
        self.max_bytes = max_bytes
        self._size = size
        self._items: OrderedDict[Hashable, tuple[Value, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Value | None:
        with self._lock:
            found = self._items.get(key)
            if found is None:
                return None
            self._items.move_to_end(key)
            return found[0]

    def put(self, key: Hashable, value: Value) -> None:
        """Keep ``value`` (unless it alone exceeds the budget); the least recently used go to make room."""
        size = self._size(value)
        with self._lock:
            if key in self._items or size > self.max_bytes:
                return
            self._items[key] = (value, size)
            self._bytes += size
            while self._bytes > self.max_bytes:
                self._bytes -= self._items.popitem(last=False)[1][1]

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    @property
    def nbytes(self) -> int:
        return self._bytes


class PerModel(Generic[Cache]):
    """One cache per model object; it goes when the model goes (a reload starts empty)."""

    def __init__(self, make: Callable[[], Cache]):
        self._make = make
        self._caches: weakref.WeakKeyDictionary[object, Cache] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def of(self, model: object) -> Cache:
        with self._lock:
            cache = self._caches.get(model)
            if cache is None:
                cache = self._caches[model] = self._make()
            return cache
