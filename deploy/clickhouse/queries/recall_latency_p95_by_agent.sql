-- p95 recall latency per agent, in milliseconds.
-- Total latency = retrieval + context build. quantileExactInclusive interpolates
-- linearly between the two nearest ranks (numpy's default percentile), exactly.
SELECT
    tenant_id,
    agent_id,
    count() AS recalls,
    round(quantileExactInclusive(0.95)(retrieval_latency_ms + context_build_latency_ms), 3) AS p95_total_ms,
    round(quantileExactInclusive(0.95)(retrieval_latency_ms), 3) AS p95_retrieval_ms,
    round(quantileExactInclusive(0.95)(context_build_latency_ms), 3) AS p95_context_build_ms,
    round(avg(retrieval_latency_ms + context_build_latency_ms), 3) AS avg_total_ms,
    countIf(deadline_exceeded) AS deadline_exceeded
FROM recalls FINAL
GROUP BY tenant_id, agent_id
ORDER BY tenant_id, agent_id
