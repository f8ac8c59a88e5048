-- average relevance of what recall injected, per agent.
-- Over recalls that injected at least one long-term memory (the relevance
-- scores belong to those items; a recall with none has no relevance to average).
SELECT
    tenant_id,
    agent_id,
    count() AS recalls_with_memories,
    round(avg(avg_relevance), 6) AS avg_relevance,
    round(avg(top_relevance), 6) AS avg_top_relevance
FROM recalls FINAL
WHERE memory_enabled AND long_term_count > 0
GROUP BY tenant_id, agent_id
ORDER BY tenant_id, agent_id
