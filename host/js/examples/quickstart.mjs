import { MemoryBucket, RenderStore, renderRef } from '@convoy/render-store';

const objects = ['{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app"},"data":{"k":"v"}}'];
const ref = renderRef(objects); // what the controller computes
const store = new RenderStore(new MemoryBucket()); // or new FolderBucket('/var/renders')
if (store.putRender('default/app', objects) !== ref) throw new Error('renderRef differs');
store.recordHistory('default/app', { renderRef: ref, syncedAt: { seconds: 1767225600, nanoseconds: 0 }, summary: 'sync' });
console.log(ref, new TextDecoder().decode(store.getRender('default/app', ref)).trim());
const plan = store.gc('default/app', 1, [], false, { graceSeconds: 0 });
console.log('gc kept', plan.keepRenders.length, 'render(s), deleted', plan.deleteRenders.length);
