-- the attempt spans with HTTP children that are alone in their run (service, run_id): their tries are those
-- children, the last-started the one whose outcome is the call's (the span's own status), each ERROR one before it
-- a failed try (t_failed: (span id, start, end, ms, cause, number), numbered http.request.resend_count + 1 where
-- sent, else by start). With several attempt spans in a run the spans are its tries, as before.
SELECT p.trace_id AS t_trace_id, p.span_id AS t_span_id, p.service AS t_service, p.instance AS t_instance,
       p.tenant AS t_tenant, p.route AS t_route, p.model AS t_model, p.form AS t_form, p.run_id AS t_run_id,
       p.cap AS t_cap, c.failed AS t_failed, length(c.failed) + 1 AS t_tries,
       -- with failed tries, the span as the final attempt starts at its last try, within the hour of its queued_at
       notEmpty(c.failed) AND c.last_start_at > p.p_queued_at
           AND toStartOfHour(c.last_start_at) = toStartOfHour(p.p_queued_at) AS t_moved,
       if(t_moved, c.last_start_at, p.p_queued_at) AS t_queued_at,
       if(t_moved, (toUnixTimestamp64Nano(c.last_start_at) - toUnixTimestamp64Nano(p.p_queued_at)) / 1e6, 0.)
           AS t_shift_ms,
       -- t_retry: from the first failed try's start to the last try's (0 without a failed try, or unmoved)
       if(t_moved, (toUnixTimestamp64Nano(c.last_start_at) - toUnixTimestamp64Nano(c.failed[1].2)) / 1e6, 0.)
           AS t_tries_retry_ms
FROM
(
    SELECT trace_id, span_id, service, instance, tenant, route, model, form, run_id, cap,
           assumeNotNull(queued_at) AS p_queued_at
    FROM spans FINAL
    PREWHERE role = 'attempt'
    WHERE project_id = {project_id:UInt32}
      AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 2 HOUR
      AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
      AND (service, run_id) IN (
          SELECT service, run_id FROM spans
          WHERE project_id = {project_id:UInt32} AND role = 'attempt'
            AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 2 HOUR
            AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
          GROUP BY service, run_id
          HAVING uniqExact(span_id) = 1)
) AS p
INNER JOIN
(
    -- per parent: the last child's start, and the ERROR children before it in start order, numbered
    SELECT c_trace_id, c_parent_span_id, children[-1].2 AS last_start_at,
           arrayMap((x, i) -> (x.1, x.2, x.3, x.4, x.5, toUInt16(least(65535, coalesce(x.6 + 1, i)))),
                    errors, arrayEnumerate(errors)) AS failed
    FROM
    (
        SELECT c_trace_id, c_parent_span_id,
               arraySort(x -> (x.2, x.1), groupArray((c_span_id, c_start_at, c_end_at, c_duration_ms, c_cause,
                                                      c_resend_count, c_status))) AS children,
               arrayFilter(x -> x.7 = 'error', arrayPopBack(children)) AS errors
        FROM http_children
        GROUP BY c_trace_id, c_parent_span_id
    )
) AS c ON c.c_trace_id = p.trace_id AND c.c_parent_span_id = p.span_id
