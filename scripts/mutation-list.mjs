// The faults `npm run test:mutations` plants (scripts/mutations.mjs runs them). Each is one exact
// text replacement in a file of server/src/, and its text must occur there exactly once:
// test/unit/mutation-list.test.ts checks that in the ordinary test command, so a change to the
// code that moves a planted text fails at once, not at the next mutation run.

const core = (f) => `server/src/core/${f}`;
const cluster = (f) => `server/src/cluster/${f}`;

// The unit tests that judge the engine: captured fixtures and pure tests, a few seconds.
const ENGINE = [
  'test/unit/core/ssa/predict.test.ts',
  'test/unit/core/ssa/to-field-set.test.ts',
  'test/unit/core/ssa/field-set.test.ts',
  'test/unit/core/ssa/schema.test.ts',
  'test/unit/core/ssa/path.test.ts',
];

/**
 * Each mutation: a plausible fault, as one exact text replacement (the text must occur exactly
 * once), and the tests that must fail. `rule` says which behaviour of the server it breaks.
 */
export const mutations = [
  // Rules the real server taught us (test/fixtures/engine/predict-rules.yaml pins each).
  {
    id: 'forgiveness-any-apiversion',
    rule: "forgiveness needs a last-applied configuration at the request's apiVersion",
    file: core('ssa/predict.ts'),
    from: 'if (!isJsonObject(lastApplied) || lastApplied.apiVersion !== apiVersion) return undefined;',
    to: 'if (!isJsonObject(lastApplied)) return undefined;',
    tests: ENGINE,
  },
  {
    id: 'forgiveness-any-manager',
    rule: 'only the manager called kubectl is forgiven',
    file: core('ssa/predict.ts'),
    from: "if (conflicts.length > 0 && input.fieldManager === 'kubectl') {",
    to: 'if (conflicts.length > 0) {',
    tests: ENGINE,
  },
  {
    id: 'forgiveness-off',
    rule: 'conflicts the last client-side apply set are forgiven',
    file: core('ssa/predict.ts'),
    from: '    if (allowed) {\n',
    to: '    if (allowed && false) {\n',
    tests: ENGINE,
  },
  {
    id: 'managedfields-null-refused',
    rule: 'managedFields: null in an apply is allowed',
    file: core('ssa/predict.ts'),
    from: 'meta.managedFields !== undefined && meta.managedFields !== null) {',
    to: 'meta.managedFields !== undefined) {',
    tests: ENGINE,
  },
  {
    id: 'managedfields-in-manifest-off',
    rule: 'an apply carrying managedFields is refused (400)',
    file: core('ssa/predict.ts'),
    from: "if (mode === 'serverSide' && meta.managedFields !== undefined",
    to: 'if (false && meta.managedFields !== undefined',
    tests: ENGINE,
  },
  {
    id: 'type-problems-off',
    rule: 'a value the schema cannot type is refused (500)',
    file: core('ssa/to-field-set.ts'),
    from: '  visit(root, value);\n  return problems;\n}',
    to: '  visit(root, value);\n  return [];\n}',
    tests: ENGINE,
  },
  {
    id: 'type-problem-words',
    rule: 'the refusal names the value as Go prints it (a string as %#v)',
    file: core('ssa/to-field-set.ts'),
    from: "const got = atom.scalar === 'string' ? goValueSharpV(v) :",
    to: "const got = atom.scalar === 'string' ? goValueV(v) :",
    tests: ENGINE,
  },
  // kubectl clears a create's resourceVersion before it sends it (test/differential replays what it
  // sends), so a create is never a precondition nor the storage's 500.
  {
    id: 'create-rv-is-lock',
    rule: "a create's resourceVersion is no precondition: an existing object is AlreadyExists",
    file: core('ssa/predict.ts'),
    from: "  if (mode === 'create') {\n",
    to: "  if (mode === 'create' && meta.resourceVersion === undefined) {\n",
    tests: ENGINE,
  },
  {
    id: 'clientside-existing-is-create',
    rule: 'a client-side apply of an existing object is an update (the lock), not a create',
    file: core('ssa/predict.ts'),
    from: "  if (mode === 'create') {\n",
    to: "  if (mode === 'create' || mode === 'clientSide') {\n",
    tests: ENGINE,
  },
  {
    id: 'uid-incarnation-409',
    rule: 'a uid of another incarnation is 422 Invalid, not a 409',
    file: core('ssa/predict.ts'),
    from: "      code: 422,\n      reason: 'Invalid',",
    to: "      code: 409,\n      reason: 'Conflict',",
    tests: ENGINE,
  },
  {
    id: 'uid-incarnation-off',
    rule: 'a uid of another incarnation is refused',
    file: core('ssa/predict.ts'),
    from: "if (uid !== undefined && uid !== '' && uid !== liveUid) {",
    to: 'if (false) {',
    tests: ENGINE,
  },
  {
    id: 'uid-on-missing-off',
    rule: 'an apply naming a uid no object has is a 409 uid mismatch',
    file: core('ssa/predict.ts'),
    from: '      if (uid)\n        statuses.push({',
    to: '      if (false)\n        statuses.push({',
    tests: ENGINE,
  },
  {
    id: 'rv-empty-is-stale',
    rule: 'resourceVersion "" is no precondition',
    file: core('ssa/predict.ts'),
    from: 'if (rv !== undefined && !/^0*$/.test(rv) && rv !== liveRv) {',
    to: 'if (rv !== undefined && rv !== liveRv) {',
    tests: ENGINE,
  },
  {
    id: 'rv-zero-is-stale',
    rule: 'resourceVersion "0" is no precondition (an unconditional update)',
    file: core('ssa/predict.ts'),
    from: 'if (rv !== undefined && !/^0*$/.test(rv) && rv !== liveRv) {',
    to: "if (rv !== undefined && rv !== '' && rv !== liveRv) {",
    tests: ENGINE,
  },
  {
    id: 'create-rv-refused',
    rule: "a create with a resourceVersion is accepted: the storage's 500 is never heard",
    file: core('ssa/predict.ts'),
    from: '    if (live && !generated) {\n',
    to: "    if (typeof meta.resourceVersion === 'string' && meta.resourceVersion !== '') statuses.push({ code: 500, reason: '', kind: 'refused', message: 'resourceVersion should not be set on objects to be created' });\n    else if (live && !generated) {\n",
    tests: ENGINE,
  },
  {
    id: 'generate-name-collides',
    rule: 'a create with generateName never collides',
    file: core('ssa/predict.ts'),
    from: "const generated = typeof meta.generateName === 'string' && meta.generateName !== '' && name === '';",
    to: 'const generated = false;',
    tests: ENGINE,
  },
  // The apply itself (structured-merge-diff).
  {
    id: 'conflict-rule-modified-only',
    rule: 'conflicts are owned ∩ (modified ∪ added)',
    file: core('ssa/predict.ts'),
    from: 'const changed = unionSets(comparison.modified, comparison.added);',
    to: 'const changed = comparison.modified;',
    tests: ENGINE,
  },
  {
    id: 'prune-off',
    rule: 'what the applier dropped is removed',
    file: core('ssa/predict.ts'),
    from: 'if (lastSet && !isEmptySet(lastSet)) merged = prune(',
    to: 'if (false) merged = prune(',
    tests: ENGINE,
  },
  {
    id: 'before-first-apply-off',
    rule: 'an object without managedFields is owned by before-first-apply',
    file: core('ssa/predict.ts'),
    from: '  if (managers.size === 0) {',
    to: '  if (false) {',
    tests: ENGINE,
  },
  {
    id: 'status-not-reset',
    rule: 'status is reset by the main resource and never conflicts there',
    file: core('ssa/predict.ts'),
    from: "return atom?.map && 'status' in atom.map.fields ? [[{ kind: 'field', name: 'status' }]] : [];",
    to: 'return [];',
    tests: ENGINE,
  },
  {
    id: 'compare-loose-equality',
    rule: 'a number never equals a string (maxSurge 1 vs "1%", quantities as written)',
    file: core('ssa/merge.ts'),
    from: '      else if (!jsonEqual(r, l)) modified.own();',
    to: '      else if (!jsonEqual(r, l) && String(r) !== String(l) && parseFloat(String(r)) !== parseFloat(String(l))) modified.own();',
    tests: ENGINE,
  },
  {
    id: 'list-key-defaults-off',
    rule: 'a missing list key takes its schema default (protocol TCP)',
    file: core('ssa/to-field-set.ts'),
    from: '        if (def === undefined || def === null) continue;',
    to: '        continue;',
    tests: ENGINE,
  },
  {
    id: 'list-keys-first-only',
    rule: 'list items are keyed by all their key fields',
    file: core('ssa/to-field-set.ts'),
    from: '    for (const name of list.keys) {',
    to: '    for (const name of list.keys.slice(0, 1)) {',
    tests: ENGINE,
  },
  {
    id: 'atomic-map-granular',
    rule: 'an atomic map (a selector) conflicts as a whole',
    file: core('ssa/merge.ts'),
    from: "        if (a.map.elementRelationship === 'atomic' || (noEntries(lm) && noEntries(rm))) return leafFn();",
    to: '        if (noEntries(lm) && noEntries(rm)) return leafFn();',
    tests: ENGINE,
  },
  {
    id: 'atomic-list-granular',
    rule: 'an atomic list (args) conflicts as a whole',
    file: core('ssa/merge.ts'),
    from: "        if (a.list.elementRelationship === 'atomic' || emptyPromoteToLeaf) return leafFn();",
    to: '        if (emptyPromoteToLeaf) return leafFn();',
    tests: ENGINE,
  },
  {
    id: 'message-without-subresource',
    rule: 'the cause names the subresource a manager wrote through',
    file: core('ssa/messages.ts'),
    from: '  if (m.subresource) s += ` with subresource ${goQuote(m.subresource)}`;',
    to: '',
    tests: ENGINE,
  },
  {
    id: 'message-managers-unsorted',
    rule: 'the conflict message lists managers sorted as the server does',
    file: core('ssa/messages.ts'),
    from: '  for (const id of [...groups.keys()].sort(compareGoStrings)) {',
    to: '  for (const id of [...groups.keys()]) {',
    tests: ENGINE,
  },
  {
    id: 'update-identity-without-version',
    rule: 'an Update manager is told apart by the apiVersion it wrote at',
    file: core('ssa/managed-fields.ts'),
    from: "      ...(operation === 'Update' ? { apiVersion: raw.apiVersion } : {}),\n",
    to: '',
    tests: ENGINE,
  },
  // The cluster layer, against the real server.
  {
    id: 'writes-without-dry-run',
    rule: 'every write the product sends carries dryRun=All',
    file: cluster('http.ts'),
    from: "    if (request.method !== 'GET') url.searchParams.set('dryRun', 'All');\n",
    to: '',
    tests: ['test/unit/cluster/verifier.test.ts'],
  },
  {
    id: 'verifier-force',
    rule: 'the dry-run apply is sent with force=false',
    file: cluster('verifier.ts'),
    from: "          fieldManager: options.fieldManager,\n          force: 'false',",
    to: "          fieldManager: options.fieldManager,\n          force: 'true',",
    tests: ['test/unit/cluster/verifier.test.ts'],
  },
  {
    id: 'verifier-already-exists',
    rule: 'AlreadyExists is told apart by its reason',
    file: cluster('verifier.ts'),
    from: "  if (reason === 'AlreadyExists') return 'alreadyExists';",
    to: '',
    tests: ['test/unit/cluster/verifier.test.ts'],
  },
  // A disposed connection is silenced twice (its watches stop, its transport refuses); the fault
  // is a dispose that does neither.
  {
    id: 'dispose-keeps-watching',
    rule: 'a disposed connection sends nothing more',
    file: cluster('connection.ts'),
    from: '      liveObjects.dispose();\n      namespaces.dispose();\n      secretFields.dispose();\n      openApi.dispose();\n      transport.dispose();',
    to: '      namespaces.dispose();\n      secretFields.dispose();\n      openApi.dispose();',
    tests: ['test/unit/cluster/live-objects-watch.test.ts'],
  },
  {
    id: 'secret-read-in-full',
    rule: 'Secrets are read as metadata only',
    file: cluster('live-objects.ts'),
    from: 'return readsMetadataOnly(this.resource) ? { accept: metadataOnly[form] } : {};',
    to: 'return {};',
    tests: ['test/security/secret-values.test.ts'],
  },
  // The transport takes the values out of last-applied and reads ask for metadata only; this fault
  // shows where an answer that is the whole object anyway (a proxy on the way) still holds them.
  {
    id: 'secret-last-applied-kept',
    rule: "a Secret's values never enter the cache, even from an answer that is the whole object",
    file: cluster('live-objects.ts'),
    from: 'return redactSecret({ ...object, apiVersion: this.resource.apiVersion, kind: this.resource.kind });',
    to: 'return { ...object, apiVersion: this.resource.apiVersion, kind: this.resource.kind };',
    tests: ['test/unit/cluster/live-objects.test.ts'],
  },
  // The disk cache of discovery and OpenAPI (api-cache.ts): a kept file is believed only for the
  // server it was written for, and discovery only after the server's 304.
  {
    id: 'api-cache-any-server',
    rule: "a kept file of another server's is not believed",
    file: cluster('api-cache.ts'),
    from: 'file.format === FORMAT && file.server === this.key ? file : undefined',
    to: 'file.format === FORMAT ? file : undefined',
    tests: ['test/unit/cluster/api-cache.test.ts'],
  },
  {
    id: 'api-cache-discovery-unasked',
    rule: 'kept discovery is used only once the server answers 304 to its ETag',
    file: cluster('discovery.ts'),
    from: '      ...(kept ? { ifNoneMatch: kept.etag } : {}),\n',
    to: '',
    tests: ['test/cli/api-cache.test.ts'],
  }, // A GitOps controller's own sync (core/gitops/controller-apply.ts), held to the controllers' apply
  // code by the captured fixtures of test/fixtures/gitops/controller-apply/ (and live by
  // test/differential/gitops.test.ts).
  {
    id: 'flux-cleanup-subresource',
    rule: "Flux's cleanup never hands over a subresource's entry (the HPA's /scale write keeps replicas)",
    file: core('gitops/controller-apply.ts'),
    from: '    !o.identity.subresource &&\n    rules.some(',
    to: '    rules.some(',
    tests: ['test/unit/core/gitops/controller-apply.test.ts'],
  },
  {
    id: 'flux-cleanup-exact-name',
    rule: "Flux's cleanup matches managers by name prefix (kubectl-edit is kubectl's)",
    file: core('gitops/controller-apply.ts'),
    from: 'o.identity.manager.startsWith(r.prefix)',
    to: 'o.identity.manager === r.prefix',
    tests: ['test/unit/core/gitops/controller-apply.test.ts'],
  },
  {
    id: 'flux-merge-cleans-up',
    rule: 'ssa: Merge leaves the cleanup out',
    file: core('gitops/controller-apply.ts'),
    from: "if (ssa !== 'Merge' && liveSsa !== 'Merge') {",
    to: 'if (true) {',
    tests: ['test/unit/core/gitops/controller-apply.test.ts'],
  },
  {
    id: 'argo-respect-ignored',
    rule: 'RespectIgnoreDifferences puts the live values of ignored paths in the target',
    file: core('gitops/controller-apply.ts'),
    from: 'live && request.respectIgnoreDifferences && rules.length > 0',
    to: 'live && false && rules.length > 0',
    tests: ['test/unit/core/gitops/controller-apply.test.ts'],
  },
  {
    id: 'argo-no-csa-migration',
    rule: "kubectl's server-side apply migrates the client-side managers' fields first",
    file: core('gitops/controller-apply.ts'),
    from: 'if (live && request.clientSideApplyMigration !== false) {',
    to: 'if (false) {',
    tests: ['test/unit/core/gitops/controller-apply.test.ts'],
  },
  {
    id: 'pruned-replicas-not-defaulted',
    rule: 'the server defaults a pruned replicas to 1',
    file: core('gitops/controller-apply.ts'),
    from: '  spec.replicas ??= 1;\n',
    to: '',
    tests: ['test/unit/core/gitops/controller-apply.test.ts'],
  },
];
