-- 028: each contact in their own language (docs/languages.md). The app writes a BCP 47 tag
-- (`en`, `zh-Hant-TW`, `ru`) for a contact, for a user, or for neither: a contact's mails are
-- written in the contact's language, else the user's, else DEFAULT_LANGUAGE.
--
-- Nullable with no default and no check: adding them rewrites nothing and takes its lock only for
-- a moment, and what the app writes is never a reason to refuse its row or to skip a contact — a
-- text that is not a tag, or a language without templates, falls back and is reported by `check`
-- and the dry run.
ALTER TABLE users ADD COLUMN IF NOT EXISTS language TEXT;
ALTER TABLE emergency_contacts ADD COLUMN IF NOT EXISTS language TEXT;
