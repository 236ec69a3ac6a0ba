// Loopback receiver for the webhook benchmark (its own process): answers 200 to every POST.
const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  async fetch(req) {
    await req.arrayBuffer();
    return new Response('{"status":"accepted"}');
  },
});
console.log(server.port);
