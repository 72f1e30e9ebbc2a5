-- The binding's two NOLOGIN roles (see 001_schema.sql), created once per cluster; two setups at
-- the same time both succeed.
DO $$
BEGIN
  CREATE ROLE rotifer_owner NOLOGIN NOINHERIT;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;
DO $$
BEGIN
  CREATE ROLE rotifer_deployment NOLOGIN NOINHERIT;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;
