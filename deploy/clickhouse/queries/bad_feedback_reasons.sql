-- why users said a recall was bad, per agent.
-- A recall's feedback is its latest verdict (recall_observations: argMax by time),
-- so a recall rated bad and later good is not counted. share = of that agent's bad recalls.
SELECT
    tenant_id,
    agent_id,
    if(feedback_reason = '', '(no reason)', feedback_reason) AS reason,
    count() AS bad_recalls,
    round(bad_recalls / sum(count()) OVER (PARTITION BY tenant_id, agent_id), 6) AS share_of_bad
FROM recall_observations
WHERE feedback_rating = 2
GROUP BY tenant_id, agent_id, reason
ORDER BY tenant_id, agent_id, bad_recalls DESC, reason
