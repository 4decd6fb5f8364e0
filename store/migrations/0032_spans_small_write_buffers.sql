-- Parts of spans under 64 MiB are written compact (one file for all columns) and data is compressed in blocks of
-- 128 KiB instead of 1 MiB: writing a wide part kept two buffers of the block size for each of its ~80 column
-- streams. With ingest's blocks of INGEST_BLOCK_ROWS, an 80k-span INSERT's peak went 471 -> 147 MiB (in process,
-- system.processes' peak_memory_usage; docs/ingest-performance.md).
ALTER TABLE spans MODIFY SETTING min_bytes_for_wide_part = 67108864, max_compress_block_size = 131072
