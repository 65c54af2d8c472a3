-- 013: the notifier's own state moves out of the app's schema into a schema of its own
-- (DATABASE_SCHEMA, default sileme; the migrator sets `sileme_notifier.schema` to it), and the
-- app's tables the notifier created get row-level security.
--
-- Why: on Supabase the app's schema (`public`) is served to the internet by the REST API, with the
-- anonymous key that ships inside every copy of the app, and Supabase's default privileges grant
-- every table and function created there to `anon` and `authenticated`. Anyone holding the app
-- could read the contacts' addresses, move a user's last check-in to today (silencing that user),
-- empty the summary (silencing everyone) or take the run lock for ever. A schema that no API
-- serves, granted to nobody but the notifier's role, closes all of it (docs/data.md, "Where the
-- notifier's state lives").
--
-- In one transaction (the migrator's): every table moves with its rows, indexes, sequences,
-- constraints and grants (`ALTER … SET SCHEMA`); the triggers on the app's tables keep calling the
-- moved functions. A fresh installation created these objects in the app's schema moments ago
-- (migrations 001–012, unchanged) and moves them the same way.
DO $$
DECLARE
    target    text := current_setting('sileme_notifier.schema');
    app       text := (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                       WHERE c.oid = to_regclass('check_ins'));
    tables    text[] := ARRAY['user_last_check_in', 'check_in_queue', 'pending_all_clears', 'known_contacts',
                              'notifier_runs', 'notifier_run_lock', 'sileme_schema_migrations'];
    functions text[] := ARRAY['sileme_track_last_check_in', 'sileme_truncate_last_check_in', 'sileme_track_last_notified',
                              'sileme_fill_last_notified', 'sileme_note_contact', 'sileme_queue_check_in',
                              'sileme_fold_check_ins', 'sileme_dequeue_check_in'];
    -- The roles of an API that serves the app's schema (Supabase's), where they exist.
    api       text[] := ARRAY(SELECT rolname::text FROM pg_roles WHERE rolname IN ('anon', 'authenticated', 'service_role'));
    name      text;
    old       regclass;
    fn        regprocedure;
    keepers   text;
    shared    text[];
