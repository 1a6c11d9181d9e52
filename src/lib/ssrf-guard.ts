import dns, { type LookupAddress, type LookupAllOptions } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { Agent, buildConnector } from 'undici';

/**
 * The guard in front of every outbound request a workflow makes (DESIGN principle 4): user
 * graphs choose the URL, so without it a workflow could read the cloud metadata service or
 * anything else on the private network of the machine running Switchyard.
 *
 * The check runs where the socket is opened (undici's connector), on the addresses that socket
 * will actually use, so a host name that resolves to a public address when the URL is checked
 * and to 127.0.0.1 a moment later (DNS rebinding) is still refused, and so is every redirect hop.
 */

/** Ranges no workflow may reach. Reserved and unallocated space is in because it never hosts a public API. */
const FORBIDDEN_V4: readonly string[] = [
  '0.0.0.0/8', // "this network", includes the unspecified 0.0.0.0 (which Linux routes to localhost)
  '10.0.0.0/8', // private
  '100.64.0.0/10', // carrier-grade NAT: shared, not public
  '127.0.0.0/8', // loopback
  '169.254.0.0/16', // link-local, includes the cloud metadata service 169.254.169.254
  '172.16.0.0/12', // private
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.2.0/24', // documentation (TEST-NET-1)
  '192.88.99.0/24', // deprecated 6to4 relay anycast
  '192.168.0.0/16', // private
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24', // documentation (TEST-NET-2)
  '203.0.113.0/24', // documentation (TEST-NET-3)
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, includes the broadcast address 255.255.255.255
];

/**
 * IPv6 outside global unicast (2000::/3) is all special-purpose (loopback, ULA, link-local,
 * multicast, discard, …), so everything outside it is refused; inside it, the special blocks.
 * Prefixes that embed an IPv4 address are handled by `embeddedIPv4` before this list.
 */
const FORBIDDEN_V6: readonly string[] = [
  '::/3', // includes ::, ::1, 64:ff9b:1::/48 (local NAT64) and 100::/64 (discard)
  '4000::/2',
  '8000::/1', // with the line above: fc00::/7 (unique local), fe80::/10 (link-local), fec0::/10, ff00::/8 (multicast)
  '2001::/23', // IETF protocol assignments: Teredo, benchmarking 2001:2::/48, ORCHID
  '2001:db8::/32', // documentation
  '3fff::/20', // documentation (RFC 9637)
];

function blockListOf(cidrs: readonly string[], type: 'ipv4' | 'ipv6'): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [network = '', bits = ''] = cidr.split('/');
    list.addSubnet(network, Number(bits), type);
  }
  return list;
}

const forbiddenV4 = blockListOf(FORBIDDEN_V4, 'ipv4');
const forbiddenV6 = blockListOf(FORBIDDEN_V6, 'ipv6');

/** Scope ids (`fe80::1%eth0`) say which interface, not which address: BlockList refuses them. */
function stripZone(address: string): string {
  const percent = address.indexOf('%');
  return percent === -1 ? address : address.slice(0, percent);
}

