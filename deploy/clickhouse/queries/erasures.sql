-- what forget erased, per tenant and day: requests by scope, memories erased,
-- users whose data key was destroyed (their sealed text is unreadable everywhere).
-- Parameters: tenant (empty for every tenant).
SELECT
    tenant_id,
    toDate(occurred_at) AS day,
    scope,
    count() AS requests,
    sum(memories_erased) AS memories_erased,
    uniqExactIf(user_id, keys_destroyed > 0) AS users_shredded,
    max(occurred_at) AS last_erasure_at
FROM erasures FINAL
WHERE {tenant:String} = '' OR tenant_id = {tenant:String}
GROUP BY tenant_id, day, scope
ORDER BY tenant_id, day, scope