BEGIN
    EXECUTE format('CREATE SCHEMA IF NOT EXISTS %I', target);
    EXECUTE format('REVOKE ALL ON SCHEMA %I FROM PUBLIC', target);

    -- The roles that use the notifier's tables today other than their owner (the least-privilege
    -- role of config/least-privilege.sql) keep working: their grants move with the tables, and
    -- they may use the schema. PUBLIC and the API roles are not among them.
    FOR name IN
        SELECT DISTINCT r.rolname::text
        FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a JOIN pg_roles r ON r.oid = a.grantee
        WHERE c.oid IN (SELECT to_regclass(t) FROM unnest(tables) t)
          AND a.grantee <> c.relowner AND r.rolname <> ALL (api)
    LOOP
        EXECUTE format('GRANT USAGE ON SCHEMA %I TO %I', target, name);
    END LOOP;

    -- The tables, from wherever the search path finds them (the app's schema).
    FOREACH name IN ARRAY tables LOOP
        old := to_regclass(quote_ident(name));
        IF old IS NOT NULL AND to_regclass(format('%I.%I', target, name)) IS NULL THEN
            EXECUTE format('ALTER TABLE %s SET SCHEMA %I', old, target);
        END IF;
    END LOOP;

    -- The functions; each keeps its pinned search path, now with the schema in it.
    FOREACH name IN ARRAY functions LOOP
        fn := to_regprocedure(quote_ident(name) || '()');
        IF fn IS NOT NULL AND to_regprocedure(format('%I.%I()', target, name)) IS NULL THEN
            EXECUTE format('ALTER FUNCTION %s SET SCHEMA %I', fn, target);
        END IF;
        fn := to_regprocedure(format('%I.%I()', target, name));
        IF fn IS NOT NULL THEN
            EXECUTE format('ALTER FUNCTION %s SET search_path = pg_catalog, %I, %I', fn, target, app);
        END IF;
    END LOOP;

    -- Nothing of the schema for PUBLIC or the API roles: tables, sequences, functions (PostgreSQL
    -- grants EXECUTE on every new function to PUBLIC; Supabase grants its roles what was made in
    -- `public`, and those grants moved with the objects).
    EXECUTE format('REVOKE ALL ON ALL TABLES IN SCHEMA %I FROM PUBLIC', target);
    EXECUTE format('REVOKE ALL ON ALL SEQUENCES IN SCHEMA %I FROM PUBLIC', target);
    EXECUTE format('REVOKE ALL ON ALL FUNCTIONS IN SCHEMA %I FROM PUBLIC', target);
    EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA %I REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC', target);
    FOREACH name IN ARRAY api LOOP
        EXECUTE format('REVOKE ALL ON SCHEMA %I FROM %I', target, name);
        EXECUTE format('REVOKE ALL ON ALL TABLES IN SCHEMA %I FROM %I', target, name);
        EXECUTE format('REVOKE ALL ON ALL SEQUENCES IN SCHEMA %I FROM %I', target, name);
        EXECUTE format('REVOKE ALL ON ALL FUNCTIONS IN SCHEMA %I FROM %I', target, name);
    END LOOP;

    -- The app's tables the notifier created, which the app reads (contact_status) or writes
    -- (emergency_contacts), stay in the app's schema with row-level security on. Whoever writes or
    -- reads them today besides their owner and the API roles (the notifier's role) gets a policy of
    -- its own, as config/least-privilege.sql creates, so that it keeps seeing every row.
    ALTER TABLE emergency_contacts ENABLE ROW LEVEL SECURITY;
    ALTER TABLE contact_status ENABLE ROW LEVEL SECURITY;
    -- (table, policy, what it allows), as config/least-privilege.sql names them.
    FOREACH shared SLICE 1 IN ARRAY ARRAY[
        ['contact_status', 'sileme_notifier_all', 'FOR ALL TO %s USING (true) WITH CHECK (true)'],
        ['emergency_contacts', 'sileme_notifier_read', 'FOR SELECT TO %s USING (true)']] LOOP
        SELECT string_agg(DISTINCT quote_ident(r.rolname), ', ') INTO keepers
        FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a JOIN pg_roles r ON r.oid = a.grantee
        WHERE c.oid = shared[1]::regclass AND a.grantee <> c.relowner AND r.rolname <> ALL (api)
          AND NOT r.rolbypassrls AND NOT r.rolsuper;
        IF keepers IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pg_policy WHERE polrelid = shared[1]::regclass
                                                                        AND polname = shared[2]) THEN
            EXECUTE format('CREATE POLICY %I ON %I ' || shared[3], shared[2], shared[1], keepers);
        END IF;
    END LOOP;

    -- Where Supabase's auth.uid() exists, the owner policies: a signed-in user reads and writes
    -- their own contacts and reads their own contacts' status; nobody reads another user's rows.
    -- Elsewhere the app's operator adds the equivalent for the app's own roles (docs/data.md).
    IF to_regprocedure('auth.uid()') IS NOT NULL THEN
        keepers := CASE WHEN 'authenticated' = ANY (api) THEN 'authenticated' ELSE 'PUBLIC' END;
        IF NOT EXISTS (SELECT 1 FROM pg_policy WHERE polrelid = 'emergency_contacts'::regclass AND polname = 'sileme_owner') THEN
            EXECUTE format('CREATE POLICY sileme_owner ON emergency_contacts FOR ALL TO %s '
                           'USING (user_id = auth.uid()) WITH CHECK (user_id = auth.uid())', keepers);
        END IF;
        IF NOT EXISTS (SELECT 1 FROM pg_policy WHERE polrelid = 'contact_status'::regclass AND polname = 'sileme_owner') THEN
            EXECUTE format('CREATE POLICY sileme_owner ON contact_status FOR SELECT TO %s USING (user_id = auth.uid())', keepers);
        END IF;
    END IF;
END $$;
