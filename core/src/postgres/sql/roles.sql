-- The binding's two NOLOGIN roles (see 001_schema.sql), created once per cluster.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'rotifer_owner') THEN
    CREATE ROLE rotifer_owner NOLOGIN NOINHERIT;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'rotifer_deployment') THEN
    CREATE ROLE rotifer_deployment NOLOGIN NOINHERIT;
  END IF;
END $$;
