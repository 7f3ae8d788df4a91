import { HttpError, type Call, type Reply, type StandinRouter } from "./matrix-standin-http.js";

interface SessionData {
  first_message_index: number;
  forwarded_count: number;
  is_verified: boolean;
  session_data: Record<string, unknown>;
}

interface Backup {
  version: string;
  algorithm: string;
  auth_data: Record<string, unknown>;
  /** roomId → sessionId → the backed-up key. */
  rooms: Map<string, Map<string, SessionData>>;
  etag: number;
}

const C = "/_matrix/client/v3";

/** Whether `fresh` should replace `old`, by the spec's rule: verified first, then the lower index, then fewer forwards. */
function better(fresh: SessionData, old: SessionData | undefined): boolean {
  if (!old) return true;
  if (fresh.is_verified !== old.is_verified) return fresh.is_verified;
  if (fresh.first_message_index !== old.first_message_index)
    return fresh.first_message_index < old.first_message_index;
  return fresh.forwarded_count < old.forwarded_count;
}

/**
 * Server-side key backup on the stand-in (`/room_keys/*`), with the spec's rules: one
 * current version per user (a write to another version is refused with
 * `M_WRONG_ROOM_KEYS_VERSION`), a stored key replaced only by a better one, counts and
 * etags in the answers, and 404 `M_NOT_FOUND` when there is no backup.
 */
export class StandinBackup {
  private readonly backups = new Map<string, Backup[]>();

  routes(router: StandinRouter): void {
    const route = router.add.bind(router);
    route("POST", `${C}/room_keys/version`, (c) => this.create(c));
    route("GET", `${C}/room_keys/version`, (c) => this.info(c, undefined));
    route("GET", `${C}/room_keys/version/:version`, (c) => this.info(c, c.params[0]));
    route("DELETE", `${C}/room_keys/version/:version`, (c) => this.remove(c));
    route("PUT", `${C}/room_keys/keys`, (c) => this.put(c));
    route("GET", `${C}/room_keys/keys`, (c) => this.get(c));
  }

  /** The user's current backup (tests read what was backed up). */
  current(
    userId: string,
  ): { version: string; sessions: number; auth_data: Record<string, unknown> } | undefined {
    const backup = this.backups.get(userId)?.at(-1);
    if (!backup) return undefined;
    const sessions = [...backup.rooms.values()].reduce((n, room) => n + room.size, 0);
    return { version: backup.version, sessions, auth_data: backup.auth_data };
  }

  private list(userId: string): Backup[] {
    let list = this.backups.get(userId);
    if (!list) this.backups.set(userId, (list = []));
    return list;
  }

  private create(c: Call): Reply {
    const body = c.json as { algorithm?: unknown; auth_data?: unknown };
    if (typeof body.algorithm !== "string" || typeof body.auth_data !== "object" || body.auth_data === null) {
      throw new HttpError(400, "M_BAD_JSON", "algorithm and auth_data are required");
    }
    const list = this.list(c.userId);
    const version = String(list.length + 1);
    list.push({
      version,
      algorithm: body.algorithm,
      auth_data: body.auth_data as Record<string, unknown>,
      rooms: new Map(),
      etag: 0,
    });
    return { json: { version } };
  }

  private find(userId: string, version: string | undefined): Backup {
    const list = this.list(userId);
    const backup = version === undefined ? list.at(-1) : list.find((b) => b.version === version);
    if (!backup) throw new HttpError(404, "M_NOT_FOUND", "No backup found");
    return backup;
  }

  private summary(backup: Backup): Record<string, unknown> {
    const count = [...backup.rooms.values()].reduce((n, room) => n + room.size, 0);
    return {
      version: backup.version,
      algorithm: backup.algorithm,
      auth_data: backup.auth_data,
      count,
      etag: String(backup.etag),
    };
  }

  private info(c: Call, version: string | undefined): Reply {
    return { json: this.summary(this.find(c.userId, version)) };
  }

  private remove(c: Call): Reply {
    const list = this.list(c.userId);
    const at = list.findIndex((b) => b.version === c.params[0]);
    if (at < 0) throw new HttpError(404, "M_NOT_FOUND", "No backup found");
    list.splice(at, 1);
    return { json: {} };
  }

  private put(c: Call): Reply {
    const version = c.query.get("version") ?? "";
    const current = this.list(c.userId).at(-1);
    if (!current) throw new HttpError(404, "M_NOT_FOUND", "No backup found");
    if (current.version !== version) {
      throw new HttpError(403, "M_WRONG_ROOM_KEYS_VERSION", "Wrong backup version.", {
        current_version: current.version,
      });
    }
    const rooms = (c.json.rooms ?? {}) as Record<string, { sessions?: Record<string, SessionData> }>;
    for (const [roomId, room] of Object.entries(rooms)) {
      let stored = current.rooms.get(roomId);
      if (!stored) current.rooms.set(roomId, (stored = new Map()));
      for (const [sessionId, data] of Object.entries(room.sessions ?? {})) {
        if (better(data, stored.get(sessionId))) {
          stored.set(sessionId, data);
          current.etag += 1;
        }
      }
    }
    const { count, etag } = this.summary(current);
    return { json: { count, etag } };
  }

  private get(c: Call): Reply {
    const backup = this.find(c.userId, c.query.get("version") ?? undefined);
    const rooms: Record<string, { sessions: Record<string, SessionData> }> = {};
    for (const [roomId, sessions] of backup.rooms) rooms[roomId] = { sessions: Object.fromEntries(sessions) };
    return { json: { rooms } };
  }
}
