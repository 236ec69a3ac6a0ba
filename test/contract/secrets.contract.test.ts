import { SecretBox } from '../../core/ports/secrets.ts';
import { deploy } from '../support/deploy.ts';
import { secretBoxContract } from './secrets.contract.ts';

// The kernel's SecretBox, configured through SECRETS_KEY as a deployment would be.
const box = async (key?: string) => {
  const d = await deploy(null, [], { env: key ? { SECRETS_KEY: key } : {} });
  return { port: d.deployment.get(SecretBox), close: () => d.close() };
};

secretBoxContract('kernel SecretBox with SECRETS_KEY', true, async () => {
  const [main, other] = [await box('k'.repeat(40)), await box('x'.repeat(40))];
  return { port: main.port, other: other.port, close: async () => void (await Promise.all([main.close(), other.close()])) };
});

secretBoxContract('kernel SecretBox without SECRETS_KEY', false, async () => {
  const [main, other] = [await box(), await box('k'.repeat(40))];
  return { port: main.port, other: other.port, close: async () => void (await Promise.all([main.close(), other.close()])) };
});
