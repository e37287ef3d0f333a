// Package notify brings a prompt to the people who can answer it, wherever they are:
// Web Push, ntfy, Slack and signed webhooks, each message carrying the
// request and, where it can be answered with one tap, signed single-use action links.
//
// The outbox is durable and off the hot path. A prompt row is its own outbox entry:
// elicitations.notified (0, 1, 2) says how far its notifications are planned, and the
// insert that parks a prompt and the update that decides it are the commits that make
// notifications due. The dispatcher plans rows behind their stage — one delivery row
// per person, channel and device, timed by the person's delay, quiet hours and
// reminder — moving the stage in the same transaction, then sends due deliveries with
// retries and exponential backoff. On Postgres, FOR UPDATE SKIP LOCKED gives each row
// to one replica; a claim pushes due_at past the send timeout, so a crashed sender's
// claim lapses and another replica sends it (at least once; DeliveryID lets receivers
// deduplicate). Parking and deciding only nudge the dispatcher: a dead receiver slows
// nothing.
//
// Channels live in sub-packages (push, ntfy, slack, webhook) behind Channel; this
// package owns who is notified, when, and what the message says.
package notify
