"""Process supervision and interpreter tuning: several worker processes in one group, the
garbage collector, the allocator's freed memory, numpy's native threads, the emergency stop."""
