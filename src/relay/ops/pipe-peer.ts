// Where a pipe transport may send its RTP: the address a connect names must be another relay's, one
// unicast host of the pipe's own family; never a group, a broadcast, the unspecified address, a
// link-local host or a cloud's metadata service; and, with MEDIASOUP_PIPE_PEER_CIDRS, inside the
// operator's private network. Matching is node:net's BlockList (IPv4-mapped IPv6 included).
import { BlockList, isIP } from 'node:net';
import type { PipePeerCidr } from '../../config/index.js';

type Family = 'ipv4' | 'ipv6';

/** Address classes no relay listens on, each with what the answer calls it. */
const REFUSED: { what: string; ranges: [network: string, prefix: number, family: Family][] }[] = [
  { what: 'the unspecified address or "this network" (0.0.0.0/8, ::)', ranges: [['0.0.0.0', 8, 'ipv4'], ['::', 128, 'ipv6']] },
  { what: 'a multicast address (224.0.0.0/4, ff00::/8)', ranges: [['224.0.0.0', 4, 'ipv4'], ['ff00::', 8, 'ipv6']] },
  // 255.255.255.255 and the reserved class E; a subnet's own broadcast address cannot be told from here.
  { what: 'the broadcast address or a reserved one (240.0.0.0/4)', ranges: [['240.0.0.0', 4, 'ipv4']] },
  // 169.254.169.254 is the metadata service of most clouds (AWS, GCP, Azure, Oracle, DigitalOcean).
  { what: 'a link-local address (169.254.0.0/16, fe80::/10), where cloud metadata services answer', ranges: [['169.254.0.0', 16, 'ipv4'], ['fe80::', 10, 'ipv6']] },
  { what: 'a cloud metadata service address (100.100.100.200, fd00:ec2::254)', ranges: [['100.100.100.200', 32, 'ipv4'], ['fd00:ec2::254', 128, 'ipv6']] },
];

const REFUSED_LISTS = REFUSED.map(({ what, ranges }) => ({ what, list: blockListOf(ranges) }));

/** Every IPv4 address: an IPv6 address it matches is IPv4-mapped (::ffff:a.b.c.d). */
const ANY_IPV4 = blockListOf([['0.0.0.0', 0, 'ipv4']]);

const allowLists = new WeakMap<readonly PipePeerCidr[], BlockList>();

function blockListOf(ranges: readonly (readonly [string, number, Family])[]): BlockList {
  const list = new BlockList();
  for (const [network, prefix, family] of ranges) list.addSubnet(network, prefix, family);
  return list;
}

/**
 * Why a pipe transport listening on an address of `listenFamily` must not send to `ip`; undefined
 * when it may. `peerCidrs`: MEDIASOUP_PIPE_PEER_CIDRS (undefined: any unicast address).
 * @example pipePeerProblem('169.254.169.254', 4, undefined) // 'a link-local address …'
 */
export function pipePeerProblem(ip: string, listenFamily: 4 | 6, peerCidrs: readonly PipePeerCidr[] | undefined): string | undefined {
  const version = isIP(ip);
  if (version === 0) return 'must be an IP address';
  const family: Family = version === 4 ? 'ipv4' : 'ipv6';
  if (version !== listenFamily) {
    return `an IPv${version} address, but this pipe transport listens on IPv${listenFamily} (MEDIASOUP_PIPE_LISTEN_IP): give the other relay's IPv${listenFamily} address`;
  }
  if (family === 'ipv6' && ANY_IPV4.check(ip, 'ipv6')) return 'an IPv4-mapped IPv6 address: pipe transports connect to addresses of their own family';
  for (const { what, list } of REFUSED_LISTS) {
    if (list.check(ip, family)) return `${what}: a pipe transport connects to one other relay's unicast address`;
  }
  if (peerCidrs !== undefined && !allowListOf(peerCidrs).check(ip, family)) {
    return `not in MEDIASOUP_PIPE_PEER_CIDRS (${peerCidrs.map((c) => `${c.network}/${c.prefix}`).join(', ')})`;
  }
  return undefined;
}

function allowListOf(cidrs: readonly PipePeerCidr[]): BlockList {
  let list = allowLists.get(cidrs);
  if (!list) allowLists.set(cidrs, (list = blockListOf(cidrs.map((c) => [c.network, c.prefix, c.family] as const))));
  return list;
}
