import { toJsonSchema } from '@valibot/to-json-schema';
import { pushNotificationConfigSchema } from './pipeline.ts';
import type { RegisteredTask } from '../../core/task.ts';
import { adcpRequestSchema } from '../../lib/adcp/request-schemas.ts';

function convert(schema: unknown): Record<string, unknown> {
  // errorMode 'ignore': pipes with transforms or custom checks keep their base type instead of failing.
  const out = toJsonSchema(schema as any, { errorMode: 'ignore', typeMode: 'input' }) as Record<string, unknown>;
  delete out.$schema;
  return out;
}

/**
 * JSON Schema of a task's arguments. In the `adcp` namespace a task naming its AdCP request schema
 * publishes that schema (every request field, so schema-driven clients strip nothing); otherwise its
 * own input schema. Envelope members the runtime accepts are added when missing (`context`,
 * `push_notification_config`, `idempotency_key` — required on mutating tasks).
 */
export function taskInputJsonSchema(task: RegisteredTask, namespace: string, requireOperationId: boolean): Record<string, unknown> {
  const base = namespace === 'adcp' && task.requestSchema ? adcpRequestSchema(task.requestSchema) : convert(task.input);
  delete base.$schema;
  const properties = { ...((base.properties as Record<string, unknown>) ?? {}) };
  const required = new Set((base.required as string[]) ?? []);
  properties.context ??= { type: 'object', description: 'Opaque object echoed verbatim in the response and every webhook', additionalProperties: true };
  if (task.resume) {
    properties.push_notification_config ??= {
      ...convert(pushNotificationConfigSchema(requireOperationId)),
      description: 'Webhook registration for status changes of an asynchronous call',
    };
  }
  if (task.mutating) {
    properties.idempotency_key ??= {
      type: 'string',
      pattern: '^[A-Za-z0-9_.:-]{16,255}$',
      description: 'Required: unique per request (UUID v4 recommended); a retry with the same key replays the original response',
    };
    required.add('idempotency_key');
  }
  const out: Record<string, unknown> = { ...base, type: 'object', properties };
  if (required.size) out.required = [...required];
  else delete out.required;
  // Envelope members are accepted alongside task fields.
  delete out.additionalProperties;
  return out;
}
