-- A2A push registrations may carry a token the receiver expects back in X-A2A-Notification-Token.
ALTER TABLE webhook_outbox ADD COLUMN notification_token text;
