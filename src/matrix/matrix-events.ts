import { z } from "zod";

/** `m.relates_to` of a message or reaction: replies, threads, annotations and edits. */
export const RelatesToSchema = z.looseObject({
  rel_type: z.string().optional(),
  event_id: z.string().optional(),
  key: z.string().optional(),
  is_falling_back: z.boolean().optional(),
  "m.in_reply_to": z.looseObject({ event_id: z.string() }).optional(),
});

/** A room event as sync and `/event` deliver it, parsed where it crosses the wire. */
export const RoomEventSchema = z.looseObject({
  event_id: z.string(),
  type: z.string(),
  sender: z.string(),
  origin_server_ts: z.number(),
  state_key: z.string().optional(),
  content: z.record(z.string(), z.unknown()).default({}),
});
export type RoomEvent = z.infer<typeof RoomEventSchema>;

/** The `file` object of an encrypted attachment (spec: EncryptedFile), as far as it is read. */
export const EncryptedFileSchema = z.looseObject({
  url: z.string(),
  key: z.looseObject({ k: z.string() }),
  iv: z.string(),
  hashes: z.looseObject({ sha256: z.string() }),
  v: z.string().optional(),
});
export type EncryptedFile = z.infer<typeof EncryptedFileSchema>;

/** The content of an `m.room.message` event, as far as the adapter reads it. */
export const MessageContentSchema = z.looseObject({
  msgtype: z.string(),
  body: z.string().default(""),
  "m.relates_to": RelatesToSchema.optional(),
  "m.new_content": z.unknown().optional(),
  url: z.string().optional(),
  file: z.unknown().optional(),
  filename: z.string().optional(),
  info: z.looseObject({ mimetype: z.string().optional(), size: z.number().optional() }).optional(),
});
export type MessageContent = z.infer<typeof MessageContentSchema>;

/** The content of `m.room.power_levels`, as far as deciding who may talk needs it. */
export const PowerLevelsSchema = z.looseObject({
  users: z.record(z.string(), z.number()).default({}),
  users_default: z.number().default(0),
});
export type PowerLevels = z.infer<typeof PowerLevelsSchema>;

const EventListSchema = z.object({ events: z.array(z.unknown()).default([]) });

/** The joined rooms of a sync response, as far as the receiver looks at them before their events. */
export const SyncJoinedRoomsSchema = z.object({
  rooms: z
    .object({
      join: z
        .record(
          z.string(),
          z.object({ timeline: EventListSchema.optional(), state: EventListSchema.optional() }),
        )
        .default({}),
    })
    .default({ join: {} }),
});
