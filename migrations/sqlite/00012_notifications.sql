-- +goose Up
-- Notifications (issue 12): a durable outbox.
--
-- elicitations.notified is how far a prompt's notifications are planned: 0 nothing yet,
-- 1 its "created" deliveries, 2 its follow-ups too. The prompt row itself is the outbox
-- entry, written in the same commit as the prompt (insert) and the decision (status
-- change): the dispatcher plans deliveries for rows behind their stage and moves the
-- stage in the same transaction, so nothing is planned twice or lost across a crash,
-- and parking or deciding writes nothing extra. Rows from before this count as done.
ALTER TABLE elicitations ADD COLUMN notified SMALLINT NOT NULL DEFAULT 2;
CREATE INDEX elicitations_unnotified ON elicitations (created_at) WHERE notified < 2;

-- One person's notification settings document (GET/PUT /v1/me/notifications).
CREATE TABLE notification_settings (
    user_id    TEXT PRIMARY KEY,
    doc        TEXT NOT NULL,
    updated_at DATETIME NOT NULL
);

-- Browsers subscribed to Web Push ("notify this device").
CREATE TABLE push_subscriptions (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL,
    endpoint   TEXT NOT NULL,
    p256dh     TEXT NOT NULL,
    auth       TEXT NOT NULL,
    user_agent TEXT NOT NULL DEFAULT '',
    created_at DATETIME NOT NULL,
    UNIQUE (user_id, endpoint)
);

-- One notification for one person on one channel (and, for push, one device). state:
-- pending (due at due_at; a sender that claims it pushes due_at past its send timeout,
-- so a crashed sender's claim lapses and another sends it), delivered, failed (after
-- the last attempt, or at once for a permanent error) or skipped (no longer worth
-- sending: the prompt was answered first). ref is what the channel returned (Slack's
-- message), so the follow-up can update it in place.
CREATE TABLE notifications (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    elicitation_id TEXT NOT NULL,
    user_id        TEXT NOT NULL,
    channel        TEXT NOT NULL,
    target         TEXT NOT NULL DEFAULT '',
    kind           TEXT NOT NULL,
    state          TEXT NOT NULL DEFAULT 'pending',
    attempts       INTEGER NOT NULL DEFAULT 0,
    due_at         DATETIME NOT NULL,
    created_at     DATETIME NOT NULL,
    delivered_at   DATETIME,
    last_error     TEXT NOT NULL DEFAULT '',
    ref            TEXT NOT NULL DEFAULT ''
);
CREATE INDEX notifications_due ON notifications (due_at) WHERE state = 'pending';
CREATE INDEX notifications_elicitation ON notifications (elicitation_id);

-- Spent action links (single use): the nonce of each used token, until it expires.
CREATE TABLE action_tokens_used (
    nonce      TEXT PRIMARY KEY,
    expires_at DATETIME NOT NULL
);

-- +goose Down
DROP TABLE action_tokens_used;
DROP TABLE notifications;
DROP TABLE push_subscriptions;
DROP TABLE notification_settings;
DROP INDEX elicitations_unnotified;
ALTER TABLE elicitations DROP COLUMN notified;
