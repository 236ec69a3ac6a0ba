import { toJsonSchema } from '@valibot/to-json-schema';
import { pushNotificationConfigSchema } from '../../core/task-invoke.ts';
import type { RegisteredTask } from '../../core/task.ts';

const cache = new WeakMap<RegisteredTask, Record<string, unknown>>();

function convert(schema: unknown): Record<string, unknown> {
  // errorMode 'ignore': pipes with transforms or custom checks keep their base type instead of failing.
  const out = toJsonSchema(schema as any, { errorMode: 'ignore', typeMode: 'input' }) as Record<string, unknown>;
  delete out.$schema;
  return out;
}

/**
 * JSON Schema of a task's arguments: its own input schema plus the envelope members the runtime
 * accepts (`context`, `push_notification_config`, `idempotency_key` — required on mutating tasks).
 */
export function taskInputJsonSchema(task: RegisteredTask): Record<string, unknown> {
  const hit = cache.get(task);
  if (hit) return hit;
  const base = convert(task.input);
  const properties = { ...((base.properties as Record<string, unknown>) ?? {}) };
  const required = [...((base.required as string[]) ?? [])];
  properties.context = { type: 'object', description: 'Opaque object echoed verbatim in the response and every webhook', additionalProperties: true };
  if (task.resume) {
    properties.push_notification_config = { ...convert(pushNotificationConfigSchema), description: 'Webhook registration for status changes of an asynchronous call' };
  }
  if (task.mutating) {
    properties.idempotency_key = {
      type: 'string',
      pattern: '^[A-Za-z0-9_.:-]{16,255}$',
      description: 'Required: unique per request (UUID v4 recommended); a retry with the same key replays the original response',
    };
    required.push('idempotency_key');
  }
  const out: Record<string, unknown> = { ...base, type: 'object', properties };
  if (required.length) out.required = required;
  else delete out.required;
  // Envelope members are accepted alongside task fields.
  delete out.additionalProperties;
  cache.set(task, out);
  return out;
}
