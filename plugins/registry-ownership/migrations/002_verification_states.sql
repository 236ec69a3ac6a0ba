-- A verification first claims the nonce (issued -> verifying) and then looks it up over the network
-- outside any transaction, so no row lock or pooled connection is held during DNS/HTTP. Expiry is
-- its own end state, and every end state records when it happened and why, so a later verify can
-- say exactly what became of the caller's last nonce.
ALTER TABLE ownership_challenges DROP CONSTRAINT ownership_challenges_status_check;
ALTER TABLE ownership_challenges ADD CONSTRAINT ownership_challenges_status_check
  CHECK (status IN ('issued', 'verifying', 'consumed', 'invalidated', 'superseded', 'expired'));
ALTER TABLE ownership_challenges ADD COLUMN closed_at timestamptz;
ALTER TABLE ownership_challenges ADD COLUMN failure_message text;
CREATE INDEX ownership_challenges_pair ON ownership_challenges (org_id, domain, issued_at DESC);
-- Pruning closed and long-expired challenges.
CREATE INDEX ownership_challenges_expires ON ownership_challenges (expires_at);
