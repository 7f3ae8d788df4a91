import type { MatrixClient } from "matrix-bot-sdk";
import { z } from "zod";
import type { Logger } from "../../core/log.js";
import { withMatrixRetry } from "../matrix-retry.js";
import type { RoomLevels } from "../room-levels.js";
import { isAllowed, type RoomBinding } from "../room-policy.js";

const MembersSchema = z.object({
  chunk: z.array(
    z.looseObject({
      state_key: z.string(),
      content: z.looseObject({ membership: z.string() }),
    }),
  ),
});

/** How long a room's member list is used before it is read again (sync also clears it on any change). */
const MEMBERS_FOR_MS = 60_000;

/**
 * Who the bot's encrypted messages in a room are for: the room's members whom its
 * binding allows (listed users, users at or above its power level), plus the person
 * being answered. Only their devices get the bot's room keys, so another member of the
 * room (a stranger to the binding) sees that the bot wrote and cannot read it. Invited
 * members count when the room's history is visible to invited users.
 */
export class RoomAudience {
  private readonly members = new Map<string, { at: number; users: Map<string, string> }>();

  constructor(
    private readonly api: MatrixClient,
    private readonly bindings: ReadonlyMap<string, RoomBinding>,
    /** The rooms' power levels; without them only listed users get the key: fewer readers, never more. */
    private readonly levels: RoomLevels,
    private readonly botUserId: () => string,
    private readonly log: Logger,
  ) {}

  /** Forgets what is known about the room's members (a membership changed). */
  forget(roomId: string): void {
    this.members.delete(roomId);
  }

  /** The users whose devices get the room key for a message in the room to `extra` (e.g. the person answered). */
  async recipients(
    roomId: string,
    historyVisibility: string,
    extra: readonly string[] = [],
  ): Promise<string[]> {
    const users = await this.memberships(roomId);
    const binding = this.bindings.get(roomId);
    const levels = binding?.powerLevel === undefined ? undefined : await this.levels.of(roomId);
    const wanted = new Set(extra);
    const out: string[] = [];
    for (const [userId, membership] of users) {
      if (userId === this.botUserId()) continue;
      const present = membership === "join" || (membership === "invite" && historyVisibility !== "joined");
      if (!present) continue;
      // A room no binding names (the bot is leaving it) has no allowed list: its members are the audience.
      if (!binding || wanted.has(userId) || isAllowed(binding, userId, levels)) out.push(userId);
    }
    return out;
  }

  private async memberships(roomId: string): Promise<Map<string, string>> {
    const cached = this.members.get(roomId);
    if (cached && Date.now() - cached.at < MEMBERS_FOR_MS) return cached.users;
    const path = `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/members`;
    const answer = MembersSchema.parse(
      await withMatrixRetry("room members", () => this.api.doRequest("GET", path), this.log),
    );
    const users = new Map(answer.chunk.map((e) => [e.state_key, e.content.membership]));
    this.members.set(roomId, { at: Date.now(), users });
    return users;
  }
}
