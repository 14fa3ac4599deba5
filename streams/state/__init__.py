"""The worker's state: per-user tables for the partitions it owns (hot users in memory), their
changelog topic, the local checkpoint, and the restore on partition assignment."""
