// The check that a recording's ffmpeg holds its ports reads the kernel's table: it never binds the
// port itself, so ffmpeg binding it at that moment does not fail with "Address already in use" (a
// recording's start failed now and then while the check bound the port every 50 ms). Real sockets.
import { createSocket, type Socket } from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { createPortPairs, portsBound, tableAddress } from '../../src/relay/recordings/ports.js';

const opened: Socket[] = [];

function bind(address: string, port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createSocket(address.includes(':') ? 'udp6' : 'udp4');
    socket.once('error', (error) => {
      socket.close();
      reject(error);
    });
    socket.bind(port, address, () => {
      opened.push(socket);
      resolve(socket);
    });
  });
}

afterEach(() => {
  for (const socket of opened.splice(0)) socket.close();
});

describe('recording ports', () => {
  it("writes addresses as the kernel's table does", () => {
    // This machine is little-endian (x86-64, arm64 as Linux runs it).
    expect(tableAddress('127.0.0.1')).toBe('0100007F');
    expect(tableAddress('0.0.0.0')).toBe('00000000');
    expect(tableAddress('::1')).toBe('00000000000000000000000001000000');
    expect(tableAddress('::')).toBe('0'.repeat(32));
    expect(tableAddress('fe80::1:2')).toBe('000080FE000000000000000002000100');
    expect(tableAddress('::ffff:127.0.0.1')).toBe('0000000000000000FFFF00000100007F');
  });

  it('says a port is held exactly while a socket is bound to it, on 127.0.0.1, 127.0.0.2 and ::1', async () => {
    const pairs = createPortPairs('127.0.0.1');
    const port = await pairs.take();
    expect(await portsBound('127.0.0.1', [port])).toBe(false);
    const socket = await bind('127.0.0.1', port);
    expect(await portsBound('127.0.0.1', [port])).toBe(true);
    // Another address on the same port is not the one ffmpeg binds.
    expect(await portsBound('127.0.0.2', [port])).toBe(false);
    opened.splice(opened.indexOf(socket), 1);
    socket.close();
    expect(await portsBound('127.0.0.1', [port])).toBe(false);
    // A wildcard bind holds the port on every address.
    await bind('0.0.0.0', port);
    expect(await portsBound('127.0.0.2', [port])).toBe(true);
    // Every port asked of must be bound: the RTP port alone is not the pair.
    expect(await portsBound('127.0.0.1', [port, port + 1])).toBe(false);
    await bind('127.0.0.1', port + 1);
    expect(await portsBound('127.0.0.1', [port, port + 1])).toBe(true);
    const six = await bind('::1', 0);
    expect(await portsBound('::1', [six.address().port])).toBe(true);
    pairs.give(port);
  });

  it('never holds the port it checks: binds of the port racing 300 checks of it all succeed', async () => {
    const port = await createPortPairs('127.0.0.1').take();
    const failures: string[] = [];
    let checks = 0;
    let stop = false;
    const checking = (async () => {
      while (!stop) {
        await portsBound('127.0.0.1', [port]);
        checks += 1;
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const until = Date.now() + 10_000;
    let binds = 0;
    for (; checks < 300 && Date.now() < until && failures.length < 5; binds++) {
      try {
        const socket = await bind('127.0.0.1', port);
        opened.splice(opened.indexOf(socket), 1);
        socket.close();
      } catch (error) {
        failures.push((error as Error).message);
      }
      // A bind (or a check that binds) completes without a turn of the event loop: each loop gives the other a turn.
      await new Promise((resolve) => setImmediate(resolve));
    }
    stop = true;
    await checking;
    // With a test bind as the check, binds failed with EADDRINUSE within the first few hundred.
    expect(failures).toEqual([]);
    expect(checks).toBeGreaterThanOrEqual(300);
    expect(binds).toBeGreaterThan(checks);
  });
});
