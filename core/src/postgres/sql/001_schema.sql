-- Version 1 of the PostgreSQL binding's schema (R-BIND-2..5): tables, constraints, row-level
-- security and the roles. The server functions of the calls come in files of their own; every
-- change to memory goes through them.
--
-- Roles:
--   rotifer_owner       NOLOGIN: owns the schema, its tables and its functions. The functions run
--                       with its rights (SECURITY DEFINER); nobody logs in as it.
--   rotifer_deployment  NOLOGIN: what every deployment's login role is a member of: SELECT on the
--                       tables (row-level security shows it its own agents only) and EXECUTE on
--                       the call functions. No INSERT, UPDATE or DELETE on anything.
-- Row-level security is FORCED, so it binds the owner too (the functions), and it is keyed on
-- session_user: the role that logged in, which SET ROLE does not change and a client setting
-- cannot forge.

CREATE SCHEMA rotifer AUTHORIZATION rotifer_owner;
REVOKE ALL ON SCHEMA rotifer FROM PUBLIC;
GRANT USAGE ON SCHEMA rotifer TO rotifer_deployment;

SET LOCAL ROLE rotifer_owner;

-- The deployments' login roles, as `binding setup --role` made them; only the administrator
-- writes here. `test_clock`: whether calls of the role may give their own time (tests only: a
-- clock in the past would read entries that have expired).
CREATE TABLE rotifer.roles (
  role_name name PRIMARY KEY,
  test_clock boolean NOT NULL DEFAULT false
);

CREATE TABLE rotifer.agents (
  agent_id text PRIMARY KEY
    CHECK (agent_id ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$'),
  owner name NOT NULL DEFAULT session_user,
  quota bigint NOT NULL CHECK (quota BETWEEN 1 AND 1099511627776),
  anonymization_supported boolean NOT NULL,
  max_retention_days integer CHECK (max_retention_days BETWEEN 1 AND 2147483647),
  used_bytes bigint NOT NULL DEFAULT 0 CHECK (used_bytes >= 0),
  -- R-ENT-3: the per-agent write sequence; R-ENT-4: the latest time stored, which floors the next.
  last_seq bigint NOT NULL DEFAULT 0 CHECK (last_seq BETWEEN 0 AND 9007199254740991),
  last_ms bigint NOT NULL DEFAULT 0 CHECK (last_ms BETWEEN 0 AND 253402300799999),
  -- The audit's transaction counter (R-AUD-6's `tx`), and its bound (R-BIND-3).
  last_tx bigint NOT NULL DEFAULT 0 CHECK (last_tx BETWEEN 0 AND 9007199254740991),
  audit_rows bigint NOT NULL DEFAULT 0 CHECK (audit_rows >= 0),
  audit_max_rows bigint NOT NULL DEFAULT 1000000 CHECK (audit_max_rows BETWEEN 100 AND 1000000000),
  created_ms bigint NOT NULL
);

CREATE TABLE rotifer.entries (
  agent_id text NOT NULL REFERENCES rotifer.agents ON DELETE CASCADE,
  -- "C": text compares as UTF-8 bytes, code point order, so a key prefix is a range.
  key text COLLATE "C" NOT NULL CHECK (octet_length(key) BETWEEN 1 AND 1024),
  entry_id text NOT NULL CHECK (entry_id ~ '^[0-9a-f]{64}$'),
  category text NOT NULL CHECK (category IN ('CACHE', 'PATTERN', 'CONTEXT', 'PREFERENCE')),
  value bytea NOT NULL CHECK (octet_length(value) <= 1048576),
  size bigint NOT NULL,
  created_by text NOT NULL CHECK (created_by ~ '^v2:[0-9a-f]{64}$'),
  creator_domain text CHECK (creator_domain ~ '^[a-z0-9]+(\.[a-z0-9]+)*$'),
  last_accessed_by text NOT NULL CHECK (last_accessed_by ~ '^v2:[0-9a-f]{64}$'),
  created_at bigint NOT NULL CHECK (created_at BETWEEN 0 AND 253402300799999),
  updated_at bigint NOT NULL CHECK (updated_at BETWEEN 0 AND 253402300799999),
  seq bigint NOT NULL CHECK (seq BETWEEN 1 AND 9007199254740991),
  read_scope text NOT NULL CHECK (read_scope IN ('CREATOR_GENE_ONLY', 'SAME_DOMAIN', 'ALL_GENES')),
  write_scope text NOT NULL CHECK (write_scope IN ('CREATOR_GENE_ONLY', 'SAME_DOMAIN', 'ALL_GENES')),
  share_policy text NOT NULL CHECK (share_policy IN ('PRIVATE', 'ANONYMIZED_SHARE', 'KNOWLEDGE_GENE')),
  -- retentionPolicy: NULL ret_days with ret_set = false is `null` (follow the agent).
  ret_set boolean NOT NULL,
  ret_days integer CHECK (ret_days BETWEEN 1 AND 2147483647),
  ret_auto_delete boolean NOT NULL,
  ret_anonymization boolean NOT NULL,
  expires_at bigint,
  PRIMARY KEY (agent_id, key),
  CHECK (size = octet_length(key) + octet_length(value)),
  CHECK (updated_at >= created_at),
  CHECK (ret_set OR (ret_days IS NULL AND NOT ret_auto_delete AND NOT ret_anonymization))
);
CREATE INDEX entries_by_recency ON rotifer.entries (agent_id, updated_at DESC, seq DESC);
CREATE INDEX entries_by_category ON rotifer.entries (agent_id, category, updated_at, seq);
CREATE INDEX entries_by_expiry ON rotifer.entries (agent_id, expires_at) WHERE expires_at IS NOT NULL;

