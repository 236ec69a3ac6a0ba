import { connect, createServer, type Server, type Socket } from 'node:net';

export type ProxyMode = 'forward' | 'refuse' | 'blackhole';

export interface TcpProxy {
  /** The proxy's port (kept across modes). */
  readonly port: number;
  /**
   * `forward` relays bytes; `refuse` stops listening (connects get ECONNREFUSED) and resets open
   * connections; `blackhole` accepts and keeps connections but relays nothing, as a partitioned
   * network would. Leaving `blackhole` resets the stalled connections, as a real network's
   * timeouts eventually would.
   */
  setMode(mode: ProxyMode): Promise<void>;
  close(): Promise<void>;
}

/** A TCP relay on loopback in front of `target`, for outage tests. */
export async function startTcpProxy(target: { host: string; port: number }, listenHost = '127.0.0.1'): Promise<TcpProxy> {
  let mode: ProxyMode = 'forward';
  const open = new Set<Socket>();
  const track = (s: Socket) => {
    open.add(s);
    s.on('close', () => open.delete(s));
    s.on('error', () => {});
  };
  const stall = (s: Socket) => {
    s.removeAllListeners('data');
    s.on('data', () => {}); // read and drop
  };
  const onConnection = (client: Socket) => {
    track(client);
    if (mode === 'blackhole') return stall(client);
    const upstream = connect(target.port, target.host);
    track(upstream);
    client.on('data', (d) => mode === 'forward' && upstream.write(d));
    upstream.on('data', (d) => mode === 'forward' && client.write(d));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  };
  let server: Server | null = null;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer(onConnection);
      s.once('error', reject);
      s.listen(port, listenHost, () => {
        port = (s.address() as { port: number }).port;
        server = s;
        resolve();
      });
    });
  const stopListening = () =>
    new Promise<void>((resolve) => {
      if (!server) return resolve();
      server.close(() => resolve());
      server = null;
    });
  const resetAll = () => {
    for (const s of open) s.destroy();
  };
  await listen();
  return {
    get port() {
      return port;
    },
    async setMode(next) {
      const previous = mode;
      mode = next;
      if (next === 'refuse') {
        const closed = stopListening(); // resolves once the open connections are gone
        resetAll();
        await closed;
        return;
      }
      if (previous === 'blackhole' && next === 'forward') resetAll();
      if (!server) await listen();
    },
    async close() {
      const closed = stopListening();
      resetAll();
      await closed;
    },
  };
}
