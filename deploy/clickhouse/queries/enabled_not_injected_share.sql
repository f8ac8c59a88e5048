-- share of recalls with memory enabled but nothing injected, per agent.
SELECT
    tenant_id,
    agent_id,
    countIf(memory_enabled) AS enabled_recalls,
    countIf(memory_enabled AND NOT memory_injected) AS enabled_not_injected,
    round(enabled_not_injected / enabled_recalls, 6) AS share
FROM recalls FINAL
GROUP BY tenant_id, agent_id
HAVING enabled_recalls > 0
ORDER BY tenant_id, agent_id
