// Secret values never enter the cache, a hover or a log. They are removed the moment an object
// arrives (GET, LIST, WATCH, dry-run answers). Field *names* stay: managedFields only holds names
// (`f:data: {f:password: {}}`), and ownership of a key is what the editor shows.
import { isJsonObject, type JsonObject } from '../core/json';

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const SECRET_VALUE_FIELDS = ['data', 'stringData'];

/** Whether a response for this resource carries Secrets (list items have no kind of their own). */
export function isSecretResource(group: string, resource: string): boolean {
  return group === '' && resource === 'secrets';
}

/** Whether a request path is about Secrets: their collection, in a namespace or all, or one of them. */
export function isSecretPath(path: string): boolean {
  return /^\/api\/v1\/(?:namespaces\/[^/]+\/)?secrets(?:[/?]|$)/.test(path);
}

/**
 * The last-applied annotation as a member of an object in JSON text: the key (as the API server
 * writes it), then its value, a string literal. Nothing inside a string can match: a quote there is
 * escaped, and after a string's closing quote JSON allows no letter.
 */
const LAST_APPLIED_MEMBER = /([{,]\s*"kubectl\.kubernetes\.io\/last-applied-configuration"\s*:\s*)"((?:[^"\\]|\\.)*)"/g;

/**
 * An answer about Secrets, as JSON text, with the values in each last-applied annotation removed
 * before anything parses it. A metadata-only read still carries the annotations, and a client-side
 * `kubectl apply` keeps a whole copy of the Secret in this one; no read of the API can leave it
 * out. Only the annotation's own text is decoded, to keep what it says of the fields' names.
 */
export function withoutLastAppliedValues(json: string): string {
  if (!json.includes(LAST_APPLIED)) return json;
  return json.replace(LAST_APPLIED_MEMBER, (_member, head: string, literal: string) => {
    let text: unknown;
    try {
      text = JSON.parse(`"${literal}"`);
    } catch {
      // Not a string literal after all: nothing of it is kept.
    }
    return `${head}${JSON.stringify(typeof text === 'string' ? redactLastApplied(text) : '{}')}`;
  });
}

/**
 * A copy of a Secret without its values: `data`/`stringData` are dropped, and so are they inside
 * the last-applied annotation, where `kubectl apply` keeps a second copy of them.
 */
export function redactSecret(secret: JsonObject): JsonObject {
  const copy: JsonObject = { ...secret };
  for (const field of SECRET_VALUE_FIELDS) delete copy[field];
  const metadata = copy.metadata;
  if (
    isJsonObject(metadata) &&
    isJsonObject(metadata.annotations) &&
    typeof metadata.annotations[LAST_APPLIED] === 'string'
  ) {
    copy.metadata = {
      ...metadata,
      annotations: { ...metadata.annotations, [LAST_APPLIED]: redactLastApplied(metadata.annotations[LAST_APPLIED]) },
    };
  }
  return copy;
}

function redactLastApplied(text: string): string {
  try {
    const parsed: unknown = JSON.parse(text);
    if (isJsonObject(parsed)) {
      for (const field of SECRET_VALUE_FIELDS) delete parsed[field];
      return JSON.stringify(parsed);
    }
  } catch {
    // Not JSON: nothing can be kept safely.
  }
  return '{}';
}

// ---------------------------------------------------------------------------------------------------
// Credentials in messages.
//
// Messages that reach a user (the status bar, hovers, the output channel, the command line's stderr,
// a CI log) quote what others wrote: a server's error body, a proxy's error page, an exec credential
// plugin's stderr, a kubeconfig parse error quoting the line it choked on. Any of them can carry a
// credential. Every such message passes through redactText before it leaves the cluster layer, and
// the editor and the command line pass what they print through it once more.

const REDACTED = '[redacted]';
/** Every credential this process sent or read from a kubeconfig: removed wherever it appears. */
const knownSecrets = new Set<string>();
/** Short values (a password like "admin") would redact ordinary words; patterns still catch them in context. */
const MIN_KNOWN_SECRET = 8;

/** Remember credentials (a token, a password, a client key) so that no message ever repeats them. */
export function rememberSecrets(...values: (string | Buffer | null | undefined)[]): void {
  for (const value of values) {
    if (value === null || value === undefined) continue;
    const text = Buffer.isBuffer(value) ? value.toString('utf8') : value;
    const trimmed = text.trim();
    if (trimmed.length < MIN_KNOWN_SECRET) continue;
    knownSecrets.add(trimmed);
    // A Bearer header's token, a key's base64 form (kubeconfig `client-key-data`).
    const bearer = /^(?:Bearer|Basic)\s+(\S+)$/i.exec(trimmed);
    if (bearer && bearer[1]!.length >= MIN_KNOWN_SECRET) knownSecrets.add(bearer[1]!);
    if (Buffer.isBuffer(value)) knownSecrets.add(value.toString('base64'));
  }
}

