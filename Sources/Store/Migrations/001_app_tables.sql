-- 001: the app's three tables, as the design doc defines them, created only where missing.
-- On an existing database of the app (for example a Supabase project) nothing here changes.
CREATE TABLE IF NOT EXISTS users (
    id              UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    name            VARCHAR(100) NOT NULL,
    emergency_email VARCHAR(255) NOT NULL,
    created_at      TIMESTAMP DEFAULT NOW(),
    updated_at      TIMESTAMP DEFAULT NOW()
);

CREATE TABLE IF NOT EXISTS check_ins (
    id            BIGSERIAL PRIMARY KEY,
    user_id       UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    check_in_date DATE NOT NULL,
    check_in_time TIMESTAMP DEFAULT NOW(),
    created_at    TIMESTAMP DEFAULT NOW(),
    UNIQUE (user_id, check_in_date)
);

CREATE TABLE IF NOT EXISTS notification_logs (
    id                    BIGSERIAL PRIMARY KEY,
    user_id               UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    notification_date     DATE NOT NULL,
    email_sent            BOOLEAN DEFAULT FALSE,
    consecutive_miss_days INTEGER NOT NULL,
    created_at            TIMESTAMP DEFAULT NOW()
);
