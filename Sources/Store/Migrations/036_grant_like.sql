-- 036: one way for a migration to say "this new object is granted as the notifier's others are".
-- Eight migrations (012 … 034) each wrote the same block: revoke everything from PUBLIC (and, on
-- a Supabase-style database, from its API roles `anon`, `authenticated`, `service_role`), then
-- grant the new table to every role that holds some privilege on an older table of the notifier
-- — the roles `config/least-privilege.sql` made. From here on a migration writes one line:
--
--     SELECT sileme.sileme_grant_like('sileme.new_table', 'sileme.notifier_runs', 'INSERT', 'SELECT, INSERT, UPDATE');
--     SELECT sileme.sileme_grant_like('sileme.new_table_id_seq', 'sileme.notifier_runs', 'INSERT', 'USAGE');
--
-- `target` (a table, view or sequence) loses every privilege of PUBLIC and of the API roles;
-- `privileges` on it go to each other role — not the owner of `model`, not an API role — that
-- holds `model_privilege` on `model`. Returns how many roles it granted to (0 where the notifier
-- runs as the owner alone). The migrations before this one keep their own blocks: they have run.
CREATE OR REPLACE FUNCTION sileme.sileme_grant_like(target regclass, model regclass, model_privilege text, privileges text)
RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog
AS $$
DECLARE
    api     text[] := ARRAY(SELECT rolname::text FROM pg_roles WHERE rolname IN ('anon', 'authenticated', 'service_role'));
    object  text := CASE (SELECT relkind FROM pg_class WHERE oid = target) WHEN 'S' THEN 'SEQUENCE ' ELSE '' END || target::text;
    name    text;
    granted integer := 0;
BEGIN
    EXECUTE format('REVOKE ALL ON %s FROM PUBLIC', object);
    FOREACH name IN ARRAY api LOOP
        EXECUTE format('REVOKE ALL ON %s FROM %I', object, name);
    END LOOP;
    FOR name IN
        SELECT DISTINCT r.rolname::text
        FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a JOIN pg_roles r ON r.oid = a.grantee
        WHERE c.oid = model AND a.grantee <> c.relowner AND r.rolname <> ALL (api) AND a.privilege_type = model_privilege
    LOOP
        EXECUTE format('GRANT %s ON %s TO %I', privileges, object, name);
        granted := granted + 1;
    END LOOP;
    RETURN granted;
END
$$;
REVOKE ALL ON FUNCTION sileme.sileme_grant_like(regclass, regclass, text, text) FROM PUBLIC;
