// The values of Kubernetes' URL, IP and CIDR CEL libraries (k8s.io/apiserver pkg/cel/library urls.go,
// ip.go, cidr.go, v0.34), parsed as the Go standard library the API server is built with parses them:
// net/url's Parse and ParseRequestURI, net/netip's ParseAddr and ParsePrefix (Go 1.26 src/net/url/url.go,
// src/net/netip/netip.go). Go works on the bytes of a string: the text is taken as its UTF-8 bytes here.
// An error the server's CEL gives too is a `CelRuntimeError` in Go's words; what the product does not
// follow as Go does throws a plain Error (the expression is then unknown, for the dry run to decide).
import { goQuote } from '../ssa/path';

/** An error the API server's CEL gives too, in its words: the expression fails at run time there. */
export class CelRuntimeError extends Error {}

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/** A string as Go's bytes: one char per byte. */
function bytesOf(s: string): string {
  let out = '';
  for (const b of utf8.encode(s)) out += String.fromCharCode(b);
  return out;
}

/** Go's bytes as a string. */
function textOf(b: string): string {
  const a = new Uint8Array(b.length);
  for (let i = 0; i < b.length; i++) a[i] = b.charCodeAt(i);
  return fromUtf8.decode(a);
}

const q = (bytes: string) => goQuote(textOf(bytes));

// -------------------------------------------------------------------------------------------------
// IP addresses (net/netip Addr)

export class IPAddr {
  constructor(
    /** 4 bytes for IPv4, 16 for IPv6. */
    readonly bytes: readonly number[],
    readonly zone = '',
  ) {}
  get is4(): boolean {
    return this.bytes.length === 4;
  }
  get is4In6(): boolean {
    return (
      this.bytes.length === 16 &&
      this.bytes.slice(0, 10).every((b) => b === 0) &&
      this.bytes[10] === 0xff &&
      this.bytes[11] === 0xff
    );
  }
  equals(o: IPAddr): boolean {
    return this.zone === o.zone && this.bytes.length === o.bytes.length && this.bytes.every((b, i) => b === o.bytes[i]);
  }
  /** The address with IPv4-mapped IPv6 unmapped (Go's Unmap). */
  private unmapped(): IPAddr {
    return this.is4In6 ? new IPAddr(this.bytes.slice(12)) : this;
  }
  private u16(i: number): number {
    return (this.bytes[2 * i]! << 8) | this.bytes[2 * i + 1]!;
  }
  isUnspecified(): boolean {
    return this.bytes.every((b) => b === 0);
  }
  isLoopback(): boolean {
    const ip = this.unmapped();
    if (ip.is4) return ip.bytes[0] === 127;
    return ip.bytes.slice(0, 15).every((b) => b === 0) && ip.bytes[15] === 1;
  }
  isMulticast(): boolean {
    const ip = this.unmapped();
    return ip.is4 ? (ip.bytes[0]! & 0xf0) === 0xe0 : ip.bytes[0] === 0xff;
  }
  isLinkLocalMulticast(): boolean {
    const ip = this.unmapped();
    if (ip.is4) return ip.bytes[0] === 224 && ip.bytes[1] === 0 && ip.bytes[2] === 0;
    return (ip.u16(0) & 0xff0f) === 0xff02;
  }
  isLinkLocalUnicast(): boolean {
    const ip = this.unmapped();
    if (ip.is4) return ip.bytes[0] === 169 && ip.bytes[1] === 254;
    return (ip.u16(0) & 0xffc0) === 0xfe80;
  }
  isGlobalUnicast(): boolean {
    const ip = this.unmapped();
    if (ip.is4 && (ip.isUnspecified() || ip.bytes.every((b) => b === 255))) return false;
    return !(!ip.is4 && ip.isUnspecified()) && !ip.isLoopback() && !ip.isMulticast() && !ip.isLinkLocalUnicast();
  }
  toString(): string {
    if (this.is4) return this.bytes.join('.');
    const zone = this.zone !== '' ? `%${this.zone}` : '';
    if (this.is4In6) return `::ffff:${this.bytes.slice(12).join('.')}${zone}`;
    // The longest run of two or more zero groups is written `::` (the first of equal runs).
    let zeroStart = 255;
    let zeroEnd = 255;
    for (let i = 0; i < 8; i++) {
      let j = i;
      while (j < 8 && this.u16(j) === 0) j++;
      const l = j - i;
      if (l >= 2 && l > zeroEnd - zeroStart) {
        zeroStart = i;
        zeroEnd = j;
      }
    }
    let out = '';
    for (let i = 0; i < 8; i++) {
      if (i === zeroStart) {
        out += '::';
        i = zeroEnd;
        if (i >= 8) break;
      } else if (i > 0) out += ':';
      out += this.u16(i).toString(16);
    }
    return out + zone;
  }
}