/**
 * `scheme://user:password@` in a URL: the authority up to its last `@` (a password may hold an
 * unescaped one; WHATWG's URL parser splits at the last), never past the first `/`, `?` or `#`.
 */
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#\\"'<>@]*(?:@[^\s/?#\\"'<>@]*)*@/gi;

/**
 * A URL as the product shows or saves it: without its userinfo. A kubeconfig's server (or proxy)
 * may carry a password (`https://alice:secret@host`) or a token as the user name; requests still
 * send it, as kubectl does, but no message, status, report or snapshot repeats it. Every server URL
 * that leaves the cluster layer passes here, and redactText strips userinfo from any text.
 */
export function withoutUserinfo(url: string): string {
  return url.replace(USERINFO, '$1');
}

// Names whose value is a credential, in `name=value`, `name: value`, `"name": "value"` forms.
const SENSITIVE_NAME = String.raw`(?:[A-Za-z0-9_-]*(?:token|secret|password|passwd|pwd|credential|api[_-]?key|private[_-]?key|client[_-]?key(?:[_-]data)?|access[_-]?key|cookie|session)[A-Za-z0-9_-]*|authorization|auth)`;
const SCHEME = String.raw`(?:(?:Bearer|Basic|Negotiate|Token)\s+)?`;
const PATTERNS: [RegExp, string | ((...groups: string[]) => string)][] = [
  // A URL's userinfo (a password, or a token as the user name): the URL stays, the userinfo goes.
  [USERINFO, '$1'],
  // PEM blocks of private keys, whole.
  [/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g, REDACTED],
  // JSON: "token": "value"
  [new RegExp(String.raw`("${SENSITIVE_NAME}"\s*:\s*)"(?:[^"\\]|\\.)*"`, 'gi'), (_m, head) => `${head}"${REDACTED}"`],
  // name=value, name: value, Authorization: Bearer value (up to whitespace, a quote, a comma, ; or &).
  // Not a file name that happens to hold such a word (`/home/me/token-config: it is a directory`).
  [
    new RegExp(
      String.raw`((?<![\\/\w-])${SENSITIVE_NAME}\s*[=:]\s*)(?!\[redacted\])${SCHEME}["']?[^\s"',;&]+["']?`,
      'gi',
    ),
    (_m, head) => `${head}${REDACTED}`,
  ],
  // Authorization schemes wherever they stand.
  [/\b(Bearer|Basic|Negotiate)\s+(?!\[redacted\])[A-Za-z0-9._~+/=-]+/gi, (_m, scheme) => `${scheme} ${REDACTED}`],
  // JSON Web Tokens (service-account tokens, OIDC id-tokens).
  [/\beyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]*/g, REDACTED],
  // Long hexadecimal strings (static tokens, API keys); UIDs have dashes every few characters.
  [/(?<![A-Za-z0-9])[0-9a-fA-F]{32,}(?![A-Za-z0-9])/g, REDACTED],
  // Long opaque strings (base64 tokens), told from names and paths by how often the kind of
  // character changes (see looksRandom).
  [
    /(?<![A-Za-z0-9+/=_.-])[A-Za-z0-9+=_-][A-Za-z0-9+/=_-]{31,}(?![A-Za-z0-9+/=_.-])/g,
    (m) => (looksRandom(m) ? REDACTED : m),
  ],
];

/**
 * Random base64 changes between upper case, lower case, digits and symbols at about two characters
 * in three; words, Kubernetes names (lower case) and `Config-Production-2024` much less often.
 */
function looksRandom(text: string): boolean {
  const kind = (c: string) => (/[a-z]/.test(c) ? 0 : /[A-Z]/.test(c) ? 1 : /[0-9]/.test(c) ? 2 : 3);
  let changes = 0;
  for (let i = 1; i < text.length; i++) if (kind(text[i]!) !== kind(text[i - 1]!)) changes++;
  return /[a-z]/.test(text) && /[A-Z]/.test(text) && /[0-9]/.test(text) && changes >= 0.45 * text.length;
}

/** The text with every credential it may carry replaced by `[redacted]`. */
export function redactText(text: string): string {
  let out = text;
  // Longest first, so that a token is not half-replaced by a known prefix of it.
  for (const secret of [...knownSecrets].sort((a, b) => b.length - a.length)) {
    if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  for (const [pattern, replacement] of PATTERNS) {
    out =
      typeof replacement === 'string'
        ? out.replace(pattern, replacement)
        : out.replace(pattern, replacement as (match: string, ...groups: string[]) => string);
  }
  return out;
}

/** A problem whose message (and request line) can be shown. */
export function redactProblem<T extends { message: string; request?: string }>(problem: T): T {
  const message = redactText(problem.message);
  const request = problem.request === undefined ? undefined : redactText(problem.request);
  if (message === problem.message && request === problem.request) return problem;
  return { ...problem, message, ...(request === undefined ? {} : { request }) };
}
