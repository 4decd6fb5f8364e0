-- One trace of [start, end) that layer links can come from, if there is any (materialize.py skips
-- materialize_layer_links.sql, which writes nothing without one).
{{layer_traces}}
LIMIT 1