class AddrError extends Error {
  constructor(input: string, msg: string, at = '') {
    super(`ParseAddr(${q(input)}): ${msg}${at !== '' ? ` (at ${q(at)})` : ''}`);
  }
}

function parseIPv4Fields(input: string, off: number, end: number, fields: number[], at: number): void {
  let val = 0;
  let pos = 0;
  let digLen = 0;
  const s = input.slice(off, end);
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c >= '0' && c <= '9') {
      if (digLen === 1 && val === 0) throw new AddrError(input, 'IPv4 field has octet with leading zero');
      val = val * 10 + (c.charCodeAt(0) - 48);
      digLen++;
      if (val > 255) throw new AddrError(input, 'IPv4 field has value >255');
    } else if (c === '.') {
      if (i === 0 || i === s.length - 1 || s[i - 1] === '.')
        throw new AddrError(input, 'IPv4 field must have at least one digit', s.slice(i));
      if (pos === 3) throw new AddrError(input, 'IPv4 address too long');
      fields[at + pos] = val;
      pos++;
      val = 0;
      digLen = 0;
    } else {
      throw new AddrError(input, 'unexpected character', s.slice(i));
    }
  }
  if (pos < 3) throw new AddrError(input, 'IPv4 address too short');
  fields[at + 3] = val;
}

function parseIPv6(input: string): IPAddr {
  let s = input;
  let zone = '';
  const z = s.indexOf('%');
  if (z !== -1) {
    zone = s.slice(z + 1);
    s = s.slice(0, z);
    if (zone === '') throw new AddrError(input, 'zone must be a non-empty string');
  }
  const ip: number[] = new Array<number>(16).fill(0);
  let ellipsis = -1;
  if (s.length >= 2 && s[0] === ':' && s[1] === ':') {
    ellipsis = 0;
    s = s.slice(2);
    if (s.length === 0) return new IPAddr(ip, zone);
  }
  let i = 0;
  while (i < 16) {
    let off = 0;
    let acc = 0;
    for (; off < s.length; off++) {
      const c = s.charCodeAt(off);
      if (c >= 48 && c <= 57) acc = acc * 16 + (c - 48);
      else if (c >= 97 && c <= 102) acc = acc * 16 + (c - 87);
      else if (c >= 65 && c <= 70) acc = acc * 16 + (c - 55);
      else break;
      if (off > 3) throw new AddrError(input, 'each group must have 4 or less digits', s);
      if (acc > 0xffff) throw new AddrError(input, 'IPv6 field has value >=2^16', s);
    }
    if (off === 0) throw new AddrError(input, 'each colon-separated field must have at least one digit', s);
    if (off < s.length && s[off] === '.') {
      if (ellipsis < 0 && i !== 12)
        throw new AddrError(input, 'embedded IPv4 address must replace the final 2 fields of the address', s);
      if (i + 4 > 16)
        throw new AddrError(input, 'too many hex fields to fit an embedded IPv4 at the end of the address', s);
      let end = input.length;
      if (zone.length > 0) end -= zone.length + 1;
      parseIPv4Fields(input, end - s.length, end, ip, i);
      s = '';
      i += 4;
      break;
    }
    ip[i] = acc >> 8;
    ip[i + 1] = acc & 0xff;
    i += 2;
    s = s.slice(off);
    if (s.length === 0) break;
    if (s[0] !== ':') throw new AddrError(input, 'unexpected character, want colon', s);
    if (s.length === 1) throw new AddrError(input, 'colon must be followed by more characters', s);
    s = s.slice(1);
    if (s[0] === ':') {
      if (ellipsis >= 0) throw new AddrError(input, 'multiple :: in address', s);
      ellipsis = i;
      s = s.slice(1);
      if (s.length === 0) break;
    }
  }
  if (s.length !== 0) throw new AddrError(input, 'trailing garbage after address', s);
  if (i < 16) {
    if (ellipsis < 0) throw new AddrError(input, 'address string too short');
    const n = 16 - i;
    for (let j = i - 1; j >= ellipsis; j--) ip[j + n] = ip[j]!;
    for (let j = ellipsis; j < ellipsis + n; j++) ip[j] = 0;
  } else if (ellipsis >= 0) {
    throw new AddrError(input, 'the :: must expand to at least one field of zeros');
  }
  return new IPAddr(ip, zone);
}