-- Insert-only for everyone but the functions' trim (R-BIND-3): every row is committed with the
-- change it records, so R-AUD-6's `committed` is always true here.
CREATE TABLE rotifer.audit (
  id bigserial PRIMARY KEY,
  agent_id text NOT NULL REFERENCES rotifer.agents ON DELETE CASCADE,
  ts bigint NOT NULL,
  tx bigint,
  tx_line integer,
  action text NOT NULL CHECK (action ~ '^memory\.[a-z_]+$'),
  actor text,
  key text COLLATE "C",
  entry_id text,
  category text,
  size bigint,
  facts jsonb
);
CREATE INDEX audit_by_agent ON rotifer.audit (agent_id, id);

-- Changes that committed, by the id the client gave them: after a lost COMMIT acknowledgement the
-- client asks here whether its attempt committed (R-BIND-6). Kept for a day.
CREATE TABLE rotifer.attempts (
  attempt_id text PRIMARY KEY CHECK (attempt_id ~ '^[0-9a-f]{32}$'),
  agent_id text NOT NULL REFERENCES rotifer.agents ON DELETE CASCADE,
  at_ms bigint NOT NULL,
  result jsonb
);
CREATE INDEX attempts_by_age ON rotifer.attempts (agent_id, at_ms);

CREATE TABLE rotifer.schema_version (
  version integer PRIMARY KEY,
  applied_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- Row-level security, forced: a role sees and changes only the agents it owns.
ALTER TABLE rotifer.agents ENABLE ROW LEVEL SECURITY;
ALTER TABLE rotifer.agents FORCE ROW LEVEL SECURITY;
CREATE POLICY own_agents ON rotifer.agents USING (owner = session_user) WITH CHECK (owner = session_user);

ALTER TABLE rotifer.entries ENABLE ROW LEVEL SECURITY;
ALTER TABLE rotifer.entries FORCE ROW LEVEL SECURITY;
CREATE POLICY own_entries ON rotifer.entries
  USING (EXISTS (SELECT 1 FROM rotifer.agents a WHERE a.agent_id = entries.agent_id))
  WITH CHECK (EXISTS (SELECT 1 FROM rotifer.agents a WHERE a.agent_id = entries.agent_id));

ALTER TABLE rotifer.audit ENABLE ROW LEVEL SECURITY;
ALTER TABLE rotifer.audit FORCE ROW LEVEL SECURITY;
CREATE POLICY own_audit ON rotifer.audit
  USING (EXISTS (SELECT 1 FROM rotifer.agents a WHERE a.agent_id = audit.agent_id))
  WITH CHECK (EXISTS (SELECT 1 FROM rotifer.agents a WHERE a.agent_id = audit.agent_id));

ALTER TABLE rotifer.attempts ENABLE ROW LEVEL SECURITY;
ALTER TABLE rotifer.attempts FORCE ROW LEVEL SECURITY;
CREATE POLICY own_attempts ON rotifer.attempts
  USING (EXISTS (SELECT 1 FROM rotifer.agents a WHERE a.agent_id = attempts.agent_id))
  WITH CHECK (EXISTS (SELECT 1 FROM rotifer.agents a WHERE a.agent_id = attempts.agent_id));

ALTER TABLE rotifer.roles ENABLE ROW LEVEL SECURITY;
ALTER TABLE rotifer.roles FORCE ROW LEVEL SECURITY;
CREATE POLICY own_role ON rotifer.roles USING (role_name = session_user) WITH CHECK (false);

REVOKE ALL ON ALL TABLES IN SCHEMA rotifer FROM PUBLIC;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA rotifer FROM PUBLIC;
GRANT SELECT ON rotifer.agents, rotifer.entries, rotifer.audit, rotifer.attempts, rotifer.roles TO rotifer_deployment;

-- What the keyed calls answer: one row. `outcome` is 'ok' (the entry follows), 'none' (no such
-- entry: a read's null) or 'refused' (`code`, `reason` and `facts` say why; a denial's audit row
-- is committed all the same). Queries answer rows of 'ok'.
CREATE TYPE rotifer.call_result AS (
  outcome text,
  code text,
  reason text,
  facts jsonb,
  entry_id text,
  category text,
  key text,
  value bytea,
  created_by text,
  last_accessed_by text,
  created_at bigint,
  updated_at bigint,
  read_scope text,
  write_scope text,
  share_policy text,
  ret_set boolean,
  ret_days integer,
  ret_auto_delete boolean,
  ret_anonymization boolean
);

RESET ROLE;
