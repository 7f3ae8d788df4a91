import type { RedisClient } from "../sessions/redis-connection.js";
import type { AuditLog } from "../sessions/audit-log.js";
import type { Keys } from "../sessions/keys.js";
import type { PairedUsers } from "../sessions/paired-users.js";
import type { PairingCodes } from "../sessions/pairing-codes.js";
import { edgeTexts } from "../edge/edge-texts.js";
import { StrangerGate } from "../edge/stranger-gate.js";

/** A `/pair` message: the words after the command (a bot mention allowed), or undefined for any other text. */
export function pairingCodeIn(text: string): string | undefined {
  const match = /^\/pair(?:@\S+)?(?:\s+([\s\S]*))?$/i.exec(text.trim());
  if (!match) return undefined;
  return (match[1] ?? "").trim();
}

/** Who sent a `/pair`, and which bindings it may add them to from where it was sent. */
export interface PairingRequest {
  senderId: string;
  name?: string;
  room: string;
  /** True for a binding a code sent here may open (the bot's direct chats, or this group or room). */
  accepts(binding: string): boolean;
}

/**
 * `/pair <code>` at the edge, before the allowlist (a stranger is who pairs): the code
 * is checked without being used, used once if it opens a binding reachable from here,
 * and the sender is added to that binding's users in Redis, with an audit entry. A
 * sender with too many wrong codes is refused without a look, told so once an hour.
 */
export class PairingGate {
  private readonly strangers: StrangerGate;

  constructor(
    private readonly deps: {
      codes: PairingCodes;
      paired: PairedUsers;
      audit?: AuditLog;
      redis: RedisClient;
      keys: Keys;
    },
  ) {
    this.strangers = new StrangerGate(deps.redis);
  }

  /** The line to answer with, or undefined when nothing is to be said (a repeat while blocked). */
  async redeem(request: PairingRequest, code: string): Promise<string | undefined> {
    const { codes, paired, audit, keys } = this.deps;
    const strangers = this.strangers;
    if (code === "") return edgeTexts.pairingUsage;
    if (await codes.blocked(request.senderId)) {
      const notice = keys.notice(request.room, "pairing-blocked", request.senderId);
      return (await strangers.claim(notice)) ? edgeTexts.pairingBlocked : undefined;
    }
    const found = await codes.peek(code);
    if (!found) {
      await codes.failed(request.senderId);
      return edgeTexts.pairingInvalid;
    }
    if (!request.accepts(found.binding)) return edgeTexts.pairingElsewhere;
    const used = await codes.use(code);
    if (!used) return edgeTexts.pairingInvalid;
    const added = await paired.add(used.binding, request.senderId, {
      pairedAt: Date.now(),
      codeBy: used.by,
      ...(request.name ? { name: request.name } : {}),
    });
    await audit?.record({
      type: "pairing.added",
      at: Date.now(),
      binding: used.binding,
      room: request.room,
      user: request.senderId,
      by: request.senderId,
      reason: `code made by ${used.by}`,
    });
    return added ? edgeTexts.paired : edgeTexts.alreadyPaired;
  }
}