/** netip.ParseAddr on Go's bytes of the text. */
function parseAddrBytes(s: string): IPAddr {
  for (const c of s) {
    if (c === '.') {
      const fields: number[] = [0, 0, 0, 0];
      parseIPv4Fields(s, 0, s.length, fields, 0);
      return new IPAddr(fields);
    }
    if (c === ':') return parseIPv6(s);
    if (c === '%') throw new AddrError(s, 'missing IPv6 address');
  }
  throw new AddrError(s, 'unable to parse IP');
}

/** ip.go parseIPAddr: netip.ParseAddr without zones and IPv4-mapped IPv6 addresses. */
export function parseIP(raw: string): IPAddr {
  let addr: IPAddr;
  try {
    addr = parseAddrBytes(bytesOf(raw));
  } catch (e) {
    throw new CelRuntimeError(
      `IP Address ${goQuote(raw)} parse error during conversion from string: ${(e as Error).message}`,
    );
  }
  if (addr.zone !== '') throw new CelRuntimeError(`IP address ${goQuote(raw)} with zone value is not allowed`);
  if (addr.is4In6) throw new CelRuntimeError(`IPv4-mapped IPv6 address ${goQuote(raw)} is not allowed`);
  return addr;
}

export function isIP(raw: string): boolean {
  try {
    parseIP(raw);
    return true;
  } catch {
    return false;
  }
}

// -------------------------------------------------------------------------------------------------
// CIDRs (net/netip Prefix)

export class CIDR {
  constructor(
    readonly addr: IPAddr,
    readonly bits: number,
  ) {}
  equals(o: CIDR): boolean {
    return this.bits === o.bits && this.addr.equals(o.addr);
  }
  masked(): CIDR {
    return new CIDR(maskedAddr(this.addr, this.bits), this.bits);
  }
  containsIP(ip: IPAddr): boolean {
    if (ip.zone !== '' || ip.bytes.length !== this.addr.bytes.length) return false;
    return maskedAddr(ip, this.bits).equals(maskedAddr(this.addr, this.bits));
  }
  /** cidr.go: Overlaps and a prefix no longer than the other's. */
  containsCIDR(o: CIDR): boolean {
    return this.overlaps(o) && this.bits <= o.bits;
  }
  private overlaps(o: CIDR): boolean {
    if (this.equals(o)) return true;
    if (this.addr.is4 !== o.addr.is4) return false;
    const min = Math.min(this.bits, o.bits);
    if (min === 0) return true;
    return maskedAddr(this.addr, min).equals(maskedAddr(o.addr, min));
  }
  toString(): string {
    return `${this.addr.toString()}/${this.bits}`;
  }
}

function maskedAddr(a: IPAddr, bits: number): IPAddr {
  return new IPAddr(
    a.bytes.map((b, i) => {
      const keep = Math.max(0, Math.min(8, bits - 8 * i));
      return b & ((0xff << (8 - keep)) & 0xff);
    }),
  );
}

