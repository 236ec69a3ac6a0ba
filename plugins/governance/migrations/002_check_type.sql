-- Whether a check was an intent check (an orchestrator sent tool + payload) or an execution check
-- (a seller's planned delivery or delivery report); the audit log reports it. Earlier rows were reported as intent.
ALTER TABLE governance_checks ADD COLUMN check_type text NOT NULL DEFAULT 'intent' CHECK (check_type IN ('intent', 'execution'));
