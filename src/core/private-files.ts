import { chmodSync, lstatSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** Mode of every folder roomgate keeps state in: the service user only. */
export const PRIVATE_DIR_MODE = 0o700;
/** Mode of every file roomgate (or its embedded Redis) writes there. */
export const PRIVATE_FILE_MODE = 0o600;
/** The umask that makes a process create only private files and folders. */
export const PRIVATE_UMASK = 0o077;

/** Creates `dir` (and missing parents) as a private folder, and makes it private if it already existed. */
export function privateDir(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  chmodSync(dir, PRIVATE_DIR_MODE);
  return dir;
}

/**
 * Makes a folder and everything in it private (0700 folders, 0600 files): state left
 * by an older version, or by a Redis that ran without a private umask, is closed
 * before anything new is written. Symbolic links are left alone, never followed.
 */
export function privatizeTree(root: string): void {
  const stat = lstatSync(root, { throwIfNoEntry: false });
  if (!stat || stat.isSymbolicLink()) return;
  if (!stat.isDirectory()) {
    if ((stat.mode & 0o777) !== PRIVATE_FILE_MODE) chmodSync(root, PRIVATE_FILE_MODE);
    return;
  }
  if ((stat.mode & 0o777) !== PRIVATE_DIR_MODE) chmodSync(root, PRIVATE_DIR_MODE);
  for (const entry of readdirSync(root)) privatizeTree(join(root, entry));
}

/**
 * Runs `start` (which must spawn synchronously) with the private umask, so that what a
 * child process creates (Redis' append-only folder and files) is private from the
 * first byte. The umask is the parent's for the instant of the fork, then restored.
 */
export function withPrivateUmask<T>(start: () => T): T {
  const previous = process.umask(PRIVATE_UMASK);
  try {
    return start();
  } finally {
    process.umask(previous);
  }
}
