-- Fires a feature wants to show its callers (webhook_activity): who may read them and what they are about.
ALTER TABLE webhook_outbox ADD COLUMN activity_owner text;
ALTER TABLE webhook_outbox ADD COLUMN activity_subject text;
ALTER TABLE webhook_outbox ADD COLUMN notification_type text;
ALTER TABLE webhook_outbox ADD COLUMN sequence_number integer;
CREATE INDEX webhook_outbox_activity ON webhook_outbox (activity_owner, activity_subject, created_at DESC) WHERE activity_subject IS NOT NULL;
