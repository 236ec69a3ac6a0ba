-- Other features ask which organizations have proven a domain (the brand agent's claim answers).
CREATE INDEX ownership_proofs_domain ON ownership_proofs (domain, proven_at DESC);
