import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  checkAddresses,
  createAllowList,
  createGuardedDispatcher,
  embeddedIPv4,
  guardConnector,
  guardedLookup,
  isForbiddenAddress,
  type Resolver,
} from './ssrf-guard.js';

const REASON = 'private, loopback, link-local and reserved addresses are not allowed (see SWITCHYARD_HTTP_ALLOW)';

describe('isForbiddenAddress', () => {
  it.each([
    ['0.0.0.0', 'unspecified'],
    ['0.255.255.255', '"this network" 0/8'],
    ['10.0.0.1', 'private 10/8'],
    ['10.255.255.255', 'private 10/8, last address'],
    ['100.64.0.1', 'CGNAT 100.64/10'],
    ['100.127.255.255', 'CGNAT 100.64/10, last address'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback 127/8'],
    ['169.254.169.254', 'cloud metadata (link-local)'],
    ['169.254.0.1', 'link-local'],
    ['172.16.0.1', 'private 172.16/12'],
    ['172.31.255.255', 'private 172.16/12, last address'],
    ['192.0.0.8', 'IETF protocol assignments'],
    ['192.0.2.10', 'documentation TEST-NET-1'],
    ['192.88.99.1', '6to4 relay anycast'],
    ['192.168.1.1', 'private 192.168/16'],
    ['198.18.0.1', 'benchmarking 198.18/15'],
    ['198.19.255.255', 'benchmarking 198.18/15, last address'],
    ['198.51.100.7', 'documentation TEST-NET-2'],
    ['203.0.113.9', 'documentation TEST-NET-3'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast (SSDP)'],
    ['240.0.0.1', 'reserved 240/4'],
    ['255.255.255.255', 'broadcast'],
  ])('refuses the IPv4 address %s (%s)', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '169.253.255.255',
    '169.255.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '192.167.255.255',
    '192.169.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255',
  ])('lets the public IPv4 address %s through', (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });

  it.each([
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['fc00::1', 'unique local fc00::/7'],
    ['fd12:3456:789a::1', 'unique local fd00::/8'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local with a zone'],
    ['febf:ffff::1', 'link-local fe80::/10, last block'],
    ['fec0::1', 'deprecated site-local'],
    ['ff02::1', 'multicast'],
    ['100::1', 'discard-only 100::/64'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation 3fff::/20'],
    ['2001::1', 'Teredo'],
    ['2001:2::1', 'benchmarking'],
    ['64:ff9b:1::1', 'local-use NAT64'],
    ['4000::1', 'unallocated'],
  ])('refuses the IPv6 address %s (%s)', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each([
    ['::ffff:127.0.0.1', 'mapped loopback'],
    ['::ffff:7f00:1', 'mapped loopback in hex'],
    ['::FFFF:10.0.0.1', 'mapped private, upper case'],
    ['::ffff:169.254.169.254', 'mapped metadata'],
    ['::ffff:0:192.168.0.1', 'translated private'],
    ['::127.0.0.1', 'compatible loopback'],
    ['::a00:1', 'compatible private in hex'],
    ['64:ff9b::127.0.0.1', 'NAT64 of loopback'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 of the metadata address'],
    ['2002:7f00:1::', '6to4 of loopback'],
    ['2002:c0a8:101::1', '6to4 of 192.168.1.1'],
    ['2002:a9fe:a9fe::1', '6to4 of the metadata address'],
  ])('refuses %s as the IPv4 address it embeds (%s)', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each(['2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '::ffff:8.8.8.8', '64:ff9b::8.8.8.8', '2002:808:808::1'])(
    'lets the public IPv6 address %s through',
    (address) => {
      expect(isForbiddenAddress(address)).toBe(false);
    },
  );

  it.each(['localhost', '', '127.1', '0x7f000001', '999.1.1.1', 'fe80::zz'])(
    'refuses %j, which is not an IP address (fail closed)',
    (value) => {
      expect(isForbiddenAddress(value)).toBe(true);
    },
  );

  it('reads the IPv4 address embedded in mapped, compatible, NAT64 and 6to4 addresses', () => {
    expect(embeddedIPv4('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(embeddedIPv4('::ffff:a9fe:a9fe')).toBe('169.254.169.254');
    expect(embeddedIPv4('::10.1.2.3')).toBe('10.1.2.3');
    expect(embeddedIPv4('64:ff9b::c0a8:1')).toBe('192.168.0.1');
    expect(embeddedIPv4('2002:ac10:1::')).toBe('172.16.0.1');
    expect(embeddedIPv4('2606:4700::1')).toBeNull();
    expect(embeddedIPv4('10.0.0.1')).toBeNull();
  });
});

describe('createAllowList', () => {
  const allow = createAllowList(['Hooks.Example.com', '*.internal.test', '10.1.0.0/16', '127.0.0.1', 'fd00::/8', '*']);

  it('matches host names exactly and case-insensitively, ignoring a trailing dot', () => {
    expect(allow.allowsHost('hooks.example.com')).toBe(true);
    expect(allow.allowsHost('HOOKS.EXAMPLE.COM.')).toBe(true);
    expect(allow.allowsHost('example.com')).toBe(false);
    expect(allow.allowsHost('api.hooks.example.com')).toBe(false);
  });

  it('matches a *. entry against subdomains at any depth but not the domain itself or a look-alike', () => {
    expect(allow.allowsHost('db.internal.test')).toBe(true);
    expect(allow.allowsHost('a.b.internal.test')).toBe(true);
    expect(allow.allowsHost('internal.test')).toBe(false);
    expect(allow.allowsHost('evilinternal.test')).toBe(false);
  });

  it('treats a bare * as matching nothing rather than disabling the guard', () => {
    expect(allow.allowsHost('anything.test')).toBe(false);
  });

  it('matches addresses against IP and CIDR entries, IPv4 entries covering their mapped IPv6 form', () => {
    expect(allow.allowsAddress('10.1.255.3')).toBe(true);
    expect(allow.allowsAddress('10.2.0.1')).toBe(false);
    expect(allow.allowsAddress('127.0.0.1')).toBe(true);
    expect(allow.allowsAddress('127.0.0.2')).toBe(false);
    expect(allow.allowsAddress('::ffff:127.0.0.1')).toBe(true);
    expect(allow.allowsAddress('fd12::1')).toBe(true);
    expect(allow.allowsAddress('fe80::1')).toBe(false);
    expect(allow.allowsAddress('not-an-ip')).toBe(false);
  });

  it('matches an IP-literal host against the address entries', () => {
    expect(allow.allowsHost('127.0.0.1')).toBe(true);
    expect(allow.allowsHost('10.1.0.9')).toBe(true);
    expect(allow.allowsHost('169.254.169.254')).toBe(false);
  });
});

describe('checkAddresses', () => {
  const allow = createAllowList(['partner.test', '10.0.0.5']);

  it('refuses the whole answer when one resolved address is forbidden, naming host and address', () => {
    const refusal = checkAddresses(allow, 'mixed.test', ['93.184.216.34', '10.0.0.6']);
    expect(refusal).toMatchObject({ code: 'EFORBIDDENADDRESS', hostname: 'mixed.test', address: '10.0.0.6' });
    expect(refusal?.message).toBe(`refused to connect to mixed.test (10.0.0.6): ${REASON}`);
  });

  it('lets an allow-listed host or an allow-listed address through', () => {
    expect(checkAddresses(allow, 'partner.test', ['127.0.0.1'])).toBeNull();
    expect(checkAddresses(allow, 'other.test', ['10.0.0.5'])).toBeNull();
    expect(checkAddresses(allow, 'public.test', ['93.184.216.34', '2606:4700::1'])).toBeNull();
  });
});

/** A resolver answering from a table, so no test depends on (or reaches) real DNS. */
function fakeResolver(table: Record<string, string[]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = (hostname: string, _options: unknown, callback: Parameters<Resolver>[2]) => {
    calls.push(hostname);
    const addresses = table[hostname];
    if (!addresses)
      return process.nextTick(callback, Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
    process.nextTick(
      callback,
      null,
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
  };
  return Object.assign(resolve, { calls });
}

function lookupWith(lookup: ReturnType<typeof guardedLookup>, hostname: string, all: boolean) {
  return new Promise<{ error: NodeJS.ErrnoException | null; address: unknown; family: unknown }>((resolve) => {
    lookup(hostname, { all }, (error, address, family) => resolve({ error, address, family }));
  });
}

describe('guardedLookup', () => {
  const resolver = fakeResolver({
    'api.public.test': ['93.184.216.34', '2606:4700::1'],
    'rebind.test': ['93.184.216.34', '127.0.0.1'],
    'partner.test': ['10.0.0.7'],
  });
  const lookup = guardedLookup(createAllowList(['partner.test']), resolver);

  it('answers with every address, or the first one, when none is forbidden', async () => {
    expect(await lookupWith(lookup, 'api.public.test', true)).toEqual({
      error: null,
      address: [
        { address: '93.184.216.34', family: 4 },
        { address: '2606:4700::1', family: 6 },
      ],
      family: undefined,
    });
    expect(await lookupWith(lookup, 'api.public.test', false)).toEqual({ error: null, address: '93.184.216.34', family: 4 });
  });

  it('refuses with EFORBIDDENADDRESS when any resolved address is forbidden', async () => {
    const { error } = await lookupWith(lookup, 'rebind.test', true);
    expect(error).toMatchObject({ code: 'EFORBIDDENADDRESS', message: `refused to connect to rebind.test (127.0.0.1): ${REASON}` });
  });

  it('lets an allow-listed host resolve to a private address', async () => {
    expect(await lookupWith(lookup, 'partner.test', false)).toEqual({ error: null, address: '10.0.0.7', family: 4 });
  });

  it('passes resolver errors on unchanged', async () => {
    const { error } = await lookupWith(lookup, 'nowhere.test', true);
    expect(error).toMatchObject({ code: 'ENOTFOUND' });
  });

  it('checks IP literals without asking DNS', async () => {
    resolver.calls.length = 0;
    expect((await lookupWith(lookup, '169.254.169.254', true)).error).toMatchObject({
      code: 'EFORBIDDENADDRESS',
      message: `refused to connect to 169.254.169.254: ${REASON}`,
    });
    expect(await lookupWith(lookup, '8.8.8.8', false)).toEqual({ error: null, address: '8.8.8.8', family: 4 });
    expect(resolver.calls).toEqual([]);
  });

  it('refuses localhost through the system resolver', async () => {
    const { error } = await lookupWith(guardedLookup(createAllowList([])), 'localhost', true);
    expect(error?.code).toBe('EFORBIDDENADDRESS');
    expect(error?.message).toMatch(/^refused to connect to localhost \((127\.0\.0\.1|::1)\): /);
  });
});

describe('guardConnector', () => {
  const connectorCall = (hostname: string, allow: string[]) => {
    const inner = vi.fn();
    const callback = vi.fn();
    guardConnector(createAllowList(allow), inner)({ hostname, protocol: 'http:', port: '80' }, callback);
    return { inner, callback };
  };

  it('refuses a forbidden IP literal before the inner connector opens anything', () => {
    for (const hostname of ['169.254.169.254', '::1', '10.0.0.1', '::ffff:127.0.0.1']) {
      const { inner, callback } = connectorCall(hostname, []);
      expect(inner).not.toHaveBeenCalled();
      expect(callback).toHaveBeenCalledWith(expect.objectContaining({ code: 'EFORBIDDENADDRESS', address: hostname }), null);
    }
  });

  it('hands allow-listed literals, public literals and host names to the inner connector', () => {
    expect(connectorCall('127.0.0.1', ['127.0.0.0/8']).inner).toHaveBeenCalledOnce();
    expect(connectorCall('8.8.8.8', []).inner).toHaveBeenCalledOnce();
    // Names are checked by the guarded lookup, on the addresses the socket will use.
    expect(connectorCall('example.test', []).inner).toHaveBeenCalledOnce();
  });
});

describe('createGuardedDispatcher', () => {
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    server = http.createServer((_request, response) => response.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('connects to an allow-listed loopback address', async () => {
    const response = await request(`http://127.0.0.1:${port}/`, { dispatcher: createGuardedDispatcher(['127.0.0.1']) });
    expect(await response.body.text()).toBe('ok');
  });

  it('refuses loopback, by literal or by a name resolving to it, when it is not allow-listed', async () => {
    const dispatcher = createGuardedDispatcher([], { resolve: fakeResolver({ 'looks-public.test': ['127.0.0.1'] }) });
    await expect(request(`http://127.0.0.1:${port}/`, { dispatcher })).rejects.toMatchObject({ code: 'EFORBIDDENADDRESS' });
    await expect(request(`http://looks-public.test:${port}/`, { dispatcher })).rejects.toMatchObject({
      code: 'EFORBIDDENADDRESS',
      message: `refused to connect to looks-public.test (127.0.0.1): ${REASON}`,
    });
  });
});
