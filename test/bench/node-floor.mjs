// The least a Node.js process can do before it can judge one object: start, trust the cluster's
// certificate authority (Node parses its own root store the first time a context names a CA), and
// send one GET of the object over TLS, then read the answer. No product code: the bench times it
// beside `kubectl apply --server-side --dry-run=server` to show how fast any `check` written for
// Node could be on this machine. The connection comes in the environment (KCH_FLOOR_SERVER,
// KCH_FLOOR_CA, KCH_FLOOR_TOKEN), the object's path as the one argument.
import * as https from 'node:https';
import { URL } from 'node:url';

const url = new URL(process.argv[2], process.env.KCH_FLOOR_SERVER);
const req = https.get(url, {
  ca: process.env.KCH_FLOOR_CA,
  headers: { authorization: `Bearer ${process.env.KCH_FLOOR_TOKEN}`, accept: 'application/json' },
});
req.on('response', (res) => {
  let body = '';
  res.setEncoding('utf8');
  res.on('data', (d) => (body += d));
  res.on('end', () => {
    const object = JSON.parse(body);
    process.exitCode = res.statusCode === 200 && object.metadata ? 0 : 1;
  });
});
req.on('error', (e) => {
  process.stderr.write(`${e.message}\n`);
  process.exitCode = 1;
});
