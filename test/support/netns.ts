// Two "machines" for the cascading tests: two network namespaces, each with its own address on a
// veth pair whose other end is on a bridge in the root namespace (which holds the subnet's .254), so
// the namespaces reach each other and the test process reaches both. Names carry the pid; everything
// is removed by cleanup(), which is safe to call twice. Where namespaces cannot be made (not root,
// no `ip`), both hosts are loopback and `note` says so.
import { execFileSync } from 'node:child_process';

export interface Host {
  /** The namespace to run the server in (`ip netns exec`); undefined on loopback. */
  netns: string | undefined;
  ip: string;
}

export interface TwoHosts {
  mode: 'netns' | 'loopback';
  a: Host;
  b: Host;
  /** What the test runs on, for its output. */
  note: string;
  cleanup(): void;
}

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000 });
}

function quietly(...args: string[]): void {
  try {
    ip(...args);
  } catch {
    // already gone
  }
}

function loopback(reason: string): TwoHosts {
  return {
    mode: 'loopback',
    a: { netns: undefined, ip: '127.0.0.1' },
    b: { netns: undefined, ip: '127.0.0.1' },
    note: `network namespaces unavailable (${reason}): both relays on loopback with distinct ports instead`,
    cleanup: () => {},
  };
}

/** TEST_NO_NETNS=1 takes the loopback way on a machine that could make namespaces (to test that way too). */
export function makeTwoHosts(): TwoHosts {
  if (process.env.TEST_NO_NETNS === '1') return loopback('TEST_NO_NETNS=1');
  const prefix = `cs${process.pid}`;
  const subnet = `10.77.${(process.pid % 200) + 20}`;
  const bridge = `${prefix}br`;
  const sides = [
    { ns: `${prefix}a`, outer: `${prefix}a0`, inner: `${prefix}a1`, ip: `${subnet}.1` },
    { ns: `${prefix}b`, outer: `${prefix}b0`, inner: `${prefix}b1`, ip: `${subnet}.2` },
  ] as const;
  const cleanup = () => {
    for (const side of sides) {
      quietly('netns', 'del', side.ns);
      quietly('link', 'del', side.outer);
    }
    quietly('link', 'del', bridge);
  };
  cleanup(); // leftovers of an earlier process with this pid
  try {
    ip('link', 'add', bridge, 'type', 'bridge');
    ip('addr', 'add', `${subnet}.254/24`, 'dev', bridge);
    ip('link', 'set', bridge, 'up');
    for (const side of sides) {
      ip('netns', 'add', side.ns);
      ip('link', 'add', side.outer, 'type', 'veth', 'peer', 'name', side.inner);
      ip('link', 'set', side.inner, 'netns', side.ns);
      ip('link', 'set', side.outer, 'master', bridge);
      ip('link', 'set', side.outer, 'up');
      ip('-n', side.ns, 'addr', 'add', `${side.ip}/24`, 'dev', side.inner);
      ip('-n', side.ns, 'link', 'set', side.inner, 'up');
      ip('-n', side.ns, 'link', 'set', 'lo', 'up');
    }
    return {
      mode: 'netns',
      a: { netns: sides[0].ns, ip: sides[0].ip },
      b: { netns: sides[1].ns, ip: sides[1].ip },
      note: `relays in network namespaces ${sides[0].ns} (${sides[0].ip}) and ${sides[1].ns} (${sides[1].ip}), bridge ${bridge} (${subnet}.254)`,
      cleanup,
    };
  } catch (error) {
    cleanup();
    const reason = error instanceof Error ? (error as { stderr?: Buffer }).stderr?.toString().trim() || error.message : String(error);
    return loopback(reason);
  }
}

/** A client "machine" behind a firewall (issue 28's relayed call): a namespace on a veth pair to the root namespace. */
export interface ClientNamespace {
  netns: string;
  /** The root namespace's end of the veth: where the relay and coturn listen. */
  hostIp: string;
  /** The namespace's end: the client's address. */
  clientIp: string;
  /** Runs `nft -f -` with `rules` inside the namespace. */
  nft(rules: string): void;
  /**
   * Gives the namespace one more address, `ip`/32, standing for a host elsewhere on the internet: the
   * root namespace routes it through the veth (the route goes with the veth in cleanup()).
   */
  addHost(ip: string): void;
  /** Removes the namespace (its nftables tables with it) and the veth; safe to call twice. */
  cleanup(): void;
}

/**
 * A namespace whose only way out is a veth to the root namespace, on 10.78.x.0/24 (x from the pid).
 * Throws when namespaces cannot be made (not root, no `ip`): the caller's test needs them.
 */
export function makeClientNamespace(): ClientNamespace {
  const prefix = `tn${process.pid}`;
  const subnet = `10.78.${(process.pid % 200) + 20}`;
  const netns = `${prefix}c`;
  const outer = `${prefix}o`;
  const inner = `${prefix}i`;
  const cleanup = () => {
    quietly('netns', 'del', netns);
    quietly('link', 'del', outer);
  };
  cleanup(); // leftovers of an earlier process with this pid
  try {
    ip('netns', 'add', netns);
    ip('link', 'add', outer, 'type', 'veth', 'peer', 'name', inner);
    ip('link', 'set', inner, 'netns', netns);
    ip('addr', 'add', `${subnet}.1/24`, 'dev', outer);
    ip('link', 'set', outer, 'up');
    ip('-n', netns, 'addr', 'add', `${subnet}.2/24`, 'dev', inner);
    ip('-n', netns, 'link', 'set', inner, 'up');
    ip('-n', netns, 'link', 'set', 'lo', 'up');
  } catch (error) {
    cleanup();
    throw error;
  }
  return {
    netns,
    hostIp: `${subnet}.1`,
    clientIp: `${subnet}.2`,
    nft(rules) {
      execFileSync('ip', ['netns', 'exec', netns, 'nft', '-f', '-'], { input: rules, stdio: ['pipe', 'ignore', 'pipe'], timeout: 10_000 });
    },
    addHost(address) {
      ip('-n', netns, 'addr', 'add', `${address}/32`, 'dev', inner);
      ip('route', 'add', `${address}/32`, 'via', `${subnet}.2`, 'dev', outer);
    },
    cleanup,
  };
}
