-- memory growth per type, per day.
-- created: memories created that day; net_active: change in the number of active
-- memories (a change counts +1 when it makes a memory active, -1 when it ends an
-- active one); active_total: active memories of that type at the end of the day.
-- A 'discarded' change creates nothing (its `before` is the memory it duplicated).
SELECT
    tenant_id,
    memory_type,
    day,
    created,
    net_active,
    sum(net_active) OVER (PARTITION BY tenant_id, memory_type ORDER BY day
                          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS active_total
FROM
(
    SELECT
        tenant_id,
        memory_type,
        toDate(occurred_at) AS day,
        countIf(change = 'created') AS created,
        sumIf(toInt64(after_status = 'active') - toInt64(before_status = 'active'), change != 'discarded')
            AS net_active
    FROM memory_changes FINAL
    GROUP BY tenant_id, memory_type, day
)
ORDER BY tenant_id, memory_type, day
