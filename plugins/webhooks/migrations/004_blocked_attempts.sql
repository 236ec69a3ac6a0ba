-- A delivery the SSRF guard refused (loopback, private address, http without allowHttp) is its own
-- attempt status, so an operator can tell it from a receiver that failed.
ALTER TABLE webhook_delivery_attempts DROP CONSTRAINT webhook_delivery_attempts_status_check;
ALTER TABLE webhook_delivery_attempts ADD CONSTRAINT webhook_delivery_attempts_status_check
  CHECK (status IN ('success', 'failed', 'timeout', 'connection_error', 'blocked', 'pending'));
