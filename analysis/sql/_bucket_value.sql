-- An attempt's value in ms of the bucket named {bucket}: any name of analysis.buckets.ALL, checked in Python
-- before the query runs; '' (no bucket) gives NULL. Identifiers stay literals: the name only picks a column.
multiIf({bucket:String} = 't_queue', t_queue_ms, {bucket:String} = 't_conn', t_conn_ms,
        {bucket:String} = 't_first_token', t_first_token_ms, {bucket:String} = 't_stream', t_stream_ms,
        {bucket:String} = 't_post', t_post_ms, {bucket:String} = 't_retry', t_retry_ms,
        {bucket:String} = 'ttft', ttft_ms, {bucket:String} = 'total', total_ms, NULL)
