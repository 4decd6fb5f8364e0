-- An attempt's value in ms of an SLO's signal {signal}: 'ttft' or anything else for total (checked in Python before
-- the query runs). TRICKY: not _bucket_value.sql's multiIf, which reads all eight bucket columns of every row.
if({signal:String} = 'ttft', ttft_ms, total_ms)