/** cidr.go parseCIDR: netip.ParsePrefix without IPv4-mapped IPv6 addresses. */
export function parseCIDR(raw: string): CIDR {
  const fail = (msg: string) =>
    new CelRuntimeError(
      `network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(${goQuote(raw)}): ${msg}`,
    );
  const s = bytesOf(raw);
  const i = s.lastIndexOf('/');
  if (i < 0) throw fail("no '/'");
  let addr: IPAddr;
  try {
    addr = parseAddrBytes(s.slice(0, i));
  } catch (e) {
    throw fail((e as Error).message);
  }
  if (!addr.is4 && addr.zone !== '') throw fail('IPv6 zones cannot be present in a prefix');
  const bitsText = s.slice(i + 1);
  if ((bitsText.length > 1 && (bitsText[0]! < '1' || bitsText[0]! > '9')) || !/^[+-]?\d+$/.test(bitsText))
    throw fail(`bad bits after slash: ${q(bitsText)}`);
  // strconv.Atoi refuses what int64 does not hold.
  if (BigInt(bitsText) > (1n << 63n) - 1n) throw fail(`bad bits after slash: ${q(bitsText)}`);
  const bits = Number(bitsText);
  if (bits < 0 || bits > (addr.is4 ? 32 : 128)) throw fail('prefix length out of range');
  if (addr.is4In6)
    throw new CelRuntimeError(
      `network address parse error during conversion from string: IPv4-mapped IPv6 address ${goQuote(raw)} is not allowed`,
    );
  return new CIDR(addr, bits);
}

export function isCIDR(raw: string): boolean {
  try {
    parseCIDR(raw);
    return true;
  } catch {
    return false;
  }
}

// -------------------------------------------------------------------------------------------------
// URLs (net/url URL), kept as Go's bytes

export class URLValue {
  scheme = '';
  opaque = '';
  host = '';
  path = '';
  rawPath = '';
  rawQuery = '';
  fragment = '';
  equals(o: URLValue): boolean {
    return (
      this.scheme === o.scheme &&
      this.opaque === o.opaque &&
      this.host === o.host &&
      this.path === o.path &&
      this.rawPath === o.rawPath &&
      this.rawQuery === o.rawQuery &&
      this.fragment === o.fragment
    );
  }
  getScheme(): string {
    return textOf(this.scheme);
  }
  getHost(): string {
    return textOf(this.host);
  }
  getHostname(): string {
    return textOf(splitHostPort(this.host)[0]);
  }
  getPort(): string {
    return textOf(splitHostPort(this.host)[1]);
  }
  getEscapedPath(): string {
    if (this.rawPath !== '' && validEncoded(this.rawPath)) {
      try {
        if (unescape(this.rawPath, PATH) === this.path) return textOf(this.rawPath);
      } catch {
        // as Go: fall to the escaped path
      }
    }
    if (this.path === '*') return '*';
    return textOf(escape(this.path, PATH));
  }
  /** URL.Query(): ParseQuery's values, the pairs it cannot read left out. */
  getQuery(): Map<string, string[]> {
    const m = new Map<string, string[]>();
    let query = this.rawQuery;
    if (query.split('&').length > 10000) return m;
    while (query !== '') {
      const amp = query.indexOf('&');
      let key = amp < 0 ? query : query.slice(0, amp);
      query = amp < 0 ? '' : query.slice(amp + 1);
      if (key.includes(';') || key === '') continue;
      const eq = key.indexOf('=');
      let value = eq < 0 ? '' : key.slice(eq + 1);
      key = eq < 0 ? key : key.slice(0, eq);
      try {
        key = unescape(key, QUERY);
        value = unescape(value, QUERY);
      } catch {
        continue;
      }
      const k = textOf(key);
      m.set(k, [...(m.get(k) ?? []), textOf(value)]);
    }
    return m;
  }
}

// Go 1.26 src/net/url/encoding_table.go: the bytes each mode leaves as they are.
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const PATH = new Set(`${ALNUM}$&+,-./:;=@_~`);
const HOST = new Set(`${ALNUM}!"$&'()*+,-.:;<=>[]_~`);
const USER = new Set(`${ALNUM}$&+,-.;=_~`);
const ZONE = new Set(HOST);
const QUERY = new Set(`${ALNUM}-._~`);
const FRAGMENT = new Set(`${ALNUM}!$&()*+,-./:;=?@_~`);
type Mode = Set<string>;

const isHex = (c: string | undefined) => c !== undefined && /^[0-9A-Fa-f]$/.test(c);

class UrlError extends Error {}

