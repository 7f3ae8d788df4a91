import { z } from "zod";
import { RoomgateError } from "../../core/errors.js";
import { refusalOf } from "../matrix-retry.js";
import type { HomeserverCall } from "./outgoing-requests.js";

/** The 401 body of user-interactive auth. */
const ChallengeSchema = z.looseObject({
  session: z.string().optional(),
  flows: z.array(z.looseObject({ stages: z.array(z.string()) })).default([]),
  params: z.record(z.string(), z.unknown()).default({}),
});

/** The stages by which an OAuth (MAS) homeserver asks for a browser approval (MSC4312, and its unstable name). */
const APPROVAL_STAGES = ["m.oauth", "org.matrix.cross_signing_reset"];

/** The homeserver asks the account to approve the request in a browser (MAS): where. */
export class ApprovalNeededError extends RoomgateError {
  constructor(readonly url: string | undefined) {
    super(
      "matrix: the homeserver's account service must approve replacing the bot's cross-signing keys: " +
        `sign in there as the bot and approve the reset${url ? ` (${url})` : ""}, then run \`roomgate matrix setup\` ` +
        "within the few minutes the approval lasts (docs/matrix.md, Homeservers with MAS)",
    );
  }
}

/** The homeserver wants the account password and none is configured. */
export class PasswordNeededError extends RoomgateError {
  constructor(what: string) {
    super(
      `matrix: the homeserver asks for the bot's password to ${what}: set matrix.password (MATRIX_PASSWORD), ` +
        "or run `roomgate matrix setup` once, which asks for it",
    );
  }
}

/** What user-interactive auth needs: the account and, where the homeserver asks for it, its password. */
export interface UserAuth {
  userId: string;
  password?: (() => Promise<string | undefined>) | undefined;
}

function challengeOf(err: unknown): z.infer<typeof ChallengeSchema> | null {
  const { status, body } = refusalOf(err);
  if (status !== 401) return null;
  const parsed = ChallengeSchema.safeParse(body);
  return parsed.success && parsed.data.flows.length > 0 ? parsed.data : null;
}

/**
 * POSTs a request that may need user-interactive auth: first with the access token alone
 * (Synapse takes a first cross-signing upload so, MSC3967), then, when the homeserver
 * answers with a password flow, once more with the account password. An OAuth (MAS)
 * homeserver's approval stage becomes ApprovalNeededError with the URL it gives.
 */
export async function postWithUserAuth(
  call: HomeserverCall,
  path: string,
  body: Record<string, unknown>,
  auth: UserAuth,
  what: string,
): Promise<unknown> {
  try {
    return await call("POST", path, body);
  } catch (err) {
    const challenge = challengeOf(err);
    if (!challenge) throw err;
    const stages = new Set(challenge.flows.flatMap((f) => f.stages));
    const password = stages.has("m.login.password") ? await auth.password?.() : undefined;
    if (password !== undefined) {
      return call("POST", path, {
        ...body,
        auth: {
          type: "m.login.password",
          identifier: { type: "m.id.user", user: auth.userId },
          password,
          ...(challenge.session ? { session: challenge.session } : {}),
        },
      });
    }
    const approval = APPROVAL_STAGES.find((s) => stages.has(s));
    if (approval) {
      const url = (challenge.params[approval] as { url?: unknown } | undefined)?.url;
      throw new ApprovalNeededError(typeof url === "string" ? url : undefined);
    }
    throw new PasswordNeededError(what);
  }
}
