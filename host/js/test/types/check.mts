// Compiled by run.sh with `tsc --noEmit --strict` against the installed package: the
// declarations must describe every export a user reaches for, with types that catch
// misuse (the @ts-expect-error lines must each be an error).
import {
  BucketError, FolderBucket, MemoryBucket, RenderStore, RenderStoreError, canonical, compareKeys,
  diffRenders, gc, listHistoryPage, record, renderRef, replay, showObjects, summarizeHistory,
  yamlObjects, yamlRenderRef, type Bucket, type GcPlan, type HistoryEntry, type RenderDiff,
  blameObject, indexObjects, outcomeJson, releaseImages, type Wit,
} from '@convoy/render-store';
import * as core from '@convoy/render-store/core';

const objects: string[] = ['{"kind":"ConfigMap"}'];
const ref: string = renderRef(objects);
const bytes: Uint8Array = canonical([new TextEncoder().encode(objects[0])]);
const store = new RenderStore(new MemoryBucket());
const stored: string = store.putRender('ns/app', objects);
const back: Uint8Array = store.getRender({ namespace: 'ns', name: 'app' }, stored);
const added: boolean = store.recordHistory('ns/app', { renderRef: ref, syncedAt: { seconds: 0, nanoseconds: 0 } });
const history: HistoryEntry[] = store.listHistory('ns/app');
const page = store.listHistoryPage('ns/app', 10);
const next: string | undefined = page.nextBefore;
const plan: GcPlan = store.gc('ns/app', 10, [], true, { graceSeconds: 0 });
const diff: RenderDiff = diffRenders(bytes, back, 'json');
const shown = showObjects(back)[0]?.text;
const revealed: RenderDiff = store.diffRenders('ns/app', ref, ref, undefined, { showSecrets: true });
const revealedObjects = showObjects(back, 'yaml', { showSecrets: false }).length;
const storedDiff: RenderDiff = core.diffStored(store.bucket, 'ns/app', ref, ref, 'json', {});
const summary = summarizeHistory('ns/app', []).entries;
const yaml: Uint8Array[] = yamlObjects('a: 1\n');
const yref: string = yamlRenderRef(new Uint8Array());
const sorted: string[] = ['b', 'a'].sort(compareKeys);
const folder: Bucket = new FolderBucket('/tmp', { createDir: false });
const traced = record(() => gc(store.bucket, 'ns/app', 1));
const report = replay(traced.trace).matches;
const page2 = listHistoryPage(folder, 'ns/app', 1, next);
const err = new RenderStoreError('bucket', 'x');
const kind: 'not-found' | 'denied' | 'failed' = new BucketError('denied').kind;
const browserRef: string = core.renderRef(objects);
const strict = new RenderStore(new MemoryBucket(), { keyring: [], encryptionRequired: true });
const required: boolean = strict.encryptionRequired;
const strictGet: Uint8Array = core.getRender(store.bucket, 'ns/app', ref, [], { encryptionRequired: true });
// The functions generated from the WIT, typed from its types.
const blame: Wit.ObjectBlame = blameObject(store.bucket, 'ns/app', 'deployment/web', undefined, 'masked');
const blamedAt: bigint = blame.entries[0].syncedAt.seconds;
const intervals: Wit.ImageInterval[] = releaseImages(store.bucket, { namespace: 'ns', name: 'app' });
const until: Wit.SyncTime | undefined = intervals[0]?.until;
const rows: Wit.IndexedObject[] = indexObjects(bytes);
const parsedKeys: Array<Wit.ParsedKey | undefined> = core.parseKeys('ns/app', ['ns/app/renders/x']);
const checked: boolean = core.checkIndex(store.bucket, 'ns/app', [], { encryptionRequired: false }).present;
const outcome: string = outcomeJson({ tag: 'gc', val: { tag: 'err', val: { tag: 'not-found', val: 'x' } } });
const page3: Wit.RenderPage = core.showRenderPage(store.bucket, 'ns/app', ref, 'json', 'masked', 4096n, 1);
// @ts-expect-error: secret values are 'masked' or 'shown'
blameObject(store.bucket, 'ns/app', 'deployment/web', undefined, 'hidden');
// @ts-expect-error: a page's byte budget is a u64: a bigint
core.showRenderPage(store.bucket, 'ns/app', ref, 'json', 'masked', '4096', 1);
// @ts-expect-error: a variant's payload is `val`
outcomeJson({ tag: 'trap', message: 'x' });
// @ts-expect-error: encryptionRequired is a boolean, not text that may read as "no"
new RenderStore(new MemoryBucket(), { encryptionRequired: 'false' });
// @ts-expect-error: the browser entry has no FolderBucket
core.FolderBucket;
// @ts-expect-error: objects are an array
renderRef('{}');
// @ts-expect-error: a form is 'yaml' or 'json'
diffRenders(bytes, back, 'toml');
// @ts-expect-error: showSecrets is a boolean, not text that may read as "yes"
diffRenders(bytes, back, 'yaml', { showSecrets: 'false' });
// @ts-expect-error: the options are an object, not a bare flag
showObjects(back, 'yaml', true);
export { added, history, plan, diff, shown, revealed, revealedObjects, storedDiff, summary, yaml, yref, sorted, report, page2, err, kind, browserRef, required, strictGet, blamedAt, until, rows, parsedKeys, checked, outcome, page3 };
