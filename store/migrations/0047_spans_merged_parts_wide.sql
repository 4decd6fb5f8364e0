-- Parts of spans with 32,768 rows or more are written wide (a file per column) and merged column by column:
-- ingest's parts (blocks of INGEST_BLOCK_ROWS, 8,192) stay compact, and the background merge of six of them,
-- which read every column of every part at once (~190 MiB tracked beside an INSERT), now reads the key columns,
-- then one column at a time: with 8,192-row blocks the peak RSS of `make bench-ingest` went 648-723 -> 583-661 MiB
-- at the same stored spans/s (docs/ingest-performance.md). Reads take only the columns they name from a wide part.
ALTER TABLE spans MODIFY SETTING min_rows_for_wide_part = 32768, vertical_merge_algorithm_min_rows_to_activate = 32768
