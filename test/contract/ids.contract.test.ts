import { Ids } from '../../core/ports/ids.ts';
import { deploy } from '../support/deploy.ts';
import { idsContract } from './ids.contract.ts';

// The kernel's default binding.
idsContract('defaultIds (kernel default)', async () => {
  const d = await deploy(null, []);
  return { port: d.deployment.get(Ids), close: () => d.close() };
});
