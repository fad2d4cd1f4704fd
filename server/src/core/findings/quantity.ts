// Kubernetes resource quantities (`500m`, `1Gi`, `2`), read exactly and written as the API server
// writes them in its messages: k8s.io/apimachinery pkg/api/resource (quantity.go ParseQuantity and
// CanonicalizeBytes, amount.go AsCanonicalBytes). A value is held as an exact decimal (a BigInt
// scaled by a power of ten), so comparing a request with a limit never rounds. What this reader
// does not take exactly as the server does (a value finer than a nano, a sign, an exponent form
// that is not a multiple of three) is declined: the caller then says nothing.

/** A quantity: `digits × 10^exponent`, and the format its suffix chose. */
export interface Quantity {
  readonly digits: bigint;
  readonly exponent: number;
  readonly format: 'DecimalSI' | 'BinarySI' | 'DecimalExponent';
}

const decimalSuffixes: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const binarySuffixes: Record<string, number> = { Ki: 1, Mi: 2, Gi: 3, Ti: 4, Pi: 5, Ei: 6 };

/** Reads a quantity as written in a manifest (a string, or a YAML number); undefined where it is not one this reader takes exactly. */
export function parseQuantity(value: unknown): Quantity | undefined {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) return undefined;
    text = String(value);
    if (/e/i.test(text)) return undefined;
  } else if (typeof value === 'string') text = value.trim();
  else return undefined;
  const m = /^([0-9]*)(?:\.([0-9]*))?([a-zA-Z]*|[eE][-+]?[0-9]+)$/.exec(text);
  if (!m || (m[1] === '' && (m[2] ?? '') === '')) return undefined;
  const whole = m[1] || '0';
  const fraction = m[2] ?? '';
  const suffix = m[3]!;
  const digits = BigInt(whole + fraction);
  if (suffix in binarySuffixes) {
    const scaled = digits * 1024n ** BigInt(binarySuffixes[suffix]!);
    return exact(scaled, -fraction.length, 'BinarySI');
  }
  if (suffix in decimalSuffixes) return exact(digits, decimalSuffixes[suffix]! - fraction.length, 'DecimalSI');
  const e = /^[eE]([-+]?[0-9]+)$/.exec(suffix);
  if (e) return exact(digits, Number(e[1]) - fraction.length, 'DecimalExponent');
  return undefined;
}

/** Declines what the server would round (finer than a nano). */
function exact(digits: bigint, exponent: number, format: Quantity['format']): Quantity | undefined {
  let d = digits;
  let x = exponent;
  while (d !== 0n && d % 10n === 0n) {
    d /= 10n;
    x++;
  }
  if (d !== 0n && x < -9) return undefined;
  return { digits: d, exponent: d === 0n ? 0 : x, format };
}

/** -1, 0 or 1 as `a` is less than, equal to or greater than `b` (Quantity.Cmp). */
export function compareQuantities(a: Quantity, b: Quantity): number {
  const x = Math.min(a.exponent, b.exponent);
  const av = a.digits * 10n ** BigInt(a.exponent - x);
  const bv = b.digits * 10n ** BigInt(b.exponent - x);
  return av < bv ? -1 : av > bv ? 1 : 0;
}

/** Quantity.String(): the canonical form the server prints (CanonicalizeBytes). */
export function canonicalQuantity(q: Quantity): string | undefined {
  if (q.digits === 0n) return '0';
  let format = q.format;
  if (format === 'BinarySI') {
    const integral = q.exponent >= 0;
    const value = integral ? q.digits * 10n ** BigInt(q.exponent) : undefined;
    if (value === undefined || value < 1024n) format = 'DecimalSI';
    else {
      let n = value;
      let k = 0;
      while (n % 1024n === 0n && k < 6) {
        n /= 1024n;
        k++;
      }
      if (n % 1024n === 0n) return undefined;
      return `${n}${k === 0 ? '' : Object.keys(binarySuffixes)[k - 1]}`;
    }
  }
  // AsCanonicalBytes: the exponent brought down to a multiple of three.
  let digits = q.digits;
  let exponent = q.exponent;
  while (((exponent % 3) + 3) % 3 !== 0) {
    digits *= 10n;
    exponent--;
  }
  if (format === 'DecimalExponent') return exponent === 0 ? `${digits}` : `${digits}e${exponent}`;
  const suffix = Object.entries(decimalSuffixes).find(([, e]) => e === exponent)?.[0];
  return suffix === undefined ? undefined : `${digits}${suffix}`;
}