/** The eight 16-bit groups of a valid IPv6 address (callers check with isIP first). */
function ipv6Groups(address: string): number[] {
  let text = address;
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const [a = 0, b = 0, c = 0, d = 0] = tail.split('.').map(Number);
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const front = parse(head);
  const back = rest === undefined ? [] : parse(rest);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

function v4From(high: number, low: number): string {
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}

/**
 * The IPv4 address an IPv6 address stands for, when it is one of the forms that reach an IPv4
 * host: mapped `::ffff:a.b.c.d` (what dual-stack sockets report), translated `::ffff:0:a.b.c.d`,
 * the deprecated compatible `::a.b.c.d`, NAT64 `64:ff9b::/96` and 6to4 `2002::/16`.
 */
export function embeddedIPv4(address: string): string | null {
  if (isIP(address) !== 6) return null;
  const g = ipv6Groups(stripZone(address));
  const zeros = (from: number, to: number) => g.slice(from, to).every((group) => group === 0);
  if (zeros(0, 5) && (g[5] === 0xffff || g[5] === 0)) return v4From(g[6] ?? 0, g[7] ?? 0);
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return v4From(g[6] ?? 0, g[7] ?? 0);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return v4From(g[6] ?? 0, g[7] ?? 0);
  if (g[0] === 0x2002) return v4From(g[1] ?? 0, g[2] ?? 0);
  return null;
}

/** True for any address a workflow may not reach without an allow-list entry; also for anything that is not an IP address (fail closed). */
export function isForbiddenAddress(ip: string): boolean {
  const address = stripZone(ip);
  const family = isIP(address);
  if (family === 4) return forbiddenV4.check(address, 'ipv4');
  if (family !== 6) return true;
  const v4 = embeddedIPv4(address);
  if (v4 !== null) return forbiddenV4.check(v4, 'ipv4');
  return forbiddenV6.check(address, 'ipv6');
}

/** SWITCHYARD_HTTP_ALLOW as a matcher: exact host names, `*.example.com` (subdomains only), IPs and CIDRs. */
export interface AllowList {
  allowsHost(hostname: string): boolean;
  allowsAddress(address: string): boolean;
}

/** Host names compare case-insensitively and without the root label's trailing dot. */
function normalizeHost(hostname: string): string {
  return hostname.toLowerCase().replace(/\.$/, '');
}

export function createAllowList(entries: readonly string[]): AllowList {
  const addresses = new BlockList();
  const hosts = new Set<string>();
  const suffixes: string[] = [];
  for (const raw of entries) {
    const entry = raw.trim();
    const [network = '', bits, ...rest] = entry.split('/');
    const family = isIP(network);
    if (family !== 0 && rest.length === 0) {
      const type = family === 4 ? 'ipv4' : 'ipv6';
      if (bits === undefined) addresses.addAddress(network, type);
      else addresses.addSubnet(network, Number(bits), type);
    } else if (entry.startsWith('*.')) {
      suffixes.push(normalizeHost(entry.slice(1)));
    } else if (entry !== '' && !entry.includes('*') && !entry.includes('/')) {
      // Any other `*` (a bare `*` included) matches nothing: allowing everything is not a typo we guess at.
      hosts.add(normalizeHost(entry));
    }
  }
  const allowsAddress = (ip: string): boolean => {
    const address = stripZone(ip);
    const family = isIP(address);
    if (family === 0) return false;
    if (addresses.check(address, family === 4 ? 'ipv4' : 'ipv6')) return true;
    // A dual-stack socket may report 127.0.0.1 as ::ffff:127.0.0.1; an entry for one covers the other.
    const groups = family === 6 ? ipv6Groups(address) : [];
    const mapped = groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;
    return mapped && addresses.check(v4From(groups[6] ?? 0, groups[7] ?? 0), 'ipv4');
  };
  const allowsHost = (hostname: string): boolean => {
    const host = normalizeHost(hostname);
    if (hosts.has(host)) return true;
    if (suffixes.some((suffix) => host.endsWith(suffix) && host.length > suffix.length)) return true;
    return isIP(stripZone(host)) !== 0 && allowsAddress(host);
  };
  return { allowsHost, allowsAddress };
}

/** What the guard throws (through the socket's error): code `EFORBIDDENADDRESS`. */
export class ForbiddenAddressError extends Error {
  readonly code = 'EFORBIDDENADDRESS';
  constructor(
    readonly hostname: string,
    readonly address: string,
  ) {
    super(
      hostname === address
        ? `refused to connect to ${address}: private, loopback, link-local and reserved addresses are not allowed (see SWITCHYARD_HTTP_ALLOW)`
        : `refused to connect to ${hostname} (${address}): private, loopback, link-local and reserved addresses are not allowed (see SWITCHYARD_HTTP_ALLOW)`,
    );
    this.name = 'ForbiddenAddressError';
  }
}

/**
 * The refusal for a host and the addresses it resolved to, or null when all may be used. One
 * forbidden address refuses the whole answer: connecting to the remaining ones would leave the
 * choice of target to whoever controls the DNS record.
 */
export function checkAddresses(allow: AllowList, hostname: string, addresses: readonly string[]): ForbiddenAddressError | null {
  if (allow.allowsHost(hostname)) return null;
  const bad = addresses.find((address) => isForbiddenAddress(address) && !allow.allowsAddress(address));
  return bad === undefined ? null : new ForbiddenAddressError(hostname, bad);
}

/** dns.lookup with `all: true`: injectable so tests can make a name resolve anywhere without a DNS server. */
export type Resolver = (
  hostname: string,
  options: LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

const systemResolver: Resolver = (hostname, options, callback) => dns.lookup(hostname, options, callback);

/**
 * A `dns.lookup`-compatible function for `net.connect`: resolves every address, refuses the lot
 * when one is forbidden, and answers in the shape the caller asked for (one address or all).
 */
export function guardedLookup(allow: AllowList, resolve: Resolver = systemResolver): LookupFunction {
  return (hostname, options, callback) => {
    const answer = (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => {
      if (error) return callback(error, options.all ? [] : '', undefined);
      const refusal = checkAddresses(
        allow,
        hostname,
        addresses.map((entry) => entry.address),
      );
      if (refusal) return callback(refusal, options.all ? [] : '', undefined);
      const first = addresses[0];
      if (options.all) return callback(null, addresses);
      if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', undefined);
      callback(null, first.address, first.family);
    };
    const family = isIP(hostname);
    // A literal needs no DNS; answer asynchronously like dns.lookup does.
    if (family !== 0) process.nextTick(answer, null, [{ address: hostname, family }]);
    else resolve(hostname, { ...options, all: true }, answer);
  };
}

type Connector = buildConnector.connector;

/**
 * net.connect never calls `lookup` for an IP literal, so literals (`http://169.254.169.254/`,
 * `http://[::1]/`) are checked here, before the inner connector opens anything.
 */
export function guardConnector(allow: AllowList, inner: Connector): Connector {
  return (options, callback) => {
    const family = isIP(options.hostname);
    if (family !== 0) {
      const refusal = checkAddresses(allow, options.hostname, [options.hostname]);
      if (refusal) return callback(refusal, null);
    }
    inner(options, callback);
  };
}

/**
 * An undici Agent whose every connection, redirect hops included, passes the guard. Keep one per
 * allow-list: it owns the keep-alive pool.
 */
export function createGuardedDispatcher(allow: AllowList | readonly string[], options: { resolve?: Resolver } = {}): Agent {
  const list = isAllowList(allow) ? allow : createAllowList(allow);
  const connector = buildConnector({ lookup: guardedLookup(list, options.resolve) });
  return new Agent({ connect: guardConnector(list, connector) });
}

function isAllowList(value: AllowList | readonly string[]): value is AllowList {
  return !Array.isArray(value);
}
