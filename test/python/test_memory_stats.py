"""nc.memory_allocated / max_memory_allocated / reset_peak_memory_stats count tensor storage."""

import numpy as np

import nodeweave.core as nc


def test_counts_storage_alive_and_the_peak_since_reset():
    base = nc.memory_allocated()
    nc.reset_peak_memory_stats()
    a = nc.ones(1000, 250)  # 1,000,000 bytes
    assert nc.memory_allocated() - base == 1_000_000
    b = a + a
    assert nc.max_memory_allocated() - base == 2_000_000
    del a, b
    assert nc.memory_allocated() == base
    assert nc.max_memory_allocated() - base == 2_000_000  # the peak stays until reset
    nc.reset_peak_memory_stats()
    assert nc.max_memory_allocated() == base


def test_borrowed_numpy_memory_is_not_counted():
    base = nc.memory_allocated()
    arr = np.ones(10_000, np.float32)
    t = nc.from_numpy(arr)
    assert nc.memory_allocated() == base
    del t
