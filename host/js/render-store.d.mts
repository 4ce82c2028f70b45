// Types of render-store.mjs, the Node.js entry: everything of core.d.mts and FolderBucket.

import type { Bucket, Keyring, ObjectMeta } from './core.mjs';

export * from './core.mjs';

/** The keyring in a keyring file, with the Rust host's checks (a regular file of this user or root, mode 0600 or 0400), parsed by the component. */
export function readKeyringFile(path: string): Keyring;

/**
 * The file:// layout on a local folder, with the Rust host's safety rules: nothing
 * beneath the root is reached through a symbolic link, files 0600 and folders 0700,
 * puts through an exclusive staging file renamed over the key.
 */
export class FolderBucket implements Bucket {
  /** `folder`: a path or a file:// URL; it must exist unless `createDir`. */
  constructor(folder: string | URL, options?: { createDir?: boolean; warn?: (message: string) => void });
  /** The folder, links resolved. */
  readonly root: string;
  /** Closes the root's descriptor. */
  close(): void;
  get(key: string): Uint8Array;
  put(key: string, value: Uint8Array): void;
  exists(key: string): number | null;
  list(prefix: string): ObjectMeta[];
  delete(key: string): void;
}
