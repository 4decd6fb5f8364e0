-- Hands the memory an INSERT freed back to the OS (embedded chDB only). Without it each large INSERT,
-- run on a pool thread of its own jemalloc arena, left its pages retained, and the process's RSS grew
-- INSERT after INSERT (3 batches of 64 MiB: peak 1,316 MiB; purged after each: 1,012 MiB, for ~30 ms).
SYSTEM JEMALLOC PURGE
