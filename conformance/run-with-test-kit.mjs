// `adcp storyboard run <url> <id> --json` with a test kit: the CLI of @adcp/sdk 6.11.0 has no flag for
// one, so this calls the function that command calls (comply) with the same options plus `test_kit`.
// Usage: node run-with-test-kit.mjs <agent url> <storyboard id> <bearer token> <test kit JSON> <timeout s>
import { comply, formatComplianceResultsJSON, setAgentTesterLogger } from '@adcp/sdk/testing';

const [agentUrl, storyboard, token, kit, timeout] = process.argv.slice(2);
// The result is the only thing on stdout (the CLI's --json contract); the runner's chatter goes to stderr.
console.log = console.error;
setAgentTesterLogger({ info: () => {}, error: () => {}, warn: () => {}, debug: () => {} });
const result = await comply(agentUrl, {
  protocol: 'mcp',
  storyboards: [storyboard],
  timeout_ms: Number(timeout) * 1000,
  auth: { type: 'bearer', token },
  allow_http: true,
  webhook_receiver: { mode: 'loopback' },
  contracts: ['webhook_receiver_runner'],
  test_kit: JSON.parse(kit),
});
process.stdout.write(formatComplianceResultsJSON(result));
process.exit(0);
