import { definePlugin } from '../../core/plugin.ts';
import { Endpoints } from '../../core/endpoint.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { policyEndpoints } from './endpoints.ts';

/** The governance policy registry: community policies with revision history (see endpoints.ts). */
export default definePlugin({
  name: 'registry-policies',
  deps: { db: Database, clock: Clock, endpoints: Endpoints },
  migrations: [
    {
      version: 1,
      name: 'policies',
      sql: `CREATE TABLE policies (
  policy_id text PRIMARY KEY,
  data jsonb NOT NULL,
  -- registry (curated, read-only here) | community (saved through the API)
  source_type text NOT NULL,
  -- approved | pending
  review_status text NOT NULL,
  owner_org_id uuid,
  revision_number int NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX policies_name ON policies (lower(data->>'name'));
CREATE TABLE policy_revisions (
  policy_id text NOT NULL REFERENCES policies (policy_id) ON DELETE CASCADE,
  revision_number int NOT NULL,
  data jsonb NOT NULL,
  editor_org_id uuid,
  editor_name text NOT NULL,
  edit_summary text NOT NULL,
  is_rollback boolean NOT NULL DEFAULT false,
  rolled_back_to int,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (policy_id, revision_number)
);`,
    },
  ],
  init({ db, clock, endpoints }) {
    endpoints.add(...policyEndpoints({ db, clock }));
  },
});
