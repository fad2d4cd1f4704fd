// A TCP relay that puts a network between the product and a local API server: every chunk is
// passed on `oneWayMs` later, in each direction, so a request pays the round trip a cluster one
// cloud region away costs (TLS handshakes included: the bytes are relayed untouched, and the
// server's certificate names 127.0.0.1, which the relay's address is too). For the bench's rows
// that ask several clusters at once, where waiting on the network, not the CPU, is what users have.
import * as net from 'node:net';

export interface LatencyProxy {
  /** `https://127.0.0.1:PORT`, to put in a kubeconfig instead of the server's own URL. */
  readonly url: string;
  close(): Promise<void>;
}

export async function startLatencyProxy(target: string, oneWayMs: number): Promise<LatencyProxy> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<net.Socket>();
  const relay = (from: net.Socket, to: net.Socket) => {
    from.on('data', (chunk) => {
      setTimeout(() => {
        if (!to.destroyed) to.write(chunk);
      }, oneWayMs);
    });
    from.on('end', () => setTimeout(() => to.end(), oneWayMs));
    from.on('error', () => to.destroy());
    from.on('close', () => setTimeout(() => to.destroy(), oneWayMs));
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    }
    relay(client, upstream);
    relay(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  return {
    url: `https://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
