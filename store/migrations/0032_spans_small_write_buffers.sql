-- Parts of spans under 64 MiB are written compact (one file for all columns) and data is compressed in blocks of
-- 128 KiB instead of 1 MiB: writing a wide part kept two buffers of the block size for each of its ~80 column
-- streams, ~200 MiB for one INSERT or merge whatever its row count (benchmarks/profile_ingest.py, docs/ingest-performance.md).
ALTER TABLE spans MODIFY SETTING min_bytes_for_wide_part = 67108864, max_compress_block_size = 131072
