// The npm package's side of `cargo bench -p render-store-tests --bench packages`: for each
// case file DIR/N.jsonl (one compact JSON object a line), the median time in seconds of
// renderRef, putRender (into a fresh MemoryBucket) and getRender, printed as JSON
// {N: {render_ref, put_render, get_render}}. Same timing rule as the bench's Rust side.
//
//   node host/js/bench/packages.mjs DIR N...

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MemoryBucket, RenderStore, renderRef } from '@convoy/render-store';

function median(minSeconds, f) {
  let start = performance.now();
  for (let warm = 0; warm < 1 || ((performance.now() - start) / 1e3 < minSeconds && warm < 10000); warm++) f();
  start = performance.now();
  const runs = [];
  while (runs.length < 3 || ((performance.now() - start) / 1e3 < minSeconds && runs.length < 200)) {
    const t = performance.now();
    f();
    runs.push((performance.now() - t) / 1e3);
  }
  runs.sort((a, b) => a - b);
  return runs[Math.floor(runs.length / 2)];
}

const [dir, ...cases] = process.argv.slice(2);
const out = {};
for (const n of cases) {
  const text = readFileSync(join(dir, `${n}.jsonl`));
  // Objects as bytes, as a caller holding files has them.
  const objects = [];
  for (let start = 0; start < text.length; ) {
    const end = text.indexOf(10, start);
    objects.push(text.subarray(start, end));
    start = end + 1;
  }
  const release = 'bench/app';
  const store = new RenderStore(new MemoryBucket());
  const ref = store.putRender(release, objects);
  out[n] = {
    render_ref: median(0.5, () => renderRef(objects)),
    put_render: median(0.5, () => new RenderStore(new MemoryBucket()).putRender(release, objects)),
    get_render: median(0.5, () => store.getRender(release, ref)),
  };
}
process.stdout.write(JSON.stringify(out));
