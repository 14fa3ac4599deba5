"""Returning freed heap memory to the OS, and doing nothing where the C library cannot."""

from __future__ import annotations

import ctypes.util
import os
import sys

import pytest

from streams.runtime import heap_trim


@pytest.fixture(autouse=True)
def fresh_lookup() -> None:
    heap_trim._malloc_trim.cache_clear()


def _resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc_trim is glibc's")
def test_on_glibc_freed_memory_goes_back_to_the_os() -> None:
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    blocks = [libc.malloc(32 * 1024) for _ in range(6_000)]  # 188 MB below mmap's threshold
    for block in blocks:
        ctypes.memset(block, 1, 32 * 1024)  # touched, so resident
    for block in blocks[::2]:
        libc.free(block)  # every other one: free memory between used blocks, which free()
    held = _resident_bytes()  # cannot give back, as a worker's heap looks after a busy second

    assert heap_trim.trim_heap() is True
    assert held - _resident_bytes() > 50 * 2**20
    for block in blocks[1::2]:
        libc.free(block)


def test_without_a_c_library_it_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None)
    assert heap_trim.trim_heap() is False


def test_a_c_library_without_malloc_trim_is_no_error(monkeypatch: pytest.MonkeyPatch) -> None:
    class NoTrim:
        def __init__(self, name: str) -> None:
            self.name = name

    monkeypatch.setattr(ctypes, "CDLL", NoTrim)
    assert heap_trim.trim_heap() is False
