import "fake-indexeddb/auto";
import { deserialize, serialize } from "node:v8";
import { z } from "zod";

// The wasm crypto machine persists into IndexedDB; in Node that is fake-indexeddb, which
// keeps everything in memory. These functions copy its databases out to bytes and back,
// so the store can live in Redis. Only the few IndexedDB calls used here are typed.

interface Req<T> {
  result: T;
  error: unknown;
  onsuccess: (() => void) | null;
  onerror: (() => void) | null;
}
interface OpenReq extends Req<Db> {
  onupgradeneeded: (() => void) | null;
  onblocked: (() => void) | null;
}
interface Cursor {
  primaryKey: unknown;
  value: unknown;
  continue(): void;
}
interface Index {
  keyPath: string | string[];
  unique: boolean;
  multiEntry: boolean;
}
interface ObjectStore {
  keyPath: string | string[] | null;
  autoIncrement: boolean;
  indexNames: ArrayLike<string>;
  index(name: string): Index;
  openCursor(): Req<Cursor | null>;
  put(value: unknown, key?: unknown): Req<unknown>;
  createIndex(
    name: string,
    keyPath: string | string[],
    options: { unique: boolean; multiEntry: boolean },
  ): Index;
}
interface Transaction {
  objectStore(name: string): ObjectStore;
  oncomplete: (() => void) | null;
  onerror: (() => void) | null;
  onabort: (() => void) | null;
  error: unknown;
}
interface Db {
  version: number;
  objectStoreNames: ArrayLike<string>;
  transaction(names: string[], mode: "readonly" | "readwrite"): Transaction;
  createObjectStore(
    name: string,
    options: { keyPath: string | string[] | null; autoIncrement: boolean },
  ): ObjectStore;
  close(): void;
}
interface Factory {
  open(name: string, version?: number): OpenReq;
  deleteDatabase(name: string): Req<unknown> & { onblocked: (() => void) | null };
  databases(): Promise<{ name?: string; version?: number }[]>;
}

const factory = (): Factory => (globalThis as unknown as { indexedDB: Factory }).indexedDB;

const KeyPathSchema = z.union([z.string(), z.array(z.string()), z.null()]);

/** The databases' shape: names (after the prefix), versions, object stores and indexes. */
const SchemaSchema = z.array(
  z.object({
    /** The database's name after the prefix it was dumped under. */
    name: z.string(),
    version: z.number().int().positive(),
    stores: z.array(
      z.object({
        name: z.string(),
        keyPath: KeyPathSchema,
        autoIncrement: z.boolean(),
        indexes: z.array(
          z.object({
            name: z.string(),
            keyPath: z.union([z.string(), z.array(z.string())]),
            unique: z.boolean(),
            multiEntry: z.boolean(),
          }),
        ),
      }),
    ),
  }),
);
type Schema = z.infer<typeof SchemaSchema>;

const RecordsSchema = z.array(z.tuple([z.unknown(), z.unknown()]));

/**
 * A copy of the databases as bytes: their schema, and each object store's records
 * apart (`parts`, by `<database>/<store>`), so that a store that did not change since
 * the last copy need not be written again.
 */
export interface Snapshot {
  schema: Buffer;
  parts: Map<string, Buffer>;
}

const partKey = (database: string, store: string): string => `${database}/${store}`;

function done<T>(req: Req<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

function completed(tx: Transaction): Promise<void> {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error ?? new Error("IndexedDB transaction aborted"));
  });
}

async function readAll(store: ObjectStore): Promise<[unknown, unknown][]> {
  const records: [unknown, unknown][] = [];
  const req = store.openCursor();
  await new Promise<void>((resolve, reject) => {
    req.onsuccess = () => {
      const cursor = req.result;
      if (!cursor) return resolve();
      records.push([cursor.primaryKey, cursor.value]);
      cursor.continue();
    };
    req.onerror = () => reject(req.error);
  });
  return records;
}

/** Names of this process's IndexedDB databases whose name starts with `prefix`. */
async function databaseNames(prefix: string): Promise<{ name: string; version: number }[]> {
  const all = await factory().databases();
  return all.flatMap((d) => (d.name?.startsWith(prefix) ? [{ name: d.name, version: d.version ?? 1 }] : []));
}

/**
 * Every database whose name starts with `prefix`, with its schema and records (v8
 * serialisation keeps binary values as they are); names are kept without the prefix,
 * so a snapshot can be restored under another one. Each database is read in one
 * transaction, so the copy is consistent with the last completed write.
 */
export async function snapshotDatabases(prefix: string): Promise<Snapshot> {
  const schema: Schema = [];
  const parts = new Map<string, Buffer>();
  for (const { name } of await databaseNames(prefix)) {
    const db = await done(factory().open(name));
    const suffix = name.slice(prefix.length);
    try {
      const names = Array.from(db.objectStoreNames);
      const stores: Schema[number]["stores"] = [];
      if (names.length > 0) {
        const tx = db.transaction(names, "readonly");
        for (const storeName of names) {
          const store = tx.objectStore(storeName);
          const indexes = Array.from(store.indexNames).map((indexName) => {
            const index = store.index(indexName);
            return {
              name: indexName,
              keyPath: index.keyPath,
              unique: index.unique,
              multiEntry: index.multiEntry,
            };
          });
          stores.push({
            name: storeName,
            keyPath: store.keyPath,
            autoIncrement: store.autoIncrement,
            indexes,
          });
          parts.set(partKey(suffix, storeName), serialize(await readAll(store)));
        }
        await completed(tx);
      }
      schema.push({ name: suffix, version: db.version, stores });
    } finally {
      db.close();
    }
  }
  return { schema: serialize(schema), parts };
}

/** Deletes every database whose name starts with `prefix` (no connection may be open). */
export async function deleteDatabases(prefix: string): Promise<void> {
  for (const { name } of await databaseNames(prefix)) {
    const req = factory().deleteDatabase(name);
    req.onblocked = () => undefined;
    await done(req);
  }
}

/**
 * Recreates the databases of a snapshot under `prefix`, replacing any of the same name,
 * with their version, object stores, indexes and records (a store without a part is
 * empty). Throws on bytes that are not a snapshot.
 */
export async function restoreDatabases(snapshot: Snapshot, prefix: string): Promise<void> {
  for (const database of SchemaSchema.parse(deserialize(snapshot.schema))) {
    const name = prefix + database.name;
    await done(factory().deleteDatabase(name));
    const open = factory().open(name, database.version);
    open.onupgradeneeded = () => {
      const db = open.result;
      for (const s of database.stores) {
        const store = db.createObjectStore(s.name, { keyPath: s.keyPath, autoIncrement: s.autoIncrement });
        for (const i of s.indexes)
          store.createIndex(i.name, i.keyPath, { unique: i.unique, multiEntry: i.multiEntry });
      }
    };
    const db = await done(open);
    try {
      const names = database.stores.map((s) => s.name);
      if (names.length === 0) continue;
      const tx = db.transaction(names, "readwrite");
      for (const s of database.stores) {
        const store = tx.objectStore(s.name);
        const part = snapshot.parts.get(partKey(database.name, s.name));
        const records = part ? RecordsSchema.parse(deserialize(part)) : [];
        // In-line keys live in the value; out-of-line ones are given with it.
        for (const [key, value] of records) store.put(value, s.keyPath === null ? key : undefined);
      }
      await completed(tx);
    } finally {
      db.close();
    }
  }
}
