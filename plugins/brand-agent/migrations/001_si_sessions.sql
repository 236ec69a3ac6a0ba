-- Sponsored-intelligence sessions: one conversation between a host's user and a represented brand.
-- Everything shared lives here, so any instance answers any turn.
CREATE TABLE si_sessions (
  id uuid PRIMARY KEY,
  principal_id text NOT NULL,
  brand_domain text NOT NULL,
  offering_id text NOT NULL,
  status text NOT NULL CHECK (status IN ('active', 'pending_handoff', 'complete', 'terminated')),
  intent text NOT NULL,
  placement text,
  media_buy_id text,
  -- what the user consented to share (null members were not shared); no identity is kept without consent
  consent boolean NOT NULL,
  user_name text,
  user_locale text,
  turns integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL,
  last_turn_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  ended_at timestamptz,
  end_reason text
);
CREATE INDEX si_sessions_principal ON si_sessions (principal_id, created_at DESC, id);

-- The transcript: every turn, user and brand, in order.
CREATE TABLE si_turns (
  session_id uuid NOT NULL REFERENCES si_sessions (id) ON DELETE CASCADE,
  seq integer NOT NULL,
  role text NOT NULL CHECK (role IN ('user', 'brand')),
  text text NOT NULL,
  -- the brand's rendered answer (surface, elements) or the user's action
  detail jsonb,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (session_id, seq)
);
