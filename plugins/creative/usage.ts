import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { ModelUsage } from '../../core/ports/creative-generator.ts';

/** One model-written creative's consumption, kept for usage reporting (report_usage) per build. */
export async function recordUsage(db: Queryable, u: { scope: string; formatId: string; usage: ModelUsage; at: Date }): Promise<void> {
  await db.query(sql`
    INSERT INTO creative_generation_usage (scope, format_id, model, input_tokens, output_tokens, created_at)
    VALUES (${u.scope}::text, ${u.formatId}::text, ${u.usage.model}::text, ${u.usage.inputTokens}::int, ${u.usage.outputTokens}::int, ${u.at}::timestamptz)`);
}
