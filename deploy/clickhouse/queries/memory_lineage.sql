-- how one memory came to be: every change, the candidate behind it,
-- back to the L0 turns it was extracted from (turn content redacted).
-- Parameters: tenant, user, memory_id. One row per (change, source turn);
-- a change caused by a user command has cause_type set and no candidate or turn.
-- Changes are in event time, then memory version (each change bumps it).
WITH
    changes AS
    (
        SELECT *, causation_ids[1] AS cause_id
        FROM memory_changes FINAL
        WHERE tenant_id = {tenant:String} AND user_id = {user:String} AND memory_id = {memory_id:String}
    ),
    proposal_turns AS
    (
        SELECT event_id AS proposal_id, content AS candidate_content, extractor, turn_event_id
        FROM memory_proposals FINAL
        ARRAY JOIN causation_ids AS turn_event_id
        WHERE tenant_id = {tenant:String} AND user_id = {user:String}
          AND event_id IN (SELECT cause_id FROM changes)
    ),
    causes AS
    (
        SELECT event_id, type
        FROM event_log FINAL
        WHERE tenant_id = {tenant:String} AND event_id IN (SELECT cause_id FROM changes)
    ),
    source_turns AS
    (
        SELECT event_id, occurred_at, message_id, session_id, role, content
        FROM turns FINAL
        WHERE tenant_id = {tenant:String} AND user_id = {user:String}
          AND event_id IN (SELECT turn_event_id FROM proposal_turns)
    )
SELECT
    c.occurred_at AS at,
    c.event_id AS change_event_id,
    c.change AS change,
    c.relation AS relation,
    c.judge AS judge,
    c.reason AS reason,
    c.before_content AS before_content,
    c.after_content AS after_content,
    c.after_status AS after_status,
    c.after_version AS after_version,
    c.cause_id AS cause_event_id,
    k.type AS cause_type,
    p.candidate_content AS candidate_content,
    p.extractor AS extractor,
    t.event_id AS turn_event_id,
    t.message_id AS turn_message_id,
    t.session_id AS turn_session_id,
    t.role AS turn_role,
    t.occurred_at AS turn_at,
    t.content AS turn_content
FROM changes AS c
LEFT JOIN causes AS k ON k.event_id = c.cause_id
LEFT JOIN proposal_turns AS p ON p.proposal_id = c.cause_id
LEFT JOIN source_turns AS t ON t.event_id = p.turn_event_id
ORDER BY c.occurred_at, if(c.after_version > 0, c.after_version, c.before_version + 1), c.event_id,
         t.occurred_at, t.event_id