function unescape(s: string, mode: Mode): string {
  let n = 0;
  let hasPlus = false;
  for (let i = 0; i < s.length;) {
    const c = s[i]!;
    if (c === '%') {
      n++;
      if (i + 2 >= s.length || !isHex(s[i + 1]) || !isHex(s[i + 2])) {
        throw new UrlError(`invalid URL escape ${q(s.slice(i, i + 3))}`);
      }
      if (mode === HOST && parseInt(s[i + 1]!, 16) < 8 && s.slice(i, i + 3) !== '%25')
        throw new UrlError(`invalid URL escape ${q(s.slice(i, i + 3))}`);
      if (mode === ZONE) {
        const v = String.fromCharCode(parseInt(s.slice(i + 1, i + 3), 16));
        if (s.slice(i, i + 3) !== '%25' && v !== ' ' && !HOST.has(v))
          throw new UrlError(`invalid URL escape ${q(s.slice(i, i + 3))}`);
      }
      i += 3;
    } else if (c === '+') {
      hasPlus = mode === QUERY;
      i++;
    } else {
      if ((mode === HOST || mode === ZONE) && c.charCodeAt(0) < 0x80 && !mode.has(c))
        throw new UrlError(`invalid character ${q(c)} in host name`);
      i++;
    }
  }
  if (n === 0 && !hasPlus) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '%') {
      out += String.fromCharCode(parseInt(s.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (c === '+') out += mode === QUERY ? ' ' : '+';
    else out += c;
  }
  return out;
}

function escape(s: string, mode: Mode): string {
  let out = '';
  for (const c of s) {
    if (mode.has(c)) out += c;
    else if (c === ' ' && mode === QUERY) out += '+';
    else out += `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function validEncoded(s: string): boolean {
  for (const c of s) {
    if ("!$&'()*+,;=:@[]%".includes(c)) continue;
    if (!PATH.has(c)) return false;
  }
  return true;
}

function validOptionalPort(port: string): boolean {
  if (port === '') return true;
  if (port[0] !== ':') return false;
  return /^[0-9]*$/.test(port.slice(1));
}

function splitHostPort(hostPort: string): [string, string] {
  let host = hostPort;
  let port = '';
  const colon = host.lastIndexOf(':');
  if (colon !== -1 && validOptionalPort(host.slice(colon))) {
    port = host.slice(colon + 1);
    host = host.slice(0, colon);
  }
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  return [host, port];
}

function getScheme(raw: string): [string, string] {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (/[A-Za-z]/.test(c)) continue;
    if (/[0-9+.-]/.test(c)) {
      if (i === 0) return ['', raw];
      continue;
    }
    if (c === ':') {
      if (i === 0) throw new UrlError('missing protocol scheme');
      return [raw.slice(0, i), raw.slice(i + 1)];
    }
    return ['', raw];
  }
  return ['', raw];
}

function validUserinfo(s: string): boolean {
  return /^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(s);
}

function parseHost(scheme: string, host: string): string {
  const open = host.lastIndexOf('[');
  // Go's security releases tightened what brackets may hold (CVE-2025-47912 in 1.24.8 and 1.25.2:
  // only an IPv6 address, not IPv4; CVE-2026-25679: only at the host's start), so API servers
  // built with older releases accept what newer ones refuse: not judged here.
  const differs = () =>
    new Error("a URL host's brackets are read differently by API servers built with different Go releases");
  if (open > 0) throw differs();
  if (open === 0) {
    const close = host.lastIndexOf(']');
    if (close < 0) throw new UrlError("missing ']' in host");
    const colonPort = host.slice(close + 1);
    if (!validOptionalPort(colonPort)) throw new UrlError(`invalid port ${q(colonPort)} after host`);
    const port = unescape(colonPort, HOST);
    const hostname = host.slice(1, close);
    const zoneAt = hostname.indexOf('%25');
    const unescaped =
      zoneAt >= 0
        ? unescape(hostname.slice(0, zoneAt), HOST) + unescape(hostname.slice(zoneAt), ZONE)
        : unescape(hostname, HOST);
    let addr: IPAddr;
    try {
      addr = parseAddrBytes(unescaped);
    } catch {
      throw differs();
    }
    if (addr.is4) throw differs();
    return `[${unescaped}]${port}`;
  }
  const first = host.indexOf(':');
  if (first !== -1) {
    // Several colons: Go 1.26 takes the first for http and https (and refuses what follows as a
    // port) unless GODEBUG urlstrictcolons=0, which an API server built from a module of an older go
    // version gets (a 1.34 server takes the last one, as for other schemes). Which one a cluster's
    // server takes depends on its build: not judged here.
    const colonPort = host.slice(host.lastIndexOf(':'));
    const strict = first !== host.lastIndexOf(':') && (scheme === 'http' || scheme === 'https');
    if (strict && validOptionalPort(colonPort))
      throw new Error("an http URL's host with several colons is read differently by different API server builds");
    if (!validOptionalPort(colonPort)) throw new UrlError(`invalid port ${q(colonPort)} after host`);
  }
  return unescape(host, HOST);
}

function parse(raw: string, viaRequest: boolean): URLValue {
  if (/[\x00-\x1f\x7f]/.test(raw)) throw new UrlError('net/url: invalid control character in URL');
  if (raw === '' && viaRequest) throw new UrlError('empty url');
  const url = new URLValue();
  if (raw === '*') {
    url.path = '*';
    return url;
  }
  let rest: string;
  [url.scheme, rest] = getScheme(raw);
  url.scheme = url.scheme.toLowerCase();
  if (rest.endsWith('?') && rest.split('?').length === 2) {
    rest = rest.slice(0, -1);
  } else {
    const at = rest.indexOf('?');
    if (at >= 0) {
      url.rawQuery = rest.slice(at + 1);
      rest = rest.slice(0, at);
    }
  }
  if (!rest.startsWith('/')) {
    if (url.scheme !== '') {
      url.opaque = rest;
      return url;
    }
    if (viaRequest) throw new UrlError('invalid URI for request');
    const segment = rest.split('/')[0]!;
    if (segment.includes(':')) throw new UrlError('first path segment in URL cannot contain colon');
  }
  if ((url.scheme !== '' || (!viaRequest && !rest.startsWith('///'))) && rest.startsWith('//')) {
    let authority = rest.slice(2);
    rest = '';
    const slash = authority.indexOf('/');
    if (slash >= 0) {
      rest = authority.slice(slash);
      authority = authority.slice(0, slash);
    }
    const at = authority.lastIndexOf('@');
    url.host = parseHost(url.scheme, at < 0 ? authority : authority.slice(at + 1));
    if (at >= 0) {
      const userinfo = authority.slice(0, at);
      if (!validUserinfo(userinfo)) throw new UrlError('net/url: invalid userinfo');
      for (const part of userinfo.includes(':') ? userinfo.split(/:(.*)/s, 2) : [userinfo]) unescape(part, USER);
    }
  }
  url.path = unescape(rest, PATH);
  url.rawPath = escape(url.path, PATH) === rest ? '' : rest;
  return url;
}

/** url(): ParseRequestURI to check, then Parse (which takes the fragment off). */
export function parseURL(text: string): URLValue {
  const raw = bytesOf(text);
  try {
    parse(raw, true);
  } catch (e) {
    if (e instanceof UrlError)
      throw new CelRuntimeError(`URL parse error during conversion from string: parse ${q(raw)}: ${e.message}`);
    throw e;
  }
  const hash = raw.indexOf('#');
  const u = hash < 0 ? raw : raw.slice(0, hash);
  const frag = hash < 0 ? '' : raw.slice(hash + 1);
  try {
    const url = parse(u, false);
    if (frag !== '') url.fragment = unescape(frag, FRAGMENT);
    return url;
  } catch (e) {
    if (e instanceof UrlError)
      throw new CelRuntimeError(
        `URL parse error during conversion from string: parse ${q(e.message.startsWith('invalid URL escape') && frag !== '' ? raw : u)}: ${e.message}`,
      );
    throw e;
  }
}

/** isURL(): ParseRequestURI's answer. */
export function isURL(text: string): boolean {
  try {
    parse(bytesOf(text), true);
    return true;
  } catch (e) {
    if (e instanceof UrlError) return false;
    throw e;
  }
}

/** The error of ParseRequestURI, in Go's words (`parse "x": invalid URI for request`); undefined when it parses. */
export function requestURIError(text: string): string | undefined {
  const raw = bytesOf(text);
  try {
    parse(raw, true);
    return undefined;
  } catch (e) {
    if (e instanceof UrlError) return `parse ${q(raw)}: ${e.message}`;
    throw e;
  }
}
