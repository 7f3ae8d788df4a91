import { z } from "zod";
import { OnUpdateSchema, SubscribeSchema } from "./proactive.js";
import { RespondSchema } from "./respond.js";
import { roleFields } from "./roles.js";

const MatrixUserIdSchema = z
  .string()
  .regex(/^@[^:]+:.+$/, 'a Matrix user id looks like "@alice:example.org"');

const MatrixRoomSchema = z.strictObject({
  room: z
    .string()
    .regex(
      /^![^:]+:.+$/,
      'must be a room id like "!abc:example.org" (an alias is not enough; Element shows the id under Room settings → Advanced)',
    ),
  namespace: z.string().min(1),
  users: z.array(MatrixUserIdSchema).default([]),
  /** Users at or above this power level are allowed too. */
  powerLevel: z.number().int().optional(),
  /** `mentions`: only mentions of the bot, replies to it and commands; `all`: every message. */
  respond: RespondSchema,
  ...roleFields(MatrixUserIdSchema),
  /** MCP resources whose updates are posted into this room. */
  subscribe: SubscribeSchema,
  /** On an update: `show` the resource, or `ask` the router with it. */
  onUpdate: OnUpdateSchema,
});

/** The `matrix` section: the homeserver, the bot's token and the bound rooms. */
export const MatrixSchema = z.strictObject({
  homeserver: z.url(),
  accessToken: z.string().min(1),
  /** Users whose invites to a configured room are accepted; default: the room's users. */
  inviters: z.array(z.string()).default([]),
  rooms: z.array(MatrixRoomSchema).default([]),
  /**
   * End-to-end encryption: `off` (encrypted rooms are not served), `optional` (encrypted and
   * unencrypted rooms are served), `required` (only encrypted rooms are served).
   */
  encryption: z.enum(["off", "optional", "required"]).default("optional"),
  /** The key the device's crypto store is encrypted with in Redis (`${MATRIX_STORE_KEY}`); no key, no encryption. */
  storeKey: z.string().min(16, "use at least 16 characters (e.g. `openssl rand -base64 32`)").optional(),
  /** How long the device lease lasts: when its owner dies, another process takes the device over after this. */
  deviceLeaseSeconds: z.number().min(2).max(300).default(10),
  /**
   * The bot account's password (`${MATRIX_PASSWORD}`), for the homeserver's user-interactive
   * auth where it asks for it (replacing the cross-signing keys); without it, `roomgate matrix setup` asks.
   */
  password: z.string().min(1).optional(),
  /**
   * The recovery key of the bot account's secret storage (`${MATRIX_RECOVERY_KEY}`, as `roomgate
   * matrix setup` prints it): its cross-signing keys and key backup survive a lost store with it.
   */
  recoveryKey: z
    .string()
    .regex(
      /^\s*([1-9A-HJ-NP-Za-km-z]\s*){40,60}$/,
      "a recovery key is 48 characters of base58 in groups of 4, as `roomgate matrix setup` prints it",
    )
    .optional(),
  /**
   * Whose devices the bot trusts in encrypted rooms: `cross-signed` (Element's "exclude insecure
   * devices"), `tofu` (every device; identities pinned on first use) or `all` (legacy clients).
   */
  trust: z.enum(["cross-signed", "tofu", "all"]).default("cross-signed"),
});
export type MatrixConfig = z.infer<typeof MatrixSchema>;
