export {};
// Baseline: raw Bun.serve answering a constant JSON body shaped like a brand resolution.
const body = JSON.stringify({
  canonical_id: 'bench-brand.example',
  canonical_domain: 'bench-brand.example',
  brand_name: 'Bench Brand',
  keller_type: 'master',
  house_domain: 'bench-brand.example',
  source: 'community',
});
const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response(body, { headers: { 'content-type': 'application/json' } }) });
console.log(`READY ${server.port}`);
process.on('SIGTERM', () => {
  server.stop(true);
  process.exit(0);
});
