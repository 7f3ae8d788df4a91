import type { TurnOutcome } from "../core/reply.js";
import type { HistoryEntry, Session } from "../sessions/session.js";
import type { CommitRecord } from "./scheduler-args.js";

/**
 * The session a room's holder committed last. The lease fences every write of the
 * room, so while the holder keeps it nobody else wrote a session since: the next turn
 * starts from this object instead of reading and parsing it again. A takeover (a new
 * claim) starts from what Redis has.
 */
export interface KeptSession {
  session: Session;
  /** The session as stored. */
  json: string;
  /** Local ms when this holder last wrote it (its idle expiry restarted then). */
  writtenAt: number;
}

/** Everything one turn changes in a room. */
export interface TurnChanges {
  session: Session;
  append: HistoryEntry[];
  outcome: TurnOutcome;
  /** `/reset`: the old history goes with the old conversation. */
  resetHistory?: boolean | undefined;
}

/** How long sessions live and how much history a turn keeps. */
export interface CommitSettings {
  idleSeconds: number;
  historyTurns: number;
}

/**
 * A turn's commit as the fenced scripts apply it (fence.lua `apply_commit`), and the
 * session the holder keeps after it. The session is written when it changed, on the
 * first commit of a lease, and when this holder last wrote it half an idle expiry ago
 * (so that a room held for long does not expire under its holder).
 */
export function turnCommit(
  eventId: string,
  changes: TurnChanges,
  kept: KeptSession | undefined,
  settings: CommitSettings,
  now = Date.now(),
): { commit: CommitRecord; kept: KeptSession } {
  const json = JSON.stringify(changes.session);
  const stale = kept === undefined || now - kept.writtenAt > (settings.idleSeconds * 1000) / 2;
  const write = stale || kept.json !== json;
  return {
    commit: {
      ...(write ? { session: json } : {}),
      idleSeconds: settings.idleSeconds,
      append: changes.append.map((e) => JSON.stringify(e)),
      historyCap: historyCap(settings),
      reset: changes.resetHistory ?? false,
      outcome: JSON.stringify(changes.outcome),
      eventId,
    },
    kept: { session: changes.session, json, writtenAt: write ? now : kept.writtenAt },
  };
}

/** How many history entries a turn reads (a person's message and the reply per turn). */
export function historyCap(settings: Pick<CommitSettings, "historyTurns">): number {
  return settings.historyTurns * 2;
}
